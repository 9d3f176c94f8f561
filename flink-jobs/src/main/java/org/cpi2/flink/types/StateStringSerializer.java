package org.cpi2.flink.types;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Strings in keyed state (task names as map keys): the {@link Strings} coding, one bulk write per
 * string. Flink's StringSerializer writes a character at a time through the checkpoint stream's
 * wrappers, which costs most of the checkpoint thread's CPU when a host holds many live tasks.
 */
public final class StateStringSerializer extends TypeSerializerSingleton<String> {
  private static final long serialVersionUID = 1L;

  public static final StateStringSerializer INSTANCE = new StateStringSerializer();

  @Override
  public boolean isImmutableType() {
    return true;
  }

  @Override
  public String createInstance() {
    return "";
  }

  @Override
  public String copy(String from) {
    return from;
  }

  @Override
  public String copy(String from, String reuse) {
    return from;
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(String s, DataOutputView out) throws IOException {
    Strings.write(s, out);
  }

  @Override
  public String deserialize(DataInputView in) throws IOException {
    return Strings.read(in);
  }

  @Override
  public String deserialize(String reuse, DataInputView in) throws IOException {
    return Strings.read(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    Strings.write(Strings.read(in), out);
  }

  @Override
  public TypeSerializerSnapshot<String> snapshotConfiguration() {
    return new Snapshot();
  }

  /** No configuration: the format is this class's. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<String> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
