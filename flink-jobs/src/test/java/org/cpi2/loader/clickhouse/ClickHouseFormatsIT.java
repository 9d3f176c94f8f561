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
 * RowBinary against JSONEachRow through the real tables: cpi2.clickhouse.apply applies the
 * migrations to two throw-away databases on the local ClickHouse (18.16), the sink writes the same
 * tricky records ({@link TrickyRecords#forTables}) into every table the job writes, one database
 * per format, and every column (materialized ones too) is read back with FORMAT JSONEachRow. The
 * RowBinary rows must be the records' values exactly; the JSON rows the same, except that 18.16
 * parses some doubles of JSON text 1 ulp off (counted and printed; current ClickHouse parses them
 * exactly). The same bytes then go through chdb-core (a current ClickHouse, LowCardinality columns)
 * with src/test/python/chdb_formats_check.py, when a Python with chdb is found ($PY, else
 * ../.venv/bin/python).
 */
class ClickHouseFormatsIT {
  static final File ROOT = new File(System.getProperty("user.dir")).getParentFile();
  static final String RB = "cpi2_rowbinary_it_" + ProcessHandle.current().pid();
  static final String JS = "cpi2_json_it_" + ProcessHandle.current().pid();
  private static final ObjectMapper JSON = new ObjectMapper();

  @BeforeAll
  static void applySchema() throws Exception {
    String missing = LocalClickHouse.ensureUp();
    Assumptions.assumeTrue(missing == null, missing);
    for (String db : List.of(RB, JS)) {
      String out =
          run(
              List.of(
                  python(),
                  "-m",
                  "cpi2.clickhouse.apply",
                  "--url",
                  LocalClickHouse.URL,
                  "--database",
                  db));
      assertTrue(out.contains("applied"), out);
    }
  }

  @AfterAll
  static void dropDatabases() throws Exception {
    if (LocalClickHouse.answers()) {
      for (String db : List.of(RB, JS)) {
        LocalClickHouse.query("DROP DATABASE IF EXISTS " + db);
      }
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
  void everyTableGetsTheSameRowsFromBothFormats() throws Exception {
    Map<String, List<IndexedRecord>> records = records(11);
    int inexact = 0;
    int doubles = 0;
    for (String table : ClickHouseSinks.TABLES.keySet()) {
      List<TableColumn> columns =
          TableColumn.read(new ClickHouseHttp(LocalClickHouse.URL, RB, table, 1, 10), RB, table);
      assertEquals(
          InsertPlan.ROW_BINARY,
          InsertPlan.forTable(shape(table), RB + "." + table, columns).format(),
          table + " takes RowBinary rows");
      write(RB, table, InsertPlan.ROW_BINARY, records.get(table));
      write(JS, table, InsertPlan.JSON_EACH_ROW, records.get(table));

      List<JsonNode> expected = new ArrayList<>();
      RowBatch json = new RowBatch();
      RowEncoder<IndexedRecord> jsonRows = JsonRows.of(shape(table));
      for (IndexedRecord r : records.get(table)) {
        jsonRows.encode(r, json);
      }
      for (String line : json.toString().split("\n")) {
        expected.add(JSON.readTree(line));
      }
      List<JsonNode> binary = select(RB, table, columns);
      List<JsonNode> fromJson = select(JS, table, columns);
      Comparator<JsonNode> byKey = Comparator.comparing(r -> key(r, columns));
      expected.sort(byKey);
      assertEquals(expected.size(), binary.size(), table);
      assertEquals(expected.size(), fromJson.size(), table);
      assertEquals(
          expected.size(),
          new HashSet<>(binary.stream().map(r -> key(r, columns)).toList()).size(),
          table + ": unique keys");
      for (int i = 0; i < expected.size(); i++) {
        for (TableColumn c : columns) {
          String where = table + "." + c.name() + " in " + binary.get(i);
          boolean floating = c.type().contains("Float64");
          if (!c.computed()) {
            same(expected.get(i).get(c.name()), binary.get(i).get(c.name()), floating, 0, where);
          }
          inexact +=
              same(
                  binary.get(i).get(c.name()),
                  fromJson.get(i).get(c.name()),
                  floating,
                  1,
                  where + " vs JSON's " + fromJson.get(i));
          doubles += floating ? 1 : 0;
        }
      }
      System.out.printf(
          "ClickHouseFormatsIT: %s: %d rows, the same from RowBinary and JSONEachRow%n",
          table, expected.size());
    }
    System.out.printf(
        "ClickHouseFormatsIT: the JSONEachRow rows had %d of %d Float64 values 1 ulp off (the server's parser of JSON text)%n",
        inexact, doubles);
  }

  /** The rows through the real sink writer, one insert. */
  private static void write(String db, String table, String format, List<IndexedRecord> records)
      throws Exception {
    write(db, table, format, records, shape(table));
  }

  private static <T extends IndexedRecord> void write(
      String db, String table, String format, List<T> records, RowShape<T> shape) throws Exception {
    ClickHouseSink.Writer<T> w =
        new ClickHouseSink<>(
                LocalClickHouse.URL,
                db,
                table,
                new ClickHouseSink.Batching(100_000, 1 << 25, 3_600_000),
                shape,
                format)
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

  /** Every column, materialized ones too, sorted by {@link #key}. */
  private static List<JsonNode> select(String db, String table, List<TableColumn> columns)
      throws Exception {
    String list = String.join(", ", columns.stream().map(c -> "`" + c.name() + "`").toList());
    String out =
        LocalClickHouse.query(
            "SELECT " + list + " FROM " + db + "." + table + " FORMAT JSONEachRow",
            "output_format_json_quote_64bit_integers=0");
    List<JsonNode> rows = new ArrayList<>();
    for (String line : out.split("\n")) {
      if (!line.isEmpty()) {
        rows.add(JSON.readTree(line));
      }
    }
    rows.sort(Comparator.comparing(r -> key(r, columns)));
    return rows;
  }

  /**
   * What identifies a row in both formats: its values but the doubles (JSON may move them by 1
   * ulp).
   */
  private static String key(JsonNode row, List<TableColumn> columns) {
    StringBuilder sb = new StringBuilder();
    for (TableColumn c : columns) {
      if (!c.computed() && !c.type().contains("Float64")) {
        sb.append(row.get(c.name())).append('\u0001');
      }
    }
    return sb.toString();
  }

  /**
   * Same value; a double ({@code floating}: of a Float64 column, which the output may write as an
   * integer) may differ by {@code ulps} (-0 and 0 are the same: the output writes both as 0).
   * Returns 1 if a double differed, else 0.
   */
  private static int same(
      JsonNode expected, JsonNode actual, boolean floating, int ulps, String where) {
    if (expected == null || actual == null) {
      fail("missing value: " + expected + " vs " + actual + ": " + where);
    }
    if (expected.isNumber() && actual.isNumber()) {
      if (!floating) {
        assertEquals(expected.bigIntegerValue(), actual.bigIntegerValue(), where);
        return 0;
      }
      double a = expected.doubleValue();
      double b = actual.doubleValue();
      if (a == b) {
        return 0;
      }
      if (ulps > 0 && Math.abs(a - b) <= ulps * Math.ulp(a)) {
        return 1;
      }
      fail(expected + " vs " + actual + ": " + where);
    }
    if (expected.isArray() && actual.isArray()) {
      assertEquals(expected.size(), actual.size(), where);
      int off = 0;
      for (int i = 0; i < expected.size(); i++) {
        off += same(expected.get(i), actual.get(i), floating, ulps, where);
      }
      return off;
    }
    assertEquals(expected, actual, where);
    return 0;
  }

  /**
   * A non-finite double in a Float64 column (not Nullable) is stored as it is by RowBinary; in a
   * Nullable(Float64) column it is NULL, as JSON's null makes it.
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
    write(RB, "samples_non_finite", InsertPlan.ROW_BINARY, List.of(s), shape("samples"));
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
   * current ClickHouse's tables (LowCardinality(String) columns): the same rows from both formats;
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
      List<TableColumn> columns =
          TableColumn.read(new ClickHouseHttp(LocalClickHouse.URL, RB, table, 1, 10), RB, table);
      InsertPlan<IndexedRecord> plan = RowBinaryRows.compile(shape(table), columns);
      RowBatch binary = new RowBatch();
      RowBatch json = new RowBatch();
      for (IndexedRecord r : records.get(table)) {
        plan.encoder().encode(r, binary);
        JsonRows.of(shape(table)).encode(r, json);
      }
      bytes.put(table, Arrays.copyOf(binary.array(), binary.length()));
      lists.put(table, plan.columns());
      Files.write(dir.resolve(table + ".RowBinary"), bytes.get(table));
      Files.write(dir.resolve(table + ".JSONEachRow"), Arrays.copyOf(json.array(), json.length()));
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
