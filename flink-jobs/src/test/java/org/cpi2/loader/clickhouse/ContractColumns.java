package org.cpi2.loader.clickhouse;

import java.util.ArrayList;
import java.util.List;

/**
 * The columns a table of the contract would have for a shape, as clickhouse/migrations spell them:
 * String for strings, enums and bytes, UInt8 for booleans, Int32, Int64, Float64, Array(X),
 * Nullable(X) for unions with null; LowCardinality(String) where the migrations put {{LC(String)}}
 * on a server that has it, if asked. For tests without a server; the ITs read the real tables.
 */
public final class ContractColumns {
  private ContractColumns() {}

  public static List<TableColumn> of(RowShape<?> shape, boolean lowCardinality) {
    List<TableColumn> columns = new ArrayList<>();
    for (int i = 0; i < shape.columns(); i++) {
      columns.add(new TableColumn(shape.name(i), type(shape.value(i), lowCardinality), ""));
    }
    return columns;
  }

  static String type(RowShape.Value v, boolean lowCardinality) {
    String base =
        switch (v.kind) {
          case STRING, ENUM, BYTES -> "String";
          case BOOLEAN -> "UInt8";
          case INT -> "Int32";
          case LONG -> "Int64";
          case DOUBLE -> "Float64";
          case ARRAY -> "Array(" + type(v.items, false) + ")";
          default -> throw new IllegalArgumentException("no contract column for " + v);
        };
    String t = v.nullable ? "Nullable(" + base + ")" : base;
    return lowCardinality && base.equals("String") ? "LowCardinality(" + t + ")" : t;
  }
}
