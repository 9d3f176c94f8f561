package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.IntFunction;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

/**
 * RowBinaryRows without a server: every table's rows, with tricky values, read back (by an
 * independent reader) as the values the contract gives the same records ({@link ExpectedRows});
 * non-finite doubles; which columns an insert names; LowCardinality; the tables it refuses, naming
 * the column and its type; the batch's writers. ClickHouseFormatsIT puts the rows through the real
 * tables.
 */
class RowBinaryRowsTest {
  private final TrickyRecords tricky = TrickyRecords.anything(7);

  /** Records for each table the job writes. */
  private Map<String, IntFunction<IndexedRecord>> records() {
    return Map.of(
        "samples",
        tricky::sample,
        "specs",
        tricky::spec,
        "incidents",
        tricky::incident,
        "incident_suspects",
        tricky::incident,
        "actions",
        tricky::action,
        "outcomes",
        tricky::outcome,
        "dead_letters",
        tricky::deadLetter);
  }

  @Test
  void everyTablesRowsReadBackAsTheirRecordsValues() throws Exception {
    for (Map.Entry<String, RowShape<?>> t : ClickHouseSinks.TABLES.entrySet()) {
      @SuppressWarnings("unchecked")
      RowShape<IndexedRecord> shape = (RowShape<IndexedRecord>) t.getValue();
      List<TableColumn> columns = ContractColumns.of(shape, false);
      InsertPlan<IndexedRecord> plan = RowBinaryRows.compile(shape, columns);
      InsertPlan<IndexedRecord> lowCardinality =
          RowBinaryRows.compile(shape, ContractColumns.of(shape, true));
      RowBatch binary = new RowBatch(64);
      RowBatch binaryLc = new RowBatch(64);
      List<ObjectNode> expected = new ArrayList<>();
      for (int i = 0; i < 400; i++) {
        IndexedRecord r = records().get(t.getKey()).apply(i);
        plan.encoder().encode(r, binary);
        lowCardinality.encoder().encode(r, binaryLc);
        expected.addAll(ExpectedRows.of(t.getKey(), r));
      }
      assertEquals(expected.size(), binary.rows(), t.getKey());
      assertArrayEquals(
          Arrays.copyOf(binary.array(), binary.length()),
          Arrays.copyOf(binaryLc.array(), binaryLc.length()),
          t.getKey() + ": LowCardinality(String) takes the bytes of String");
      List<ObjectNode> read =
          new RowBinaryReader(binary.array(), binary.length())
              .rows(plan.columns(), columns.stream().map(TableColumn::type).toList());
      assertEquals(expected.size(), read.size(), t.getKey());
      for (int k = 0; k < read.size(); k++) {
        sameValues(expected.get(k), read.get(k), t.getKey() + " row " + k + ": " + expected.get(k));
      }
    }
  }

  @Test
  void recordsThatWriteThemselvesGiveTheBytesOfTheGeneralEncoder() throws Exception {
    List<String> flat = new ArrayList<>();
    for (Map.Entry<String, RowShape<?>> t : ClickHouseSinks.TABLES.entrySet()) {
      @SuppressWarnings("unchecked")
      RowShape<IndexedRecord> shape = (RowShape<IndexedRecord>) t.getValue();
      if (shape.flatRecord() == null) {
        continue;
      }
      flat.add(t.getKey());
      RowEncoder<IndexedRecord> encoder =
          RowBinaryRows.compile(shape, ContractColumns.of(shape, false)).encoder();
      assertEquals("SelfWrittenRows", encoder.getClass().getSimpleName(), t.getKey());
      RowBatch self = new RowBatch(64);
      RowBatch general = new RowBatch(64);
      for (int i = 0; i < 400; i++) {
        IndexedRecord r = records().get(t.getKey()).apply(i);
        // The same values in a GenericData.Record, which does not write itself: the general
        // encoder.
        IndexedRecord generic = (IndexedRecord) GenericData.get().deepCopy(r.getSchema(), r);
        assertTrue(generic instanceof GenericData.Record);
        encoder.encode(r, self);
        encoder.encode(generic, general);
      }
      assertEquals(400, self.rows());
      assertArrayEquals(
          Arrays.copyOf(general.array(), general.length()),
          Arrays.copyOf(self.array(), self.length()),
          t.getKey());
    }
    assertEquals(List.of("samples", "specs", "actions", "outcomes", "dead_letters"), flat);
  }

