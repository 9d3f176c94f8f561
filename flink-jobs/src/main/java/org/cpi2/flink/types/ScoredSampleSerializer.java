package org.cpi2.flink.types;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.detect.SpecVerdict;

/**
 * {@link ScoredSample} field by field, the flags in one byte, cheaper than Flink's reflective
 * PojoSerializer. Every sample crosses the shuffle to the detector as the sample fields alone
 * ({@link #serializeSample}: it is not judged yet). Also the detector's state of samples waiting
 * for their spec ({@link org.cpi2.flink.stream.RecordTypes#WAITING_SAMPLE}): a change to the format
 * needs a new snapshot version that still reads this one. A field added to ScoredSample must be
 * added here (ScoredSampleSerializerTest compares every field after a round trip).
 */
public final class ScoredSampleSerializer extends TypeSerializerSingleton<ScoredSample> {
  private static final long serialVersionUID = 1L;

  public static final ScoredSampleSerializer INSTANCE = new ScoredSampleSerializer();

  private static final int PROTECTED = 1;
  private static final int OUTLIER = 2;
  private static final int ANOMALOUS = 4;
  private static final int SPEC_KNOWN = 8;
  private static final int SPEC_USABLE = 16;
  private static final int SHIFTED = 32;

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public ScoredSample createInstance() {
    return new ScoredSample();
  }

  @Override
  public ScoredSample copy(ScoredSample from) {
    ScoredSample o = new ScoredSample();
    o.host = from.host;
    o.task = from.task;
    o.job = from.job;
    o.platform = from.platform;
    o.taskClass = from.taskClass;
    o.isProtected = from.isProtected;
    o.timeUs = from.timeUs;
    o.cpi = from.cpi;
    o.cpu = from.cpu;
    o.outlier = from.outlier;
    o.anomalous = from.anomalous;
    o.shifted = from.shifted;
    o.spec = from.spec; // immutable
    return o;
  }

  @Override
  public ScoredSample copy(ScoredSample from, ScoredSample reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  /**
   * The sample's fields ({@link #serializeSample}), then the judgement's: flags, the spec's mean,
   * standard deviation and threshold (zeros when no spec was known).
   */
  @Override
  public void serialize(ScoredSample s, DataOutputView out) throws IOException {
    serializeSample(s, out);
    SpecVerdict v = s.spec;
    out.writeByte(
        (s.outlier ? OUTLIER : 0)
            | (s.anomalous ? ANOMALOUS : 0)
            | (s.shifted ? SHIFTED : 0)
            | (v != null ? SPEC_KNOWN : 0)
            | (v != null && v.usable() ? SPEC_USABLE : 0));
    out.writeDouble(v != null ? v.mean() : 0);
    out.writeDouble(v != null ? v.stddev() : 0);
    out.writeDouble(v != null ? v.threshold() : 0);
  }

  @Override
  public ScoredSample deserialize(DataInputView in) throws IOException {
    ScoredSample s = deserializeSample(in);
    int flags = in.readByte();
    s.outlier = (flags & OUTLIER) != 0;
    s.anomalous = (flags & ANOMALOUS) != 0;
    s.shifted = (flags & SHIFTED) != 0;
    s.spec = readSpec(flags, in);
    return s;
  }

  /**
   * What {@link #serialize} wrote after the flags; null (read and dropped) if no spec was known.
   */
  private static SpecVerdict readSpec(int flags, DataInputView in) throws IOException {
    double mean = in.readDouble();
    double stddev = in.readDouble();
    double threshold = in.readDouble();
    return (flags & SPEC_KNOWN) != 0
        ? new SpecVerdict((flags & SPEC_USABLE) != 0, mean, stddev, threshold)
        : null;
  }

  /** The sample's fields (those {@link ScoredSample#of} sets), not the judgement's. */
  public void serializeSample(ScoredSample s, DataOutputView out) throws IOException {
    Strings.write(s.host, out);
    Strings.write(s.task, out);
    Strings.write(s.job, out);
    Strings.write(s.platform, out);
    TaskSeriesSerializer.writeTaskClass(s.taskClass, out);
    out.writeByte(s.isProtected ? PROTECTED : 0);
    out.writeLong(s.timeUs);
    out.writeDouble(s.cpi);
    out.writeDouble(s.cpu);
  }

  /** What {@link #serializeSample} wrote; the judgement fields unset. */
  public ScoredSample deserializeSample(DataInputView in) throws IOException {
    ScoredSample s = new ScoredSample();
    s.host = Strings.read(in);
    s.task = Strings.read(in);
    s.job = Strings.read(in);
    s.platform = Strings.read(in);
    s.taskClass = TaskSeriesSerializer.readTaskClass(in);
    s.isProtected = (in.readByte() & PROTECTED) != 0;
    s.timeUs = in.readLong();
    s.cpi = in.readDouble();
    s.cpu = in.readDouble();
    return s;
  }

  @Override
  public ScoredSample deserialize(ScoredSample reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<ScoredSample> snapshotConfiguration() {
    return new Snapshot();
  }

  /** No configuration: the format is this class's. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<ScoredSample> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
