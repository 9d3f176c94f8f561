package org.cpi2.flink.types;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.cpi2.flink.records.SpecInput;

/**
 * {@link SpecInput} field by field. Not used for state. A field added to SpecInput must be added
 * here (SpecInputSerializerTest compares every field after a round trip).
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
    return new SpecInput(from.key, from.task, from.timeUs, from.cpi, from.cpu);
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
    Strings.write(s.task, out);
    out.writeLong(s.timeUs);
    out.writeDouble(s.cpi);
    out.writeDouble(s.cpu);
  }

  @Override
  public SpecInput deserialize(DataInputView in) throws IOException {
    return new SpecInput(Strings.read(in), Strings.read(in), in.readLong(), in.readDouble(), in.readDouble());
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