  @Test
  void aTableWithoutSomeFieldsGetsTheOthersFromARecordThatWritesItself() throws Exception {
    RowShape<CpiSample> shape = ClickHouseSinks.SAMPLES;
    List<TableColumn> columns =
        ContractColumns.of(shape, false).stream()
            .filter(c -> !Set.of("task_id", "cycles", "cpi", "task_class").contains(c.name()))
            .toList();
    InsertPlan<CpiSample> plan = RowBinaryRows.compile(shape, columns);
    CpiSample s = Fixtures.sample("h", "web/0", TaskClass.BATCH, 0, 1.5, 0.5);
    RowBatch self = new RowBatch(64);
    RowBatch general = new RowBatch(64);
    plan.encoder().encode(s, self);
    @SuppressWarnings("unchecked")
    RowEncoder<IndexedRecord> any = (RowEncoder<IndexedRecord>) (RowEncoder<?>) plan.encoder();
    any.encode((IndexedRecord) GenericData.get().deepCopy(s.getSchema(), s), general);
    assertArrayEquals(
        Arrays.copyOf(general.array(), general.length()),
        Arrays.copyOf(self.array(), self.length()));
    assertEquals(columns.size(), plan.columns().size());
  }

  /**
   * The expected value of each column: a non-finite double is NULL in a Nullable column (the
   * reader's null) and itself in a Float64 column.
   */
  private static void sameValues(JsonNode values, ObjectNode binary, String context) {
    binary
        .fields()
        .forEachRemaining(
            e -> {
              JsonNode expected = values.get(e.getKey());
              JsonNode actual = e.getValue();
              if (expected.isDouble()
                  && !Double.isFinite(expected.doubleValue())
                  && actual.isNull()) { // only a Nullable column reads back as null
                return;
              }
              ExpectedRows.sameJson(expected, actual, e.getKey() + " in " + context);
            });
  }

  @Test
  void aNonFiniteDoubleIsNullInANullableColumnAndItselfInAFloat64Column() throws Exception {
    CpiSample s =
        Fixtures.sample("h", "web/0", TaskClass.BATCH, 0, Double.NEGATIVE_INFINITY, Double.NaN);
    s.setTimeRunningRatio(Double.POSITIVE_INFINITY);
    s.setNumaScore(Double.NaN);
    RowShape<CpiSample> shape = ClickHouseSinks.SAMPLES;
    List<TableColumn> columns = ContractColumns.of(shape, false);
    InsertPlan<CpiSample> plan = RowBinaryRows.compile(shape, columns);
    RowBatch b = new RowBatch(64);
    plan.encoder().encode(s, b);
    ObjectNode row =
        new RowBinaryReader(b.array(), b.length())
            .rows(plan.columns(), columns.stream().map(TableColumn::type).toList())
            .get(0);
    assertTrue(Double.isNaN(row.get("cpu_usage").doubleValue()));
    assertEquals(Double.POSITIVE_INFINITY, row.get("time_running_ratio").doubleValue());
    assertTrue(row.get("cpi").isNull(), "Nullable(Float64): -Infinity is NULL");
    assertTrue(row.get("numa_score").isNull());
  }

  private static List<TableColumn> columns(String... nameTypeKind) {
    List<TableColumn> columns = new ArrayList<>();
    for (int i = 0; i < nameTypeKind.length; i += 3) {
      columns.add(new TableColumn(nameTypeKind[i], nameTypeKind[i + 1], nameTypeKind[i + 2]));
    }
    return columns;
  }

