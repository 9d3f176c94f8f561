package org.cpi2.loader.clickhouse;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.schema.Incident;

/**
 * Avro records as ClickHouse JSONEachRow lines ({@code INSERT INTO db.table FORMAT JSONEachRow}
 * with {@code input_format_skip_unknown_fields=1}), by the column contract of {@link RowShape}:
 * enums as JSON strings, nulls as {@code null}, booleans 1/0, bytes base64, non-finite doubles
 * {@code null}. Every field becomes a key; the server ignores those without a column and fills the
 * columns without a key with their defaults. The sink's fallback when a table cannot take {@link
 * RowBinaryRows}, and what tests compare RowBinary with.
 *
 * <p>The encoders are compiled once per shape ({@code "name":} prefixes as bytes, how each value is
 * written) and write UTF-8 straight into the sink's {@link RowBatch}: rows built as Strings escaped
 * char by char cost several times more. Values are read with {@link IndexedRecord#get(int)}, which
 * boxes the primitives of generated classes (measured cheap next to writing their digits).
 */
public final class JsonRows {
  private JsonRows() {}

  /** The shape's rows as JSON objects, one per line. */
  public static <T extends IndexedRecord> RowEncoder<T> of(RowShape<T> shape) {
    return new Rows<>(shape);
  }

  /** One row per record with every field of {@code schema} except those in {@code skip}. */
  public static <T extends IndexedRecord> RowEncoder<T> records(Schema schema, Set<String> skip) {
    return of(RowShape.records(schema, skip));
  }

  /** incident_suspects: one row per suspect, with the incident's identity and its rank from 1. */
  public static RowEncoder<Incident> suspects() {
    return of(RowShape.suspects());
  }

  /** One row as a String (tests, one-off use; the sink encodes into its batch). */
  public static String row(IndexedRecord r, Set<String> skip) {
    RowBatch out = new RowBatch(256);
    records(r.getSchema(), skip).encode(r, out);
    return out.toString().stripTrailing();
  }

  /** The incident_suspects rows of an incident as Strings (tests, one-off use). */
  public static List<String> suspects(Incident i) {
    RowBatch out = new RowBatch(256);
    suspects().encode(i, out);
    return out.rows() == 0 ? List.of() : List.of(out.toString().split("\n"));
  }

  /** {@code "name":}, after a comma unless it opens the object. */
  private static byte[] name(String name, boolean afterComma) {
    RowBatch b = new RowBatch(64);
    if (afterComma) {
      b.put((byte) ',');
    }
    b.putString(name);
    b.put((byte) ':');
    return Arrays.copyOf(b.array(), b.length());
  }

  private static final class Rows<T extends IndexedRecord> extends RowShape.Encoder<T> {
    private static final long serialVersionUID = 1L;
    private final Fields fields;

    Rows(RowShape<T> shape) {
      super(shape);
      this.fields = new Fields(shape);
    }

    @Override
    void row(IndexedRecord parent, IndexedRecord element, int rank, RowBatch out) {
      fields.object(parent, element, rank, out);
      out.endRow();
    }
  }

  /** The columns of a shape, compiled: name prefixes and how to write each value. */
  private static final class Fields implements Serializable {
    private static final long serialVersionUID = 1L;
    private final RowShape<?> shape;
    private final byte[][] names;
    private final Value[] values;

    Fields(RowShape<?> shape) {
      this.shape = shape;
      names = new byte[shape.columns()][];
      values = new Value[shape.columns()];
      for (int i = 0; i < names.length; i++) {
        names[i] = name(shape.name(i), i > 0);
        values[i] = new Value(shape.value(i));
      }
    }

    void object(IndexedRecord parent, IndexedRecord element, int rank, RowBatch out) {
      out.put((byte) '{');
      for (int i = 0; i < names.length; i++) {
        out.put(names[i]);
        values[i].write(shape.get(i, parent, element, rank), out);
      }
      out.put((byte) '}');
    }
  }

  /** How the values of one column are written. */
  private static final class Value implements Serializable {
    private static final long serialVersionUID = 1L;
    private final RowShape.Value.Kind kind;
    private final Value items;
    private final Fields record;

    /** Enum symbols as quoted JSON, by ordinal of the enum class last seen (built on first use). */
    private transient EnumSymbols symbols; // immutable: safe to race on

    Value(RowShape.Value v) {
      kind = v.kind;
      items = v.items == null ? null : new Value(v.items);
      record = v.record == null ? null : new Fields(v.record);
    }

    void write(Object v, RowBatch out) {
      if (v == null) {
        out.putNull();
        return;
      }
      switch (kind) {
        case STRING -> out.putString((CharSequence) v);
        case INT, LONG -> out.putLong(((Number) v).longValue());
        case DOUBLE -> out.putDouble(((Number) v).doubleValue());
        case ENUM -> writeEnum(v, out);
        case BOOLEAN -> out.putBoolean((Boolean) v);
        case FLOAT -> out.putFloat(((Number) v).floatValue());
        case BYTES -> out.putBase64((ByteBuffer) v);
        case ARRAY -> {
          out.put((byte) '[');
          boolean first = true;
          for (Object item : (Collection<?>) v) {
            if (!first) {
              out.put((byte) ',');
            }
            first = false;
            items.write(item, out);
          }
          out.put((byte) ']');
        }
        case RECORD -> record.object((IndexedRecord) v, null, 0, out);
        default -> out.putNull();
      }
    }

    private void writeEnum(Object v, RowBatch out) {
      if (!(v instanceof Enum<?> e)) {
        out.putString(v.toString()); // a GenericEnumSymbol
        return;
      }
      EnumSymbols s = symbols;
      if (s == null || !s.isFor(e)) {
        s = EnumSymbols.of(e, JsonRows::quoted);
        symbols = s;
      }
      out.put(s.of(e));
    }
  }

  private static byte[] quoted(String symbol) {
    RowBatch b = new RowBatch(64);
    b.putString(symbol);
    return Arrays.copyOf(b.array(), b.length());
  }
}
