package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.util.List;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class HostEventSerializerTest {
  @Test
  void typeInformationOfTheClassUsesIt() {
    assertInstanceOf(
        HostEventSerializer.class, TypeInformation.of(HostEvent.class).createSerializer(null));
  }

  @Test
  void eachKindOfEventSurvivesARoundTripAndACopy() throws Exception {
    TypeSerializer<HostEvent> ser = new HostEventSerializer().duplicate();
    HostEvent sample =
        HostEvent.of(Fixtures.sample("h1", "web/0", TaskClass.BATCH, 60_000_000L, 1.5, 0.7));
    HostEvent scored = HostEvent.of(ScoredSampleSerializerTest.filled(new Random(3)));
    HostEvent action = HostEvent.of(Fixtures.applied("a1", "h1", "video/7", "web/0", 1, 2));
    DataOutputSerializer out = new DataOutputSerializer(64);
    for (HostEvent e : List.of(sample, scored, action)) {
      ser.serialize(e, out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    for (HostEvent e : List.of(sample, scored, action)) {
      for (HostEvent back : List.of(ser.deserialize(in), ser.copy(e))) {
        assertEquals(e.action, back.action);
        for (ScoredSample[] pair :
            List.of(
                new ScoredSample[] {e.sample, back.sample},
                new ScoredSample[] {e.scored, back.scored})) {
          if (pair[0] == null) {
            assertNull(pair[1]);
          } else {
            ScoredSampleSerializerTest.assertSameFields(pair[0], pair[1]);
          }
        }
        assertEquals(e.host(), back.host());
      }
    }
    assertEquals(0, in.available());
  }

  @Test
  void anEmptyEventIsRefused() {
    assertThrows(
        IOException.class,
        () -> new HostEventSerializer().serialize(new HostEvent(), new DataOutputSerializer(8)));
  }
}
