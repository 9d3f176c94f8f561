package org.cpi2.loader.clickhouse;

import java.util.List;
import java.util.stream.Collectors;
import org.apache.avro.generic.IndexedRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a sink writer's rows go into its table: the encoder, and the format and column list of the
 * INSERT that reads its bytes. Decided when the writer is created, in the task, from the table's
 * columns as the server has them then (a table altered later is read again at the next restart: an
 * insert that no longer fits fails, and the job restarts from its checkpoint).
 */
public record InsertPlan<T>(RowEncoder<T> encoder, String format, List<String> columns) {
  private static final Logger LOG = LoggerFactory.getLogger(InsertPlan.class);

  public static final String ROW_BINARY = "RowBinary";
  public static final String JSON_EACH_ROW = "JSONEachRow";

  /** JSONEachRow rows of every field: the server ignores fields without a column. */
  public static <T extends IndexedRecord> InsertPlan<T> json(RowShape<T> shape) {
    return new InsertPlan<>(JsonRows.of(shape), JSON_EACH_ROW, List.of());
  }

  static <T> InsertPlan<T> rowBinary(RowEncoder<T> encoder, List<String> columns) {
    return new InsertPlan<>(encoder, ROW_BINARY, List.copyOf(columns));
  }

  /**
   * RowBinary rows for a table of these columns, or, when RowBinaryRows cannot write them exactly,
   * JSONEachRow rows and one WARN line saying which column stood in the way.
   */
  public static <T extends IndexedRecord> InsertPlan<T> forTable(
      RowShape<T> shape, String table, List<TableColumn> columns) {
    try {
      return RowBinaryRows.compile(shape, columns);
    } catch (RowBinaryRows.Unsupported e) {
      LOG.warn("clickhouse: {} gets JSONEachRow rows, not RowBinary: {}", table, e.getMessage());
      return json(shape);
    }
  }

  /** {@code INSERT INTO table [(c1, c2, ...)] FORMAT f}. */
  public String statement(String table) {
    String list =
        columns.isEmpty()
            ? ""
            : columns.stream().map(c -> "`" + c + "`").collect(Collectors.joining(", ", " (", ")"));
    return "INSERT INTO " + table + list + " FORMAT " + format;
  }
}
