package org.cpi2.flink.stream;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.TaskClass;
import org.cpi2.wire.Wire;
import org.junit.jupiter.api.Test;

class DecodeFunctionTest {
  private static final Wire<CpiSample> WIRE = Wire.of(CpiSample.class);

  private static OneInputStreamOperatorTestHarness<RawRecord, CpiSample> harness()
      throws Exception {
    return ProcessFunctionTestHarnesses.forProcessFunction(
        new DecodeFunction<>(CpiSample.class, "test", Validators::sample));
  }

  private static byte[] bytes(CpiSample s) {
    return WIRE.encode(s);
  }

  @Test
  void goodRecordsPassBadOnesBecomeDeadLetters() throws Exception {
    var h = harness();
    CpiSample good = Fixtures.sample("h1", "web/0", TaskClass.BATCH, 60_000_000L, 1.2, 0.5);
    byte[] unknown = bytes(good);
    unknown[2] ^= 0x5a; // another fingerprint: a writer schema nobody published
    CpiSample negative = Fixtures.sample("h1", "web/0", TaskClass.BATCH, 60_000_000L, 1.2, -1.0);
    h.processElement(RawRecord.of("cpi2.samples", 0, 1, null, bytes(good)), 0);
    h.processElement(RawRecord.of("cpi2.samples", 0, 2, null, "not avro at all".getBytes()), 0);
    h.processElement(RawRecord.of("cpi2.samples", 1, 3, null, unknown), 0);
    h.processElement(RawRecord.of("cpi2.samples", 1, 4, null, bytes(negative)), 0);
    h.processElement(RawRecord.of("cpi2.samples", 1, 5, null, null), 0);
    assertEquals(List.of(good), h.extractOutputValues());
    List<DeadLetter> dead =
        h.getSideOutput(RecordTypes.DEAD_LETTERS).stream().map(r -> r.getValue()).toList();
    assertEquals(4, dead.size());
    assertEquals(List.of(2L, 3L, 4L, 5L), dead.stream().map(DeadLetter::getOffset).toList());
    assertTrue(
        dead.get(0).getReason().startsWith("not Avro single-object encoding"),
        dead.get(0).getReason());
    assertTrue(
        dead.get(1).getReason().startsWith("unknown writer schema"), dead.get(1).getReason());
    assertTrue(dead.get(2).getReason().contains("invalid cpu_usage"), dead.get(2).getReason());
    assertTrue(dead.get(3).getReason().contains("null"), dead.get(3).getReason());
    assertEquals(1, dead.get(1).getPartition());
    assertEquals("cpi2.samples", dead.get(1).getSourceTopic());
    ByteBuffer payload = dead.get(1).getPayload();
    byte[] got = new byte[payload.remaining()];
    payload.duplicate().get(got);
    assertArrayEquals(unknown, got);
    h.close();
  }

  @Test
  void theFastPathReadsWhatWireReadsAndLeavesTheRestToIt() throws Exception {
    var fast = new DecodeFunction.FastPath<CpiSample>(WIRE.schema());
    java.util.Random r = new java.util.Random(3);
    for (int i = 0; i < 50; i++) {
      CpiSample s =
          org.cpi2.flink.types.CpiSampleSerializerTest.filled(new CpiSample(), r, i % 3 == 0);
      byte[] b = bytes(s);
      CpiSample got = fast.decode(b);
      assertEquals(WIRE.decode(b), got);
      assertEquals(s, got);
    }
    byte[] good = bytes(Fixtures.sample("h1", "web/0", TaskClass.BATCH, 60_000_000L, null, 0.5));
    byte[] unknown = good.clone();
    unknown[9] ^= 1;
    assertEquals(null, fast.decode(unknown));
    assertEquals(null, fast.decode(java.util.Arrays.copyOf(good, good.length - 3))); // truncated
    assertEquals(null, fast.decode(java.util.Arrays.copyOf(good, 9)));
    assertEquals(null, fast.decode(null));

    // A truncated message of the current schema still gets Wire's reason.
    var h = harness();
    h.processElement(
        RawRecord.of("cpi2.samples", 0, 1, null, java.util.Arrays.copyOf(good, good.length - 3)),
        0);
    DeadLetter dead = h.getSideOutput(RecordTypes.DEAD_LETTERS).poll().getValue();
    assertTrue(dead.getReason().startsWith("malformed CpiSample payload"), dead.getReason());
    h.close();
  }
}
