package org.cpi2.flink.types;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.cpi2.flink.spec.SpecInput;

/**
 * {@link SpecInput} field by field, the tasks as a count and then one entry per task. Not used for
 * state. A field added to SpecInput must be added here (SpecInputSerializerTest compares every
 * field after a round trip).
 */
public final class SpecInputSerializer extends TypeSerializerSingleton<SpecInput> {
  private static final long serialVersionUID = 1L;

  public static final SpecInputSerializer INSTANCE = new SpecInputSerializer();

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public SpecInput createInstance() {
    return new SpecInput();
  }

  @Override
  public SpecInput copy(SpecInput from) {
    SpecInput s = new SpecInput();
    s.key = from.key;
    s.periodEndUs = from.periodEndUs;
    s.count = from.count;
    s.sum = from.sum;
    s.sumSq = from.sumSq;
    s.cpuSum = from.cpuSum;
    s.tasks = from.tasks.clone();
    s.taskSamples = from.taskSamples.clone();
    s.taskLastSeenUs = from.taskLastSeenUs.clone();
    s.bucketEndUs = from.bucketEndUs;
    s.hosts = from.hosts.clone();
    s.hostSamples = from.hostSamples.clone();
    s.hostSum = from.hostSum.clone();
    s.hostMax = from.hostMax.clone();
    return s;
  }

  @Override
  public SpecInput copy(SpecInput from, SpecInput reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(SpecInput s, DataOutputView out) throws IOException {
    Strings.write(s.key, out);
    out.writeLong(s.periodEndUs);
    out.writeLong(s.count);
    out.writeDouble(s.sum);
    out.writeDouble(s.sumSq);
    out.writeDouble(s.cpuSum);
    int n = s.tasks.length;
    if (s.taskSamples.length != n || s.taskLastSeenUs.length != n) {
      throw new IOException("SpecInput of " + s.key + ": task arrays of different lengths");
    }
    out.writeInt(n);
    for (int i = 0; i < n; i++) {
      Strings.write(s.tasks[i], out);
      out.writeLong(s.taskSamples[i]);
      out.writeLong(s.taskLastSeenUs[i]);
    }
    out.writeLong(s.bucketEndUs);
    int h = s.hosts.length;
    if (s.hostSamples.length != h || s.hostSum.length != h || s.hostMax.length != h) {
      throw new IOException("SpecInput of " + s.key + ": host arrays of different lengths");
    }
    out.writeInt(h);
    for (int i = 0; i < h; i++) {
      Strings.write(s.hosts[i], out);
      out.writeLong(s.hostSamples[i]);
      out.writeDouble(s.hostSum[i]);
      out.writeDouble(s.hostMax[i]);
    }
  }

  @Override
  public SpecInput deserialize(DataInputView in) throws IOException {
    SpecInput s = new SpecInput();
    s.key = Strings.read(in);
    s.periodEndUs = in.readLong();
    s.count = in.readLong();
    s.sum = in.readDouble();
    s.sumSq = in.readDouble();
    s.cpuSum = in.readDouble();
    int n = in.readInt();
    if (n < 0) {
      throw new IOException("SpecInput of " + s.key + ": negative task count " + n);
    }
    s.tasks = new String[n];
    s.taskSamples = new long[n];
    s.taskLastSeenUs = new long[n];
    for (int i = 0; i < n; i++) {
      s.tasks[i] = Strings.read(in);
      s.taskSamples[i] = in.readLong();
      s.taskLastSeenUs[i] = in.readLong();
    }
    s.bucketEndUs = in.readLong();
    int h = in.readInt();
    if (h < 0) {
      throw new IOException("SpecInput of " + s.key + ": negative host count " + h);
    }
    s.hosts = new String[h];
    s.hostSamples = new long[h];
    s.hostSum = new double[h];
    s.hostMax = new double[h];
    for (int i = 0; i < h; i++) {
      s.hosts[i] = Strings.read(in);
      s.hostSamples[i] = in.readLong();
      s.hostSum[i] = in.readDouble();
      s.hostMax[i] = in.readDouble();
    }
    return s;
  }

  @Override
  public SpecInput deserialize(SpecInput reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<SpecInput> snapshotConfiguration() {
    return new Snapshot();
  }

  /** No configuration: the format is this class's. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<SpecInput> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
