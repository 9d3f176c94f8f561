package org.cpi2.flink.io;

import java.io.Serializable;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.schema.Incident;

/**
 * Avro records as ClickHouse JSONEachRow lines, by the contract with clickhouse/: columns are the
 * Avro field names; enums are their symbol as a string; unions are null or the value; booleans
 * are 1/0 (UInt8 on ClickHouse 18.16); bytes are base64; non-finite doubles are null; timestamps
 * stay Int64 microseconds.
 *
 * <p>The encoders are compiled once per schema (field positions, {@code "name":} prefixes as
 * bytes, how each value is written) and write UTF-8 straight into the sink's {@link RowBatch}:
 * building the rows was about a third of the Kafka source thread's time when each row was a
 * String escaped char by char. One generic path serves every record; values are read with
 * {@link IndexedRecord#get(int)}, which boxes the primitives of generated classes (measured
 * cheap next to writing their digits).
 */
public final class JsonRows {
  private JsonRows() {}

  /** One row per record with every field of {@code schema} except those in {@code skip}. */
  public static <T extends IndexedRecord> RowEncoder<T> records(Schema schema, Set<String> skip) {
    return new RecordRows<>(Fields.of(schema, skip));
  }

  /**
   * One row per element of the array of records {@code arrayField}: the parent's
   * {@code parentFields}, {@code rankColumn} (1 for the first element), then every field of the
   * element.
   */
  public static <T extends IndexedRecord> RowEncoder<T> elements(
      Schema parent, List<String> parentFields, String arrayField, String rankColumn) {
    Schema.Field array = field(parent, arrayField);
    Schema items = array.schema().getType() == Schema.Type.ARRAY ? array.schema().getElementType() : null;
    if (items == null || items.getType() != Schema.Type.RECORD) {
      throw new IllegalArgumentException(parent.getName() + "." + arrayField + " is not an array of records");
    }
    List<Schema.Field> head = new ArrayList<>();
    for (String name : parentFields) {
      head.add(field(parent, name));
    }
    return new ElementRows<>(new Fields(head, false), array.pos(), name(rankColumn, true), new Fields(items.getFields(), true));
  }