  @Test
  void theInsertNamesTheColumnsItWritesInTheShapesOrder() throws Exception {
    RowShape<CpiSample> shape = ClickHouseSinks.SAMPLES;
    InsertPlan<CpiSample> plan =
        RowBinaryRows.compile(
            shape,
            columns(
                "event_date",
                "Date",
                "MATERIALIZED",
                "cpu_usage",
                "Float64",
                "",
                "host",
                "LowCardinality(String)",
                "",
                "task",
                "String",
                "DEFAULT", // a default, and a field: written
                "window_start_us",
                "Int64",
                "MATERIALIZED", // computed by the server even if a field has its name
                "threads",
                "Nullable(Int64)",
                "", // an Avro int widened
                "tags",
                "Array(String)",
                "DEFAULT", // a default and no field: the server's
                "ts",
                "DateTime",
                "ALIAS"));
    assertEquals(
        List.of("host", "task", "cpu_usage", "threads"),
        plan.columns(),
        "fields without a column are left out");

    RowBatch b = new RowBatch(64);
    CpiSample s = Fixtures.sample("h1", "web/0", TaskClass.BATCH, 0, null, 0.5);
    s.setThreads(-3);
    plan.encoder().encode(s, b);
    ByteBuffer expected =
        ByteBuffer.allocate(64)
            .order(ByteOrder.LITTLE_ENDIAN)
            .put((byte) 2)
            .put("h1".getBytes(StandardCharsets.US_ASCII))
            .put((byte) 5)
            .put("web/0".getBytes(StandardCharsets.US_ASCII))
            .putDouble(0.5)
            .put((byte) 0)
            .putLong(-3);
    assertArrayEquals(
        Arrays.copyOf(expected.array(), expected.position()), Arrays.copyOf(b.array(), b.length()));
    assertEquals(1, b.rows());
  }

  @Test
  void aTableItCannotWriteExactlyFailsTheWriterNamingTheColumnAndType() throws Exception {
    RowShape<CpiSample> shape = ClickHouseSinks.SAMPLES;
    List<TableColumn> contract = ContractColumns.of(shape, false);
    Map<String, List<TableColumn>> refused =
        Map.of(
            "column added String has no field in CpiSample and no default",
                with(contract, new TableColumn("added", "String", "")),
            "column cpu_usage Decimal(10, 2) (CpiSample.cpu_usage: double)",
                replace(contract, "cpu_usage", "Decimal(10, 2)"),
            "column host FixedString(16)", replace(contract, "host", "FixedString(16)"),
            "column cpi Float64 (CpiSample.cpi: [\"null\", double]): a nullable value needs a Nullable column",
                replace(contract, "cpi", "Float64"),
            "column window_us Int32 (CpiSample.window_us: long)",
                replace(contract, "window_us", "Int32"),
            "column is_protected Bool", replace(contract, "is_protected", "Bool"),
            "no column of the table has a field in CpiSample (no columns: no such table?)",
                List.of());
    for (Map.Entry<String, List<TableColumn>> e : refused.entrySet()) {
      RowBinaryRows.Unsupported u =
          assertThrows(
              RowBinaryRows.Unsupported.class, () -> RowBinaryRows.compile(shape, e.getValue()));
      assertTrue(u.getMessage().startsWith(e.getKey()), u.getMessage());
      IOException io =
          assertThrows(
              IOException.class, () -> InsertPlan.forTable(shape, "db.samples", e.getValue()));
      assertTrue(
          io.getMessage()
              .startsWith(
                  "clickhouse: db.samples does not fit the rows of CpiSample: " + e.getKey()),
          io.getMessage());
    }
    assertEquals(
        contract.size(), InsertPlan.forTable(shape, "db.samples", contract).columns().size());
  }

  private static List<TableColumn> with(List<TableColumn> columns, TableColumn extra) {
    List<TableColumn> c = new ArrayList<>(columns);
    c.add(extra);
    return c;
  }

  private static List<TableColumn> replace(List<TableColumn> columns, String name, String type) {
    return columns.stream()
        .map(c -> c.name().equals(name) ? new TableColumn(name, type, c.defaultKind()) : c)
        .toList();
  }

