package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.util.InstantiationUtil;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.schema.CpiSample;
import org.junit.jupiter.api.Test;

public class CpiSampleSerializerTest {
  /** Every field of the schema set from its type, so a field added to CpiSample is covered too. */
  public static <T extends SpecificRecord> T filled(T record, Random r, boolean nulls) {
    for (Schema.Field f : record.getSchema().getFields()) {
      Schema s = f.schema();
      if (s.getType() == Schema.Type.UNION) {
        if (nulls) {
          record.put(f.pos(), null);
          continue;
        }
        s =
            s.getTypes().get(0).getType() == Schema.Type.NULL
                ? s.getTypes().get(1)
                : s.getTypes().get(0);
      }
      Object v =
          switch (s.getType()) {
            case STRING -> "s" + r.nextInt() + "/é∑" + f.name();
            case BOOLEAN -> r.nextBoolean();
            case INT -> r.nextInt();
            case LONG -> r.nextLong();
            case FLOAT -> r.nextFloat();
            case DOUBLE -> r.nextDouble() * 1e6;
            case ENUM -> {
              Object[] symbols =
                  org.apache.avro.specific.SpecificData.get().getClass(s).getEnumConstants();
              yield symbols[r.nextInt(symbols.length)];
            }
            default -> throw new AssertionError(f.name() + ": " + s.getType());
          };
      record.put(f.pos(), v);
    }
    return record;
  }

  static <T> T roundTrip(TypeSerializer<T> ser, T value) throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(64);
    ser.serialize(value, out);
    ser.serialize(value, out); // two in a row: each reads exactly its own bytes
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    T first = ser.deserialize(in);
    assertEquals(first, ser.deserialize(in));
    assertEquals(0, in.available());
    return first;
  }

  @Test
  void everyFieldOfASampleSurvivesARoundTripAndACopy() throws Exception {
    TypeSerializer<CpiSample> ser = RecordTypes.SAMPLE_STREAM.createSerializer(null);
    Random r = new Random(42);
    for (int i = 0; i < 50; i++) {
      CpiSample s = filled(new CpiSample(), r, i % 2 == 0);
      assertEquals(s, roundTrip(ser, s));
      CpiSample copy = ser.copy(s);
      assertNotSame(s, copy);
      assertEquals(s, copy);
    }
  }

  @Test
  void typeInformationOfTheStreamUsesIt() {
    assertInstanceOf(CpiSampleSerializer.class, RecordTypes.SAMPLE_STREAM.createSerializer(null));
  }

  @Test
  void survivesJavaSerialisationAndItsSnapshotRestoresIt() throws Exception {
    CpiSampleSerializer shipped = InstantiationUtil.clone(CpiSampleSerializer.INSTANCE);
    CpiSample s = filled(new CpiSample(), new Random(1), false);
    assertEquals(s, roundTrip(shipped, s));

    DataOutputSerializer out = new DataOutputSerializer(64);
    TypeSerializerSnapshot.writeVersionedSnapshot(
        out, CpiSampleSerializer.INSTANCE.snapshotConfiguration());
    TypeSerializerSnapshot<CpiSample> read =
        TypeSerializerSnapshot.readVersionedSnapshot(
            new DataInputDeserializer(out.getCopyOfBuffer()), getClass().getClassLoader());
    assertEquals(CpiSampleSerializer.INSTANCE, read.restoreSerializer());
    assertTrue(
        CpiSampleSerializer.INSTANCE
            .snapshotConfiguration()
            .resolveSchemaCompatibility(read)
            .isCompatibleAsIs());
  }
}