  /** incident_suspects: one row per suspect, with the incident's identity and its rank from 1. */
  public static RowEncoder<Incident> suspects() {
    return elements(Incident.getClassSchema(), List.of("incident_id", "host", "detected_at_us"), "suspects", "rank");
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

  private static Schema.Field field(Schema schema, String name) {
    Schema.Field f = schema.getField(name);
    if (f == null) {
      throw new IllegalArgumentException(schema.getName() + " has no field " + name);
    }
    return f;
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

  private static final class RecordRows<T extends IndexedRecord> implements RowEncoder<T> {
    private static final long serialVersionUID = 1L;
    private final Fields fields;

    RecordRows(Fields fields) {
      this.fields = fields;
    }

    @Override
    public void encode(T r, RowBatch out) {
      fields.object(r, out);
      out.endRow();
    }
  }

  private static final class ElementRows<T extends IndexedRecord> implements RowEncoder<T> {
    private static final long serialVersionUID = 1L;
    private final Fields head;
    private final int arrayPos;
    private final byte[] rankName;
    private final Fields element;

    ElementRows(Fields head, int arrayPos, byte[] rankName, Fields element) {
      this.head = head;
      this.arrayPos = arrayPos;
      this.rankName = rankName;
      this.element = element;
    }

    @Override
    public void encode(T r, RowBatch out) {
      Collection<?> items = (Collection<?>) r.get(arrayPos);
      if (items == null) {
        return;
      }
      int rank = 0;
      for (Object item : items) {
        out.put((byte) '{');
        head.write(r, out);
        out.put(rankName);
        out.putLong(++rank);
        element.write((IndexedRecord) item, out);
        out.put((byte) '}');
        out.endRow();
      }
    }
  }

  /** Some fields of a record schema, compiled: positions, name prefixes, how to write each value. */
  static final class Fields implements Serializable {
    private static final long serialVersionUID = 1L;
    private final int[] pos;
    private final byte[][] names;
    private final Value[] values;

    static Fields of(Schema schema, Set<String> skip) {
      if (schema.getType() != Schema.Type.RECORD) {
        throw new IllegalArgumentException(schema.getName() + " is not a record");
      }
      List<Schema.Field> kept = new ArrayList<>();
      for (Schema.Field f : schema.getFields()) {
        if (!skip.contains(f.name())) {
          kept.add(f);
        }
      }
      return new Fields(kept, false);
    }

    /** {@code continued}: the fields follow others in the same object (all names after a comma). */
    Fields(List<Schema.Field> fields, boolean continued) {
      pos = new int[fields.size()];
      names = new byte[fields.size()][];
      values = new Value[fields.size()];
      for (int i = 0; i < pos.length; i++) {
        Schema.Field f = fields.get(i);
        pos[i] = f.pos();
        names[i] = name(f.name(), continued || i > 0);
        values[i] = Value.of(f.schema());
      }
    }

    void object(IndexedRecord r, RowBatch out) {
      out.put((byte) '{');
      write(r, out);
      out.put((byte) '}');
    }

    void write(IndexedRecord r, RowBatch out) {
      for (int i = 0; i < pos.length; i++) {
        out.put(names[i]);
        values[i].write(r.get(pos[i]), out);
      }
    }
  }

  /** How one schema's values are written, decided when the encoder is built. */
  static final class Value implements Serializable {
    private static final long serialVersionUID = 1L;
    private static final byte NULL = 0;
    private static final byte STRING = 1;
    private static final byte ENUM = 2;
    private static final byte BOOLEAN = 3;
    private static final byte INTEGER = 4;
    private static final byte FLOAT = 5;
    private static final byte DOUBLE = 6;
    private static final byte BYTES = 7;
    private static final byte ARRAY = 8;
    private static final byte RECORD = 9;

    private final byte kind;
    private final Value items;
    private final Fields record;
    /** Enum symbols as quoted JSON, by ordinal of the enum class last seen (built on first use). */
    private transient EnumSymbols symbols; // final fields: safe to race on

    private Value(byte kind, Value items, Fields record) {
      this.kind = kind;
      this.items = items;
      this.record = record;
    }

    static Value of(Schema s) {
      return switch (s.getType()) {
        case NULL -> new Value(NULL, null, null);
        case STRING -> new Value(STRING, null, null);
        case ENUM -> new Value(ENUM, null, null);
        case BOOLEAN -> new Value(BOOLEAN, null, null);
        case INT, LONG -> new Value(INTEGER, null, null);
        case FLOAT -> new Value(FLOAT, null, null);
        case DOUBLE -> new Value(DOUBLE, null, null);
        case BYTES -> new Value(BYTES, null, null);
        case ARRAY -> new Value(ARRAY, of(s.getElementType()), null);
        case RECORD -> new Value(RECORD, null, Fields.of(s, Set.of()));
        case UNION -> {
          // null or one type: a null is written as null whatever the branch.
          List<Schema> types = new ArrayList<>();
          for (Schema t : s.getTypes()) {
            if (t.getType() != Schema.Type.NULL) {
              types.add(t);
            }
          }
          if (types.size() > 1) {
            throw new IllegalArgumentException("JSON rows: unions of several non-null types are not supported: " + s);
          }
          yield types.isEmpty() ? new Value(NULL, null, null) : of(types.get(0));
        }
        case MAP, FIXED -> throw new IllegalArgumentException("JSON rows: no ClickHouse column contract for " + s);
      };
    }

    void write(Object v, RowBatch out) {
      if (v == null) {
        out.putNull();
        return;
      }
      switch (kind) {
        case STRING -> out.putString((CharSequence) v);
        case INTEGER -> out.putLong(((Number) v).longValue());
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
        case RECORD -> record.object((IndexedRecord) v, out);
        default -> out.putNull();
      }
    }

    private void writeEnum(Object v, RowBatch out) {
      if (!(v instanceof Enum<?> e)) {
        out.putString(v.toString()); // a GenericEnumSymbol
        return;
      }
      EnumSymbols s = symbols;
      if (s == null || s.type != e.getDeclaringClass()) {
        s = new EnumSymbols(e.getDeclaringClass());
        symbols = s;
      }
      out.put(s.quoted[e.ordinal()]);
    }
  }

  /** Every constant of one enum class as a quoted JSON string, by ordinal. */
  private static final class EnumSymbols {
    final Class<?> type;
    final byte[][] quoted;

    EnumSymbols(Class<?> type) {
      this.type = type;
      Object[] constants = type.getEnumConstants();
      quoted = new byte[constants.length][];
      for (int i = 0; i < constants.length; i++) {
        RowBatch b = new RowBatch(64);
        b.putString(constants[i].toString());
        quoted[i] = Arrays.copyOf(b.array(), b.length());
      }
    }
  }
}
