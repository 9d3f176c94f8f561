package org.cpi2.loader.clickhouse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads RowBinary rows back, by the columns' types, into JSON objects as {@link ExpectedRows} makes
 * them (a test's independent reader: written from ClickHouse's description of the format, not from
 * RowBinaryRows). A Float64 that is not finite is kept as a DoubleNode, which JSON cannot hold.
 */
final class RowBinaryReader {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private final ByteBuffer in;

  RowBinaryReader(byte[] bytes, int length) {
    in = ByteBuffer.wrap(bytes, 0, length).order(ByteOrder.LITTLE_ENDIAN);
  }

  /** Every row of the batch; fails on bytes left over or missing. */
  List<ObjectNode> rows(List<String> names, List<String> types) {
    List<RowBinaryRows.ColumnType> parsed =
        types.stream().map(RowBinaryRows.ColumnType::parse).toList();
    List<ObjectNode> rows = new ArrayList<>();
    while (in.hasRemaining()) {
      ObjectNode row = NODES.objectNode();
      for (int i = 0; i < names.size(); i++) {
        row.set(names.get(i), value(parsed.get(i)));
      }
      rows.add(row);
    }
    return rows;
  }

  private JsonNode value(RowBinaryRows.ColumnType t) {
    if (t.nullable()) {
      byte flag = in.get();
      if (flag == 1) {
        return NODES.nullNode();
      }
      if (flag != 0) {
        throw new AssertionError("Nullable flag " + flag);
      }
    }
    return switch (t.name()) {
      case "String" -> NODES.textNode(string());
      case "UInt8" -> NODES.numberNode(in.get() & 0xff);
      case "Int32" -> NODES.numberNode(in.getInt());
      case "Int64" -> NODES.numberNode(in.getLong());
      case "Float64" -> NODES.numberNode(in.getDouble());
      case "Array" -> {
        ArrayNode a = NODES.arrayNode();
        for (long n = varUInt(); n > 0; n--) {
          a.add(value(t.items()));
        }
        yield a;
      }
      default -> throw new AssertionError("no reader for " + t);
    };
  }

  private long varUInt() {
    long v = 0;
    for (int shift = 0; ; shift += 7) {
      byte b = in.get();
      v |= (long) (b & 0x7f) << shift;
      if (b >= 0) {
        return v;
      }
    }
  }

  /** Strict UTF-8, as the JSON rows are. */
  private String string() {
    byte[] b = new byte[Math.toIntExact(varUInt())];
    in.get(b);
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(b))
          .toString();
    } catch (CharacterCodingException e) {
      throw new AssertionError("not valid UTF-8", e);
    }
  }
}
