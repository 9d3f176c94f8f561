package org.cpi2.flink.types;

import java.lang.reflect.Type;
import java.util.Map;
import org.apache.flink.api.common.serialization.SerializerConfig;
import org.apache.flink.api.common.typeinfo.TypeInfoFactory;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.spec.SpecInput;

/** Type information of a class with its own hand-written, stateless serializer. */
public final class SerializerTypeInfo<T> extends TypeInformation<T> {
  private static final long serialVersionUID = 1L;

  private final Class<T> type;
  private final TypeSerializer<T> serializer;

  public SerializerTypeInfo(Class<T> type, TypeSerializer<T> serializer) {
    this.type = type;
    this.serializer = serializer;
  }

  @Override
  public boolean isBasicType() {
    return false;
  }

  @Override
  public boolean isTupleType() {
    return false;
  }

  @Override
  public int getArity() {
    return 1;
  }

  @Override
  public int getTotalFields() {
    return 1;
  }

  @Override
  public Class<T> getTypeClass() {
    return type;
  }

  @Override
  public boolean isKeyType() {
    return false;
  }

  @Override
  public TypeSerializer<T> createSerializer(SerializerConfig config) {
    return serializer.duplicate();
  }

  @Override
  public String toString() {
    return type.getSimpleName() + "<" + serializer.getClass().getSimpleName() + ">";
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof SerializerTypeInfo<?> other
        && other.type == type
        && other.serializer.equals(serializer);
  }

  @Override
  public int hashCode() {
    return type.hashCode();
  }

  @Override
  public boolean canEqual(Object o) {
    return o instanceof SerializerTypeInfo;
  }

  /** {@code @TypeInfo} factory of {@link ScoredSample}: {@code TypeInformation.of} finds it. */
  public static final class ScoredSampleFactory extends TypeInfoFactory<ScoredSample> {
    @Override
    public TypeInformation<ScoredSample> createTypeInfo(
        Type t, Map<String, TypeInformation<?>> generics) {
      return new SerializerTypeInfo<>(ScoredSample.class, ScoredSampleSerializer.INSTANCE);
    }
  }

  /** {@code @TypeInfo} factory of {@link HostEvent}. */
  public static final class HostEventFactory extends TypeInfoFactory<HostEvent> {
    @Override
    public TypeInformation<HostEvent> createTypeInfo(
        Type t, Map<String, TypeInformation<?>> generics) {
      return new SerializerTypeInfo<>(HostEvent.class, new HostEventSerializer());
    }
  }

  /** {@code @TypeInfo} factory of {@link SpecInput}. */
  public static final class SpecInputFactory extends TypeInfoFactory<SpecInput> {
    @Override
    public TypeInformation<SpecInput> createTypeInfo(
        Type t, Map<String, TypeInformation<?>> generics) {
      return new SerializerTypeInfo<>(SpecInput.class, SpecInputSerializer.INSTANCE);
    }
  }
}
