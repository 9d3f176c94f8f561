package org.cpi2.loader.clickhouse;

import java.io.Serializable;

/**
 * Writes the rows of one value into a batch as RowBinary: none, one, or several (an incident's
 * suspects), each ended with {@link RowBatch#endRow()}. Part of the sink, so serializable.
 */
@FunctionalInterface
public interface RowEncoder<T> extends Serializable {
  void encode(T value, RowBatch out);
}
