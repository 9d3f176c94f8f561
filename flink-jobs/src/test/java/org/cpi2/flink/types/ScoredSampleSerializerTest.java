package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class ScoredSampleSerializerTest {
  /** Every instance field set by reflection, so a field added to ScoredSample is covered. */
  static ScoredSample filled(Random r) throws Exception {
    ScoredSample s = new ScoredSample();
    for (Field f : ScoredSample.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        continue;
      }
      Class<?> t = f.getType();
      if (t == String.class) {
        f.set(s, r.nextInt(5) == 0 ? null : "v" + r.nextInt() + "|ü");
      } else if (t == TaskClass.class) {
        f.set(
            s, r.nextInt(5) == 0 ? null : TaskClass.values()[r.nextInt(TaskClass.values().length)]);
      } else if (t == boolean.class) {
        f.setBoolean(s, r.nextBoolean());
      } else if (t == long.class) {
        f.setLong(s, r.nextLong());
      } else if (t == double.class) {
        f.setDouble(s, r.nextInt(7) == 0 ? Double.NaN : r.nextGaussian() * 10);
      } else if (t == SpecVerdict.class) {
        f.set(
            s,
            r.nextInt(4) == 0
                ? null
                : new SpecVerdict(
                    r.nextBoolean(),
                    r.nextGaussian(),
                    r.nextDouble(),
                    r.nextInt(7) == 0 ? Double.NaN : r.nextDouble() * 3));
      } else {
        throw new AssertionError("ScoredSampleSerializer does not know " + t + " " + f.getName());
      }
    }
    return s;
  }

  static void assertSameFields(ScoredSample a, ScoredSample b) throws Exception {
    for (Field f : ScoredSample.class.getDeclaredFields()) {
      if (!Modifier.isStatic(f.getModifiers())) {
        assertEquals(f.get(a), f.get(b), f.getName());
      }
    }
  }

  @Test
  void typeInformationOfTheClassUsesIt() {
    assertInstanceOf(
        ScoredSampleSerializer.class,
        TypeInformation.of(ScoredSample.class).createSerializer(null));
  }

  @Test
  void everyFieldSurvivesARoundTripAndACopy() throws Exception {
    Random r = new Random(7);
    ScoredSampleSerializer ser = ScoredSampleSerializer.INSTANCE;
    for (int i = 0; i < 200; i++) {
      ScoredSample s = filled(r);
      DataOutputSerializer out = new DataOutputSerializer(64);
      ser.serialize(s, out);
      ser.serialize(s, out);
      DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
      assertSameFields(s, ser.deserialize(in));
      assertSameFields(s, ser.deserialize(in));
      assertEquals(0, in.available());
      ScoredSample copy = ser.copy(s);
      assertNotSame(s, copy);
      assertSameFields(s, copy);
    }
  }

  /**
   * The bytes of a judged sample and of one waiting for its spec (the detector's state), as the
   * build with flat spec fields (before SpecVerdict) wrote them: its savepoints restore into this
   * one.
   */
  @Test
  void theBytesAreTheFormerFlatFieldsOnes() throws Exception {
    String[] former = {
      "0268067765622f300477656202700642415443480100000000039387003ff40000000000003fe000"
          + "00000000001a3ff00000000000003fc00000000000003ff4000000000000",
      "0268067765622f300477656202700642415443480100000000039387003ff40000000000003fe000"
          + "000000000000000000000000000000000000000000000000000000000000"
    };
    for (int i = 0; i < former.length; i++) {
      ScoredSample s = new ScoredSample();
      s.host = "h";
      s.task = "web/0";
      s.job = "web";
      s.platform = "p";
      s.taskClass = TaskClass.BATCH;
      s.isProtected = true;
      s.timeUs = 60_000_000L;
      s.cpi = 1.25;
      s.cpu = 0.5;
      if (i == 0) {
        s.outlier = true;
        s.spec = new SpecVerdict(true, 1.0, 0.125, 1.25);
      }
      DataOutputSerializer out = new DataOutputSerializer(64);
      ScoredSampleSerializer.INSTANCE.serialize(s, out);
      assertEquals(former[i], HexFormat.of().formatHex(out.getCopyOfBuffer()));
      assertSameFields(
          s,
          ScoredSampleSerializer.INSTANCE.deserialize(
              new DataInputDeserializer(HexFormat.of().parseHex(former[i]))));
    }
  }

  @Test
  void aSampleNotJudgedYetKeepsWhatScoredSampleOfSetsAndNothingElse() throws Exception {
    ScoredSampleSerializer ser = ScoredSampleSerializer.INSTANCE;
    ScoredSample unset = new ScoredSample();
    List<ScoredSample> fromSamples = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      fromSamples.add(
          ScoredSample.of(CpiSampleSerializerTest.filled(new CpiSample(), new Random(i), false)));
    }
    // The fields ScoredSample.of sets: those that differ from unset in some of 50 random samples.
    List<Field> sampleFields = new ArrayList<>();
    for (Field f : ScoredSample.class.getDeclaredFields()) {
      for (ScoredSample x : fromSamples) {
        if (!Modifier.isStatic(f.getModifiers()) && !Objects.equals(f.get(x), f.get(unset))) {
          sampleFields.add(f);
          break;
        }
      }
    }
    assertTrue(sampleFields.size() >= 9, "sample fields: " + sampleFields);
    Random r = new Random(11);
    for (ScoredSample fromSample : fromSamples) {
      ScoredSample judged = filled(r); // judged, with fromSample's sample fields
      for (Field f : sampleFields) {
        f.set(judged, f.get(fromSample));
      }
      DataOutputSerializer out = new DataOutputSerializer(64);
      ser.serializeSample(judged, out);
      DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
      assertSameFields(fromSample, ser.deserializeSample(in));
      assertEquals(0, in.available());
    }
  }
}
