package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The loader's RowBinary rows through the real tables: cpi2.clickhouse.apply applies the migrations
 * to a throw-away database on the local ClickHouse (18.16), the sink writes tricky records ({@link
 * TrickyRecords#forTables}) into every table the job writes, and every column it writes is read
 * back with FORMAT JSONEachRow: the rows must hold the records' values exactly ({@link
 * ExpectedRows}). The same bytes then go through chdb-core (a current ClickHouse, LowCardinality
 * columns) with src/test/python/chdb_formats_check.py, when a Python with chdb is found ($PY, else
 * ../.venv/bin/python), and must read back the same.
 */
class ClickHouseFormatsIT {
  static final File ROOT = new File(System.getProperty("user.dir")).getParentFile();
  static final String RB = "cpi2_rowbinary_it_" + ProcessHandle.current().pid();
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void applySchema() throws Exception {
    String missing = LocalClickHouse.ensureUp();
    Assumptions.assumeTrue(missing == null, missing);
    String out =
        run(
            List.of(
                python(),
                "-m",
                "cpi2.clickhouse.apply",
                "--url",
                LocalClickHouse.URL,
                "--database",
                RB));
    assertTrue(out.contains("applied"), out);
  }

  @AfterAll
  static void dropDatabases() throws Exception {
    if (LocalClickHouse.answers()) {
      LocalClickHouse.query("DROP DATABASE IF EXISTS " + RB);
    }
  }

  /** The records of each table, the incidents' rows for incidents and incident_suspects alike. */
  static Map<String, List<IndexedRecord>> records(long seed) {
    TrickyRecords tricky = TrickyRecords.forTables(seed);
    Map<String, IntFunction<IndexedRecord>> make =
        Map.of(
            "samples",
            tricky::sample,
            "specs",
            tricky::spec,
            "incidents",
            tricky::incident,
            "actions",
            tricky::action,
            "outcomes",
            tricky::outcome,
            "dead_letters",
            tricky::deadLetter);
    Map<String, List<IndexedRecord>> records = new LinkedHashMap<>();
    for (String table : ClickHouseSinks.TABLES.keySet()) {
      if (table.equals("incident_suspects")) {
        records.put(table, records.get("incidents"));
        continue;
      }
      List<IndexedRecord> list = new ArrayList<>();
      for (int i = 0; i < (table.equals("samples") ? 1000 : 300); i++) {
        list.add(make.get(table).apply(i));
      }
      records.put(table, list);
    }
    return records;
  }

  @SuppressWarnings("unchecked")
  private static RowShape<IndexedRecord> shape(String table) {
    return (RowShape<IndexedRecord>) ClickHouseSinks.TABLES.get(table);
  }

  @Test
  void everyTableHoldsItsRecordsValues() throws Exception {
    Map<String, List<IndexedRecord>> records = records(11);
    for (String table : ClickHouseSinks.TABLES.keySet()) {
      List<TableColumn> columns = columns(table);
      List<String> written = InsertPlan.forTable(shape(table), RB + "." + table, columns).columns();
      write(RB, table, records.get(table));
      String list = String.join(", ", written.stream().map(c -> "`" + c + "`").toList());
      String out =
          LocalClickHouse.query(
              "SELECT " + list + " FROM " + RB + "." + table + " FORMAT JSONEachRow",
              "output_format_json_quote_64bit_integers=0");
      int rows = sameRows(table, records.get(table), columns, out);
      System.out.printf("ClickHouseFormatsIT: %s: %d rows, the records' values%n", table, rows);
    }
  }

  /** The columns of RB.table, as the sink reads them. */
  private static List<TableColumn> columns(String table) throws Exception {
    try (ClickHouseTable t = new ClickHouseTable(LocalClickHouse.URL, RB, table, 1, 10)) {
      return t.columns();
    }
  }

  /** The rows through the real sink writer, one insert. */
  private static void write(String db, String table, List<IndexedRecord> records) throws Exception {
    write(db, table, records, shape(table));
  }

