package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;

/**
 * What a table's rows must hold for a record, by the column contract (clickhouse/migrations),
 * written from the Avro record and schema alone, apart from RowShape and RowBinaryRows: one object
 * per row, a member per column. Strings (as UTF-8 makes them) and enum symbols are text, booleans 1
 * or 0, ints and longs integers, doubles doubles (NaN and infinities too), bytes their base64, null
 * null, arrays arrays. incidents has every field but suspects; incident_suspects one row per
 * suspect: the incident's id, host and time, the rank from 1, then the suspect's fields.
 */
final class ExpectedRows {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  private ExpectedRows() {}

  static List<ObjectNode> of(String table, IndexedRecord r) {
    List<ObjectNode> rows = new ArrayList<>();
    if (!table.equals("incident_suspects")) {
      ObjectNode row = NODES.objectNode();
      for (Schema.Field f : r.getSchema().getFields()) {
        if (!(table.equals("incidents") && f.name().equals("suspects"))) {
          row.set(f.name(), value(r.get(f.pos())));
        }
      }
      rows.add(row);
      return rows;
    }
    Collection<?> suspects = (Collection<?>) r.get(r.getSchema().getField("suspects").pos());
    int rank = 0;
    for (Object o : suspects == null ? List.of() : suspects) {
      IndexedRecord s = (IndexedRecord) o;
      ObjectNode row = NODES.objectNode();
      for (String parent : List.of("incident_id", "host", "detected_at_us", "signal")) {
        row.set(parent, value(r.get(r.getSchema().getField(parent).pos())));
      }
      row.put("rank", ++rank);
      for (Schema.Field f : s.getSchema().getFields()) {
        row.set(f.name(), value(s.get(f.pos())));
      }
      rows.add(row);
    }
    return rows;
  }

  static JsonNode value(Object v) {
    if (v == null) {
      return NODES.nullNode();
    } else if (v instanceof CharSequence) {
      // As the server has it: UTF-8 (a lone surrogate is '?').
      return NODES.textNode(
          new String(v.toString().getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8));
    } else if (v instanceof Enum<?>) {
      return NODES.textNode(v.toString());
    } else if (v instanceof org.apache.avro.generic.GenericEnumSymbol<?>) {
      return NODES.textNode(v.toString());
    } else if (v instanceof Boolean b) {
      return NODES.numberNode(b ? 1 : 0);
    } else if (v instanceof Integer || v instanceof Long) {
      return NODES.numberNode(((Number) v).longValue());
    } else if (v instanceof Float || v instanceof Double) {
      return NODES.numberNode(((Number) v).doubleValue());
    } else if (v instanceof ByteBuffer b) {
      ByteBuffer copy = b.duplicate();
      byte[] raw = new byte[copy.remaining()];
      copy.get(raw);
      return NODES.textNode(Base64.getEncoder().encodeToString(raw));
    } else if (v instanceof Collection<?> c) {
      ArrayNode a = NODES.arrayNode();
      c.forEach(e -> a.add(value(e)));
      return a;
    }
    throw new IllegalArgumentException("no column contract for " + v.getClass());
  }

  /** Same JSON values: numbers compared by value (integers exactly, others as doubles' bits). */
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
