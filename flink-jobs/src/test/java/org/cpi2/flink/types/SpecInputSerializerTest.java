package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.cpi2.flink.records.SpecInput;
import org.junit.jupiter.api.Test;

class SpecInputSerializerTest {
  @Test
  void typeInformationOfTheClassUsesIt() {
    assertInstanceOf(SpecInputSerializer.class, TypeInformation.of(SpecInput.class).createSerializer(null));
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
      } else {
        throw new AssertionError("SpecInputSerializer does not know " + t + " " + f.getName());
      }
    }
    DataOutputSerializer out = new DataOutputSerializer(64);
    SpecInputSerializer.INSTANCE.serialize(s, out);
    SpecInput back = SpecInputSerializer.INSTANCE.deserialize(new DataInputDeserializer(out.getCopyOfBuffer()));
    SpecInput copy = SpecInputSerializer.INSTANCE.copy(s);
    for (Field f : SpecInput.class.getDeclaredFields()) {
      if (!Modifier.isStatic(f.getModifiers())) {
        assertEquals(f.get(s), f.get(back), f.getName());
        assertEquals(f.get(s), f.get(copy), f.getName());
      }
    }
  }
}
