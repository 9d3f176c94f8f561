package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.util.List;
import org.apache.avro.generic.IndexedRecord;

/**
 * How a sink writer's rows go into its table: the RowBinary encoder and the column list of the
 * INSERT that reads its bytes. Decided when the writer is created, in the task, from the table's
 * columns as the server has them then (a table altered later is read again at the next restart: an
 * insert that no longer fits fails, and the job restarts from its checkpoint).
 */
public record InsertPlan<T>(RowEncoder<T> encoder, List<String> columns) {
  public InsertPlan {
    columns = List.copyOf(columns);
  }

  /**
   * RowBinary rows for a table of these columns; IOException naming the column that stands in the
   * way when RowBinaryRows cannot write them exactly (the table does not fit the column contract).
   */
  public static <T extends IndexedRecord> InsertPlan<T> forTable(
      RowShape<T> shape, String table, List<TableColumn> columns) throws IOException {
    try {
      return RowBinaryRows.compile(shape, columns);
    } catch (RowBinaryRows.Unsupported e) {
      throw new IOException(
          "clickhouse: "
              + table
              + " does not fit the rows of "
              + shape.source()
              + ": "
              + e.getMessage(),
          e);
    }
  }
}
