package org.cpi2.flink.types;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.cpi2.flink.correlate.TaskSeries;
import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.TaskClass;

/**
 * {@link TaskSeries} in the correlator's state, the largest state of the job (every live task's
 * recent samples): strings in the {@link Strings} coding, then the samples (the arrays' first
 * {@code size} elements) packed into one block written at once. The reflective PojoSerializer wrote
 * strings a character and arrays an element at a time through the checkpoint stream's wrappers,
 * which made checkpoints of many live tasks a large share of the TaskManager's CPU. A field added
 * to TaskSeries must be added here, with a new snapshot class to read the old format
 * (TaskSeriesSerializerTest compares every field after a round trip).
 */
public final class TaskSeriesSerializer extends TypeSerializerSingleton<TaskSeries> {
  private static final long serialVersionUID = 1L;

  public static final TaskSeriesSerializer INSTANCE = new TaskSeriesSerializer();

  private static final int PROTECTED = 1;
  private static final int SPEC_KNOWN = 2;
  private static final int SPEC_USABLE = 4;

  /** Bytes per sample in the packed block: time, CPI, CPU usage, outlier. */
  private static final int SAMPLE_BYTES = 8 + 8 + 8 + 1;

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public TaskSeries createInstance() {
    return new TaskSeries();
  }

  @Override
  public TaskSeries copy(TaskSeries from) {
    TaskSeries t = new TaskSeries();
    t.task = from.task;
    t.job = from.job;
    t.platform = from.platform;
    t.taskClass = from.taskClass;
    t.isProtected = from.isProtected;
    t.spec = from.spec; // immutable
    // Same room as the original: a copy is what a snapshot keeps while the task goes on adding.
    t.size = from.size;
    t.times = from.times.clone();
    t.cpi = from.cpi.clone();
    t.cpu = from.cpu.clone();
    t.outlier = from.outlier.clone();
    return t;
  }

  @Override
  public TaskSeries copy(TaskSeries from, TaskSeries reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(TaskSeries t, DataOutputView out) throws IOException {
    Strings.write(t.task, out);
    Strings.write(t.job, out);
    Strings.write(t.platform, out);
    writeTaskClass(t.taskClass, out);
    SpecVerdict v = t.spec;
    out.writeByte(
        (t.isProtected ? PROTECTED : 0)
            | (v != null ? SPEC_KNOWN : 0)
            | (v != null && v.usable() ? SPEC_USABLE : 0));
    int n = t.size;
    ByteBuffer b = ByteBuffer.allocate(3 * 8 + 4 + n * SAMPLE_BYTES);
    // Zeros when no spec was known (the layout of the former flat fields, which savepoints hold).
    b.putDouble(v != null ? v.mean() : 0)
        .putDouble(v != null ? v.stddev() : 0)
        .putDouble(v != null ? v.threshold() : 0)
        .putInt(n);
    for (int i = 0; i < n; i++) {
      b.putLong(t.times[i]);
    }
    for (int i = 0; i < n; i++) {
      b.putDouble(t.cpi[i]);
    }
    for (int i = 0; i < n; i++) {
      b.putDouble(t.cpu[i]);
    }
    for (int i = 0; i < n; i++) {
      b.put(t.outlier[i] ? (byte) 1 : 0);
    }
    out.write(b.array());
  }

  @Override
  public TaskSeries deserialize(DataInputView in) throws IOException {
    TaskSeries t = new TaskSeries();
    t.task = Strings.read(in);
    t.job = Strings.read(in);
    t.platform = Strings.read(in);
    t.taskClass = readTaskClass(in);
    int flags = in.readUnsignedByte();
    t.isProtected = (flags & PROTECTED) != 0;
    byte[] head = new byte[3 * 8 + 4];
    in.readFully(head);
    ByteBuffer h = ByteBuffer.wrap(head);
    double mean = h.getDouble();
    double stddev = h.getDouble();
    double threshold = h.getDouble();
    if ((flags & SPEC_KNOWN) != 0) {
      t.spec = new SpecVerdict((flags & SPEC_USABLE) != 0, mean, stddev, threshold);
    }
    int n = h.getInt();
    if (n < 0) {
      throw new IOException("TaskSeries with " + n + " samples");
    }
    byte[] block = new byte[n * SAMPLE_BYTES];
    in.readFully(block);
    ByteBuffer b = ByteBuffer.wrap(block);
    t.size = n;
    t.times = new long[n];
    t.cpi = new double[n];
    t.cpu = new double[n];
    t.outlier = new boolean[n];
    for (int i = 0; i < n; i++) {
      t.times[i] = b.getLong();
    }
    for (int i = 0; i < n; i++) {
      t.cpi[i] = b.getDouble();
    }
    for (int i = 0; i < n; i++) {
      t.cpu[i] = b.getDouble();
    }
    for (int i = 0; i < n; i++) {
      t.outlier[i] = b.get() != 0;
    }
    return t;
  }

  @Override
  public TaskSeries deserialize(TaskSeries reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<TaskSeries> snapshotConfiguration() {
    return new Snapshot();
  }

  /** No configuration: the format is this class's. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<TaskSeries> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }

  /**
   * A task class as its name (a Strings value, null for none): the bytes of the former String
   * field.
   */
  static void writeTaskClass(TaskClass c, DataOutputView out) throws IOException {
    Strings.write(c == null ? null : c.name(), out);
  }

  /**
   * A task class written by {@link #writeTaskClass}; a name this build does not know reads as
   * UNKNOWN.
   */
  static TaskClass readTaskClass(DataInputView in) throws IOException {
    String name = Strings.read(in);
    if (name == null) {
      return null;
    }
    try {
      return TaskClass.valueOf(name);
    } catch (IllegalArgumentException e) {
      return TaskClass.UNKNOWN;
    }
  }
}
