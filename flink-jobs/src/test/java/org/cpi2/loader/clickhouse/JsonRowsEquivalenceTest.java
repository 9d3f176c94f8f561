package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

/**
 * JsonRows (UTF-8 bytes) against the String rows the sink sent before (LegacyJsonRows, as UTF-8 the
 * way HttpRequest.BodyPublishers.ofString encoded them): every record type, with tricky values
 * ({@link TrickyRecords}: strings full of quotes, backslashes, control characters, non-ASCII and
 * non-BMP characters and lone surrogates, doubles of any bit pattern, NaN and infinities, null
 * unions and bytes), must parse to the same JSON values. The new bytes must also be valid UTF-8 and
 * strict JSON.
 */
class JsonRowsEquivalenceTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final TrickyRecords tricky = TrickyRecords.anything(2024);

  @Test
  void samplesWithTrickyValuesParseTheSame() throws Exception {
    for (int i = 0; i < 2000; i++) {
      same(tricky.sample(i), Set.of());
    }
  }

  @Test
  void specsActionsOutcomesParseTheSame() throws Exception {
    for (int i = 0; i < 500; i++) {
      same(tricky.spec(i), Set.of());
      same(tricky.action(i), Set.of());
      same(tricky.outcome(i), Set.of());
    }
  }

  @Test
  void incidentsAndTheirSuspectsParseTheSame() throws Exception {
    for (int i = 0; i < 500; i++) {
      Incident incident = tricky.incident(i);
      same(incident, Set.of("suspects"));
      same(incident, Set.of()); // the suspects as a nested array, as the legacy rows did
      List<String> legacy = LegacyJsonRows.suspects(incident);
      RowBatch batch = new RowBatch(64);
      JsonRows.suspects().encode(incident, batch);
      assertEquals(legacy.size(), batch.rows());
      List<JsonNode> rows = parseRows(batch);
      for (int k = 0; k < legacy.size(); k++) {
        sameJson(parseLegacy(legacy.get(k)), rows.get(k), legacy.get(k));
      }
    }
  }

  @Test
  void deadLettersWithBytesParseTheSame() throws Exception {
    for (int i = 0; i < 500; i++) {
      DeadLetter d = tricky.deadLetter(i);
      same(d, Set.of());
      assertEquals(0, d.getPayload().position(), "the payload is left as it was");
    }
  }

  @Test
  void rowsAreAppendedOneAfterTheOtherInOneBatch() throws Exception {
    RowBatch batch = new RowBatch(16); // grows
    List<String> legacy = new ArrayList<>();
    RowEncoder<CpiSample> encoder = JsonRows.records(CpiSample.getClassSchema(), Set.of());
    for (int i = 0; i < 300; i++) {
      CpiSample s =
          org.cpi2.flink.Fixtures.sample(
              tricky.str(),
              "web/" + i,
              TaskClass.BATCH,
              i,
              i % 2 == 0 ? null : tricky.anyDbl(),
              tricky.anyDbl());
      encoder.encode(s, batch);
      legacy.add(LegacyJsonRows.row(s, Set.of()));
    }
    List<JsonNode> rows = parseRows(batch);
    assertEquals(300, rows.size());
    for (int i = 0; i < rows.size(); i++) {
      sameJson(parseLegacy(legacy.get(i)), rows.get(i), legacy.get(i));
    }
  }

  private void same(IndexedRecord r, Set<String> skip) throws Exception {
    String legacy = LegacyJsonRows.row((org.apache.avro.specific.SpecificRecord) r, skip);
    RowBatch batch = new RowBatch(64);
    JsonRows.records(r.getSchema(), skip).encode(r, batch);
    assertEquals(1, batch.rows());
    List<JsonNode> rows = parseRows(batch);
    sameJson(parseLegacy(legacy), rows.get(0), legacy);
  }

  /** The legacy row as ClickHouse received it: UTF-8 (a lone surrogate became '?'). */
  private static JsonNode parseLegacy(String row) throws Exception {
    return JSON.readTree(row.getBytes(StandardCharsets.UTF_8));
  }

  /** The batch's rows: strict UTF-8, one JSON object per line. */
  static List<JsonNode> parseRows(RowBatch batch) throws Exception {
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(batch.array(), 0, batch.length()))
              .toString();
    } catch (CharacterCodingException e) {
      throw new AssertionError("not valid UTF-8: " + batch, e);
    }
    List<JsonNode> rows = new ArrayList<>();
    if (text.isEmpty()) {
      return rows;
    }
    assertTrue(text.endsWith("\n"), "every row ends with a newline");
    for (String line : text.substring(0, text.length() - 1).split("\n", -1)) {
      rows.add(JSON.readTree(line));
    }
    assertEquals(batch.rows(), rows.size());
    return rows;
  }

  /** Same JSON values: numbers compared by value (integers exactly, others as doubles). */
  static void sameJson(JsonNode expected, JsonNode actual, String context) {
    if (expected.isNumber() && actual.isNumber()) {
      boolean same =
          expected.isIntegralNumber() && actual.isIntegralNumber()
              ? expected.bigIntegerValue().equals(actual.bigIntegerValue())
              : Double.doubleToLongBits(expected.doubleValue())
                  == Double.doubleToLongBits(actual.doubleValue());
      if (!same) {
        fail("number " + expected + " written as " + actual + " in " + context);
      }
      return;
    }
    assertEquals(expected.getNodeType(), actual.getNodeType(), context);
    if (expected.isObject()) {
      List<String> names = new ArrayList<>();
      expected.fieldNames().forEachRemaining(names::add);
      List<String> actualNames = new ArrayList<>();
      actual.fieldNames().forEachRemaining(actualNames::add);
      assertEquals(names, actualNames, context);
      Iterator<Map.Entry<String, JsonNode>> it = expected.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        sameJson(e.getValue(), actual.get(e.getKey()), context);
      }
    } else if (expected.isArray()) {
      assertEquals(expected.size(), actual.size(), context);
      for (int i = 0; i < expected.size(); i++) {
        sameJson(expected.get(i), actual.get(i), context);
      }
    } else {
      assertEquals(expected, actual, context);
    }
  }
}