  @Test
  void columnTypesAsRowBinaryWritesThem() {
    assertEquals(
        new RowBinaryRows.ColumnType("String", true, null),
        RowBinaryRows.ColumnType.parse("LowCardinality(Nullable(String))"));
    assertEquals(
        new RowBinaryRows.ColumnType(
            "Array", false, new RowBinaryRows.ColumnType("Int64", true, null)),
        RowBinaryRows.ColumnType.parse("Array(Nullable(Int64))"));
    assertEquals(
        new RowBinaryRows.ColumnType("DateTime('Etc/UTC')", false, null),
        RowBinaryRows.ColumnType.parse("DateTime('Etc/UTC')"));
  }

  @Test
  void systemColumnsRowsParse() {
    assertEquals(
        List.of(
            new TableColumn("host", "LowCardinality(String)", ""),
            new TableColumn("ts", "DateTime('Etc/UTC')", "MATERIALIZED")),
        TableColumn.parse(
            "host\tLowCardinality(String)\t\nts\tDateTime('Etc/UTC')\tMATERIALIZED\n"));
    assertEquals("'a\\'b\\\\c'", TableColumn.quote("a'b\\c"));
  }

  @Test
  void varintsAndFixedWidthNumbersAreLittleEndian() {
    RowBatch b = new RowBatch(1);
    for (long v : new long[] {0, 1, 127, 128, 300, 16_383, 16_384, Integer.MAX_VALUE, -1}) {
      b.clear();
      b.putVarUInt(v);
      assertArrayEquals(varUInt(v), Arrays.copyOf(b.array(), b.length()), Long.toString(v));
    }
    b.clear();
    b.putInt32(0x01020304);
    b.putInt64(0x0102030405060708L);
    b.putFloat64(Double.longBitsToDouble(0x7ff8_0000_0000_0001L)); // a NaN with a payload, kept
    ByteBuffer expected =
        ByteBuffer.allocate(20)
            .order(ByteOrder.LITTLE_ENDIAN)
            .putInt(0x01020304)
            .putLong(0x0102030405060708L)
            .putLong(0x7ff8_0000_0000_0001L);
    assertArrayEquals(expected.array(), Arrays.copyOf(b.array(), b.length()));
  }

  /** LEB128, written out the slow way. */
  private static byte[] varUInt(long v) {
    java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
    do {
      long low = v & 0x7f;
      v >>>= 7;
      out.write((int) (v != 0 ? low | 0x80 : low));
    } while (v != 0);
    return out.toByteArray();
  }

  @Test
  void stringsAreTheirUtf8AfterItsLength() throws Exception {
    String ascii127 = "a".repeat(127);
    for (String s :
        new String[] {
          "",
          "plain",
          ascii127,
          ascii127 + "b",
          "a".repeat(100) + "é".repeat(20),
          "é".repeat(100),
          "\u0000\n\"\\",
          "emoji \uD83D\uDE00",
          "lone \uD83D high",
          "\uDE00",
          "日本語".repeat(50)
        }) {
      RowBatch b = new RowBatch(1);
      b.put((byte) 9); // the string follows other bytes
      b.putBinaryString(s);
      byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
      ByteBuffer expected =
          ByteBuffer.allocate(1 + 10 + utf8.length)
              .put((byte) 9)
              .put(varUInt(utf8.length))
              .put(utf8);
      assertArrayEquals(
          Arrays.copyOf(expected.array(), expected.position()),
          Arrays.copyOf(b.array(), b.length()),
          s);
    }
  }

  @Test
  void bytesAreTheirBase64() {
    RowBatch b = new RowBatch(1);
    ByteBuffer payload = ByteBuffer.wrap(new byte[] {(byte) 0xC3, 1, 0});
    b.putBinaryBase64(payload);
    assertArrayEquals(new byte[] {4, 'w', 'w', 'E', 'A'}, Arrays.copyOf(b.array(), b.length()));
    assertEquals(0, payload.position());
  }
}
