package org.cpi2.loader.clickhouse;

import java.util.ArrayList;
import java.util.List;

/**
 * A column of a ClickHouse table as the server describes it in {@code system.columns}: its name,
 * its type as the server spells it ({@code Nullable(Float64)}, {@code LowCardinality(String)}) and
 * its default kind ({@code ""} for none, {@code DEFAULT}, {@code MATERIALIZED}, {@code ALIAS},
 * {@code EPHEMERAL}). The same query works on ClickHouse 18.16 and current servers.
 */
public record TableColumn(String name, String type, String defaultKind) {
  /** The server computes the column; an insert cannot name it. */
  public boolean computed() {
    return defaultKind.equals("MATERIALIZED") || defaultKind.equals("ALIAS");
  }

  /** An insert may leave the column out: the server fills it from its expression. */
  public boolean hasDefault() {
    return !defaultKind.isEmpty();
  }

  /** Rows of name, type and default kind, tab-separated, unescaped. */
  static List<TableColumn> parse(String rows) {
    List<TableColumn> columns = new ArrayList<>();
    for (String line : rows.split("\n")) {
      if (line.isEmpty()) {
        continue;
      }
      String[] f = line.split("\t", -1);
      if (f.length != 3) {
        throw new IllegalArgumentException("clickhouse: unexpected system.columns row: " + line);
      }
      columns.add(new TableColumn(f[0], f[1], f[2]));
    }
    return columns;
  }

  /** A ClickHouse string literal. */
  static String quote(String s) {
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'";
  }
}