  private static <T extends IndexedRecord> void write(
      String db, String table, List<T> records, RowShape<T> shape) throws Exception {
    ClickHouseSink.Writer<T> w =
        new ClickHouseSink<>(
                LocalClickHouse.URL,
                db,
                table,
                new ClickHouseSink.Batching(100_000, 1 << 25, 3_600_000),
                shape)
            .createWriter(0, null);
    try {
      for (T r : records) {
        w.write(r);
      }
      w.flush();
    } finally {
      w.close();
    }
  }

  /**
   * The JSONEachRow lines {@code out} (a server's output of the columns the rows were written with)
   * are the records' values, in any order; {@code columns}: the table's, for their types. Returns
   * the number of rows.
   */
  private static int sameRows(
      String table, List<IndexedRecord> records, List<TableColumn> columns, String out)
      throws Exception {
    List<JsonNode> got = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (!line.isEmpty()) {
        got.add(JSON.readTree(line));
      }
    }
    List<TableColumn> written = new ArrayList<>();
    List<String> names = new ArrayList<>();
    got.stream().findFirst().ifPresent(r -> r.fieldNames().forEachRemaining(names::add));
    for (String name : names) {
      written.add(columns.stream().filter(c -> c.name().equals(name)).findFirst().orElseThrow());
    }
    List<JsonNode> expected = new ArrayList<>();
    for (IndexedRecord r : records) {
      expected.addAll(ExpectedRows.of(table, r));
    }
    Comparator<JsonNode> byKey = Comparator.comparing(r -> key(r, written));
    expected.sort(byKey);
    got.sort(byKey);
    assertEquals(expected.size(), got.size(), table);
    assertEquals(
        expected.size(),
        new HashSet<>(got.stream().map(r -> key(r, written)).toList()).size(),
        table + ": unique keys");
    for (int i = 0; i < expected.size(); i++) {
      for (TableColumn c : written) {
        String where = table + "." + c.name() + " in " + got.get(i);
        JsonNode value = expected.get(i).get(c.name());
        if (value.isDouble()
            && !Double.isFinite(value.doubleValue())
            && c.type().startsWith("Nullable(")) {
          value =
              com.fasterxml.jackson.databind.node.NullNode
                  .getInstance(); // a non-finite double is NULL in a Nullable column
        }
        same(value, got.get(i).get(c.name()), c.type().contains("Float64"), where);
      }
    }
    return got.size();
  }

  /** What identifies a row: its values but the doubles (which JSON may print another way). */
  private static String key(JsonNode row, List<TableColumn> columns) {
    StringBuilder sb = new StringBuilder();
    for (TableColumn c : columns) {
      if (!c.type().contains("Float64")) {
        sb.append(row.get(c.name())).append('\u0001');
      }
    }
    return sb.toString();
  }

  /**
   * Same value; a double ({@code floating}: of a Float64 column, which the output may write as an
   * integer) the same number (-0 and 0 are the same: the output writes both as 0).
   */
  private static void same(JsonNode expected, JsonNode actual, boolean floating, String where) {
    if (expected == null || actual == null) {
      fail("missing value: " + expected + " vs " + actual + ": " + where);
    }
    if (expected.isNumber() && actual.isNumber()) {
      if (!floating) {
        assertEquals(expected.bigIntegerValue(), actual.bigIntegerValue(), where);
      } else if (expected.doubleValue() != actual.doubleValue()) {
        fail(expected + " vs " + actual + ": " + where);
      }
      return;
    }
    if (expected.isArray() && actual.isArray()) {
      assertEquals(expected.size(), actual.size(), where);
      for (int i = 0; i < expected.size(); i++) {
        same(expected.get(i), actual.get(i), floating, where);
      }
      return;
    }
    assertEquals(expected, actual, where);
  }

  /**
   * A non-finite double in a Float64 column (not Nullable) is stored as it is by RowBinary; in a
   * Nullable(Float64) column it is NULL.
   */
  @Test
  void nonFiniteDoublesAreKeptInFloat64AndNullInNullableColumns() throws Exception {
    CpiSample s =
        Fixtures.sample(
            "non-finite",
            "web/0",
            TaskClass.BATCH,
            4_102_444_800_000_000L,
            Double.NaN,
            Double.NEGATIVE_INFINITY);
    s.setTimeRunningRatio(Double.POSITIVE_INFINITY);
    s.setNumaScore(Double.POSITIVE_INFINITY);
    LocalClickHouse.query("CREATE TABLE " + RB + ".samples_non_finite AS " + RB + ".samples");
    write(RB, "samples_non_finite", List.of(s), shape("samples"));
    assertEquals(
        "-inf\tinf\t1\t1\n",
        LocalClickHouse.query(
            "SELECT toString(cpu_usage), toString(time_running_ratio),"
                + " isNull(cpi), isNull(numa_score) FROM "
                + RB
                + ".samples_non_finite"));
  }

  /**
   * The bytes of every table's rows, encoded for the local server's tables, into chdb-core with the
   * current ClickHouse's tables (LowCardinality(String) columns): the records' values read back;
   * and the encoders compiled for chdb's columns write the same bytes.
   */
  @Test
  void theSameBytesGiveTheSameRowsOnACurrentClickHouse() throws Exception {
    String python = python();
    Assumptions.assumeTrue(
        canImportChdb(python), "no Python with chdb-core (set PY, or make the project's .venv)");
    Path dir = Path.of("target", "clickhouse-formats").toAbsolutePath();
    Files.createDirectories(dir);
    Map<String, List<IndexedRecord>> records = records(12);
    Map<String, byte[]> bytes = new LinkedHashMap<>();
    Map<String, List<String>> lists = new LinkedHashMap<>();
    for (String table : ClickHouseSinks.TABLES.keySet()) {
      List<TableColumn> columns = columns(table);
      InsertPlan<IndexedRecord> plan = RowBinaryRows.compile(shape(table), columns);
      RowBatch binary = new RowBatch();
      for (IndexedRecord r : records.get(table)) {
        plan.encoder().encode(r, binary);
      }
      bytes.put(table, Arrays.copyOf(binary.array(), binary.length()));
      lists.put(table, plan.columns());
      Files.write(dir.resolve(table + ".RowBinary"), bytes.get(table));
      Files.write(dir.resolve(table + ".columns"), plan.columns());
      Files.writeString(dir.resolve(table + ".rows"), Integer.toString(binary.rows()));
    }
    Files.write(dir.resolve("tables"), ClickHouseSinks.TABLES.keySet());
    String out =
        run(
            List.of(
                python,
                new File(ROOT, "flink-jobs/src/test/python/chdb_formats_check.py").getPath(),
                dir.toString()));
    System.out.print(out);
    for (String table : ClickHouseSinks.TABLES.keySet()) {
      List<TableColumn> current =
          TableColumn.parse(Files.readString(dir.resolve(table + ".chdb-columns")));
      sameRows(
          table,
          records.get(table),
          current,
          Files.readString(dir.resolve(table + ".chdb-rows"), StandardCharsets.UTF_8));
      InsertPlan<IndexedRecord> plan = RowBinaryRows.compile(shape(table), current);
      assertEquals(lists.get(table), plan.columns(), table + ": the same columns on both servers");
      RowBatch b = new RowBatch();
      for (IndexedRecord r : records.get(table)) {
        plan.encoder().encode(r, b);
      }
      assertArrayEquals(
          bytes.get(table),
          Arrays.copyOf(b.array(), b.length()),
          table + ": the same bytes for both servers' columns");
    }
  }

  /** $PY, else the project's .venv (which has the cpi2 package), else python3. */
  static String python() {
    for (String candidate :
        new String[] {System.getenv("PY"), new File(ROOT, ".venv/bin/python").getPath()}) {
      if (candidate != null && new File(candidate).canExecute()) {
        return candidate;
      }
    }
    return "python3";
  }

  private static boolean canImportChdb(String python) throws InterruptedException {
    try {
      run(List.of(python, "-c", "import chdb"));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** Runs a command; its output, or IOException with it if it failed. */
  static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    byte[] out = p.getInputStream().readAllBytes();
    if (!p.waitFor(5, TimeUnit.MINUTES) || p.exitValue() != 0) {
      p.destroy();
      throw new IOException(
          String.join(" ", command) + " failed:\n" + new String(out, StandardCharsets.UTF_8));
    }
    return new String(out, StandardCharsets.UTF_8);
  }
}
