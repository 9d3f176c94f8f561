package org.cpi2.loader.clickhouse;

import java.util.function.Function;

/**
 * Every constant of one enum class as the bytes a format writes for its symbol, by ordinal:
 * encoders write an enum value by copying them. Built on first use from the class of the value (the
 * generated class, known only at run time); immutable, so encoders may race to build it.
 */
final class EnumSymbols {
  private final Class<?> type;
  private final byte[][] bytes;

  private EnumSymbols(Class<?> type, Function<String, byte[]> encode) {
    this.type = type;
    Object[] constants = type.getEnumConstants();
    bytes = new byte[constants.length][];
    for (int i = 0; i < constants.length; i++) {
      bytes[i] = encode.apply(constants[i].toString());
    }
  }

  /** The symbols of {@code e}'s enum class, each as {@code encode} makes it. */
  static EnumSymbols of(Enum<?> e, Function<String, byte[]> encode) {
    return new EnumSymbols(e.getDeclaringClass(), encode);
  }

  boolean isFor(Enum<?> e) {
    return type == e.getDeclaringClass();
  }

  byte[] of(Enum<?> e) {
    return bytes[e.ordinal()];
  }
}
