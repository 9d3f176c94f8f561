package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Objects;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.cpi2.flink.spec.SpecInput;
import org.junit.jupiter.api.Test;

class SpecInputSerializerTest {
  @Test
  void typeInformationOfTheClassUsesIt() {
    assertInstanceOf(
        SpecInputSerializer.class, TypeInformation.of(SpecInput.class).createSerializer(null));
  }

  /** Every instance field set by reflection, so a field added to SpecInput is covered. */
  @Test
  void everyFieldSurvivesARoundTripAndACopy() throws Exception {
    Random r = new Random(11);
    SpecInput s = new SpecInput();
    for (Field f : SpecInput.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        continue;
      }
      Class<?> t = f.getType();
      if (t == String.class) {
        f.set(s, "v" + r.nextInt() + "|ü");
      } else if (t == long.class) {
        f.setLong(s, r.nextLong());
      } else if (t == double.class) {
        f.setDouble(s, r.nextGaussian());
      } else if (t == String[].class) {
        f.set(s, new String[] {"web/" + r.nextInt(), "db/ü" + r.nextInt()});
      } else if (t == long[].class) {
        f.set(s, new long[] {r.nextLong(), r.nextLong()});
      } else if (t == double[].class) {
        f.set(s, new double[] {r.nextGaussian(), r.nextGaussian()});
      } else {
        throw new AssertionError("SpecInputSerializer does not know " + t + " " + f.getName());
      }
    }
    DataOutputSerializer out = new DataOutputSerializer(64);
    SpecInputSerializer.INSTANCE.serialize(s, out);
    SpecInput back =
        SpecInputSerializer.INSTANCE.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    SpecInput copy = SpecInputSerializer.INSTANCE.copy(s);
    for (Field f : SpecInput.class.getDeclaredFields()) {
      if (!Modifier.isStatic(f.getModifiers())) {
        assertTrue(Objects.deepEquals(f.get(s), f.get(back)), f.getName());
        assertTrue(Objects.deepEquals(f.get(s), f.get(copy)), f.getName());
      }
    }
  }

  @Test
  void taskArraysOfDifferentLengthsAreRefused() {
    SpecInput s = SpecInput.ofSample("web|p1", 600, "web/0", 1, 1.0, 0.5);
    s.taskSamples = new long[0];
    assertThrows(
        java.io.IOException.class,
        () -> SpecInputSerializer.INSTANCE.serialize(s, new DataOutputSerializer(64)));
    SpecInput h = SpecInput.ofSample("web|p1", 600, "web/0", 1, 1.0, 0.5);
    h.hostMax = new double[0];
    assertThrows(
        java.io.IOException.class,
        () -> SpecInputSerializer.INSTANCE.serialize(h, new DataOutputSerializer(64)));
  }
}
