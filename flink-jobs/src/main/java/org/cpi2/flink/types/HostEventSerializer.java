package org.cpi2.flink.types;

import java.io.IOException;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.schema.EnforcementAction;

/**
 * {@link HostEvent}: a tag byte, then the one record it holds with that record's in-flight
 * serializer (samples not judged yet as the sample fields of a scored sample, scored samples field
 * by field, actions, which are rare, with flink-avro's AvroSerializer). Not used for state.
 */
public final class HostEventSerializer extends TypeSerializer<HostEvent> {
  private static final long serialVersionUID = 1L;

  private static final byte SAMPLE = 0;
  private static final byte SCORED = 1;
  private static final byte ACTION = 2;

  private final TypeSerializer<EnforcementAction> actions;

  public HostEventSerializer() {
    this(new AvroTypeInfo<>(EnforcementAction.class).createSerializer(new SerializerConfigImpl()));
  }

  private HostEventSerializer(TypeSerializer<EnforcementAction> actions) {
    this.actions = actions;
  }

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public TypeSerializer<HostEvent> duplicate() {
    TypeSerializer<EnforcementAction> a = actions.duplicate();
    return a == actions ? this : new HostEventSerializer(a);
  }

  @Override
  public HostEvent createInstance() {
    return new HostEvent();
  }

  @Override
  public HostEvent copy(HostEvent from) {
    HostEvent e = new HostEvent();
    if (from.sample != null) {
      e.sample = ScoredSampleSerializer.INSTANCE.copy(from.sample);
    } else if (from.scored != null) {
      e.scored = ScoredSampleSerializer.INSTANCE.copy(from.scored);
    } else if (from.action != null) {
      e.action = actions.copy(from.action);
    }
    return e;
  }

  @Override
  public HostEvent copy(HostEvent from, HostEvent reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(HostEvent e, DataOutputView out) throws IOException {
    if (e.sample != null) {
      out.writeByte(SAMPLE);
      ScoredSampleSerializer.INSTANCE.serializeSample(e.sample, out);
    } else if (e.scored != null) {
      out.writeByte(SCORED);
      ScoredSampleSerializer.INSTANCE.serialize(e.scored, out);
    } else if (e.action != null) {
      out.writeByte(ACTION);
      actions.serialize(e.action, out);
    } else {
      throw new IOException("HostEvent without a sample, a scored sample or an action");
    }
  }

  @Override
  public HostEvent deserialize(DataInputView in) throws IOException {
    HostEvent e = new HostEvent();
    byte tag = in.readByte();
    switch (tag) {
      case SAMPLE -> e.sample = ScoredSampleSerializer.INSTANCE.deserializeSample(in);
      case SCORED -> e.scored = ScoredSampleSerializer.INSTANCE.deserialize(in);
      case ACTION -> e.action = actions.deserialize(in);
      default -> throw new IOException("HostEvent: unknown tag " + tag);
    }
    return e;
  }

  @Override
  public HostEvent deserialize(HostEvent reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof HostEventSerializer;
  }

  @Override
  public int hashCode() {
    return HostEventSerializer.class.hashCode();
  }

  @Override
  public TypeSerializerSnapshot<HostEvent> snapshotConfiguration() {
    return new Snapshot();
  }

  /** No configuration: the format is this class's. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<HostEvent> {
    public Snapshot() {
      super(HostEventSerializer::new);
    }
  }
}
