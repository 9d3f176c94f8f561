package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Random;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.cpi2.flink.correlate.TaskSeries;
import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class TaskSeriesSerializerTest {
  static TaskSeries filled(Random r, int samples) {
    TaskSeries t = new TaskSeries();
    t.task = "web/host-" + r.nextInt(100) + "/task-ü" + r.nextInt(9);
    t.job = r.nextInt(4) == 0 ? null : "job-" + r.nextInt(10);
    t.platform = "AMD EPYC 7B13 64-Core Processor|" + r.nextInt(3);
    t.taskClass = r.nextBoolean() ? TaskClass.BATCH : TaskClass.LATENCY_SENSITIVE;
    t.isProtected = r.nextBoolean();
    t.spec =
        r.nextBoolean()
            ? null
            : new SpecVerdict(
                r.nextBoolean(),
                r.nextGaussian(),
                r.nextDouble(),
                r.nextInt(5) == 0 ? Double.NaN : r.nextDouble() * 3);
    for (int i = 0; i < samples; i++) {
      t.add(
          1_000_000L * 60 * i + r.nextInt(1000),
          r.nextInt(6) == 0 ? Double.NaN : r.nextDouble() * 4,
          r.nextDouble(),
          r.nextBoolean());
    }
    return t;
  }

  /**
   * Every instance field of TaskSeries (the arrays up to its size), so that a field added to it and
   * not to the serializer fails here.
   */
  static void assertSameFields(TaskSeries a, TaskSeries b) throws Exception {
    int n = a.size();
    assertEquals(n, b.size());
    for (Field f : TaskSeries.class.getDeclaredFields()) {
      if (Modifier.isStatic(f.getModifiers())) {
        continue;
      }
      Object x = f.get(a);
      Object y = f.get(b);
      if (x instanceof long[] l) {
        assertArrayEquals(Arrays.copyOf(l, n), Arrays.copyOf((long[]) y, n), f.getName());
      } else if (x instanceof double[] d) {
        assertArrayEquals(Arrays.copyOf(d, n), Arrays.copyOf((double[]) y, n), f.getName());
      } else if (x instanceof boolean[] z) {
        assertArrayEquals(Arrays.copyOf(z, n), Arrays.copyOf((boolean[]) y, n), f.getName());
      } else {
        assertEquals(x, y, f.getName());
      }
    }
  }

  @Test
  void everyFieldSurvivesARoundTripAndADeepCopy() throws Exception {
    Random r = new Random(11);
    TaskSeriesSerializer ser = TaskSeriesSerializer.INSTANCE;
    for (int i = 0; i < 100; i++) {
      TaskSeries t = filled(r, r.nextInt(30));
      DataOutputSerializer out = new DataOutputSerializer(64);
      ser.serialize(t, out);
      ser.serialize(t, out); // two in a row: each reads exactly its own bytes
      DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
      assertSameFields(t, ser.deserialize(in));
      assertSameFields(t, ser.deserialize(in));
      assertEquals(0, in.available());
      TaskSeries c = ser.copy(t);
      assertSameFields(t, c);
      assertNotSame(t.times, c.times);
      assertNotSame(t.cpi, c.cpi);
      // A copy is what a running checkpoint keeps: changing the live series in place must not
      // change it.
      int before = c.size();
      long first = c.size() > 0 ? c.times[0] : 0;
      t.add(Long.MAX_VALUE, 1, 1, true);
      t.add(Long.MIN_VALUE, 2, 2, false);
      t.evictUpTo(Long.MIN_VALUE);
      assertEquals(before, c.size());
      assertEquals(before + 1, t.size());
      if (before > 0) {
        assertEquals(first, c.times[0]);
      }
    }
  }

  /**
   * The bytes a series is written as in checkpoints and savepoints, as the build with flat spec
   * fields (before SpecVerdict) wrote them: a savepoint of it restores into this one. With a spec
   * (protected, not usable) and without one.
   */
  @Test
  void theStateBytesAreTheFormerFlatFieldsOnes() throws Exception {
    String[] former = {
      "067765622f30047765620270124c4154454e43595f53454e534954495645033ff80000000000003f"
          + "d0000000000000400000000000000000000002000000000000000a00000000000000143ff0000000"
          + "0000007ff80000000000003fe00000000000003fe80000000000000001",
      "067765622f30047765620270124c4154454e43595f53454e53495449564501000000000000000000"
          + "00000000000000000000000000000000000002000000000000000a00000000000000143ff0000000"
          + "0000007ff80000000000003fe00000000000003fe80000000000000001"
    };
    SpecVerdict[] specs = {new SpecVerdict(false, 1.5, 0.25, 2.0), null};
    for (int i = 0; i < specs.length; i++) {
      TaskSeries t = new TaskSeries();
      t.task = "web/0";
      t.job = "web";
      t.platform = "p";
      t.taskClass = TaskClass.LATENCY_SENSITIVE;
      t.isProtected = true;
      t.spec = specs[i];
      t.add(10, 1.0, 0.5, false);
      t.add(20, Double.NaN, 0.75, true);
      DataOutputSerializer out = new DataOutputSerializer(64);
      TaskSeriesSerializer.INSTANCE.serialize(t, out);
      assertEquals(former[i], HexFormat.of().formatHex(out.getCopyOfBuffer()));
      TaskSeries back =
          TaskSeriesSerializer.INSTANCE.deserialize(
              new DataInputDeserializer(HexFormat.of().parseHex(former[i])));
      assertSameFields(t, back);
    }
  }

  @Test
  void aCorruptLengthIsAnErrorNotAnAllocation() throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(64);
    TaskSeriesSerializer.INSTANCE.serialize(filled(new Random(1), 0), out);
    byte[] b = out.getCopyOfBuffer();
    b[b.length - 1] = (byte) 0xFF; // the sample count's low byte ...
    b[b.length - 4] = (byte) 0xFF; // ... and its sign
    assertThrows(
        IOException.class,
        () -> TaskSeriesSerializer.INSTANCE.deserialize(new DataInputDeserializer(b)));
  }

  @Test
  void snapshotRestoresAsTheSameSerializer() throws Exception {
    TypeSerializerSnapshot<TaskSeries> snap = TaskSeriesSerializer.INSTANCE.snapshotConfiguration();
    DataOutputSerializer out = new DataOutputSerializer(64);
    snap.writeSnapshot(out);
    TypeSerializerSnapshot<TaskSeries> read = new TaskSeriesSerializer.Snapshot();
    read.readSnapshot(
        snap.getCurrentVersion(),
        new DataInputDeserializer(out.getCopyOfBuffer()),
        getClass().getClassLoader());
    assertEquals(TaskSeriesSerializer.INSTANCE, read.restoreSerializer());
    TypeSerializerSchemaCompatibility<TaskSeries> compat =
        TaskSeriesSerializer.INSTANCE.snapshotConfiguration().resolveSchemaCompatibility(read);
    assertEquals(true, compat.isCompatibleAsIs());
  }

  @Test
  void stateStringsRoundTripIncludingNullAndLongOnes() throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(16);
    String longOne = "x".repeat(70_000) + "ü";
    for (String s : new String[] {"", "task-1", null, longOne}) {
      StateStringSerializer.INSTANCE.serialize(s, out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    assertEquals("", StateStringSerializer.INSTANCE.deserialize(in));
    assertEquals("task-1", StateStringSerializer.INSTANCE.deserialize(in));
    assertEquals(null, StateStringSerializer.INSTANCE.deserialize(in));
    assertEquals(longOne, StateStringSerializer.INSTANCE.deserialize(in));
  }
}
