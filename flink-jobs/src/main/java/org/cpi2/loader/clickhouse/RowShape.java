package org.cpi2.loader.clickhouse;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.schema.Incident;

/**
 * The rows an Avro record type gives a ClickHouse table, by the column contract with clickhouse/
 * (migrations/001_tables.sql): columns are the Avro field names; enums are their symbol (a string);
 * a union with null is a nullable value; booleans are 1/0 (UInt8); bytes are base64 (a string);
 * ints and longs are integers (timestamps Int64 microseconds); a non-finite double is null where
 * the column can hold null. A record gives one row ({@link #records}), or one row per element of an
 * array of records ({@link #elements}: incident_suspects).
 *
 * <p>{@link RowBinaryRows} compiles its encoders from a shape and walks records with {@link
 * Encoder}: which columns a record gives, where each value comes from and what it is are decided
 * here, apart from how the bytes are written.
 */
public final class RowShape<T extends IndexedRecord> implements Serializable {
  private static final long serialVersionUID = 1L;

  /** Where a column's value comes from: the record, the array element of the row, the rank. */
  private static final byte PARENT = 0;

  private static final byte ELEMENT = 1;
  private static final byte RANK = 2;

  private final String source;

  /** The record of a shape of one row per record; null for rows of array elements. */
  private final Schema record;

  private final String[] names;
  private final byte[] from;
  private final int[] pos;
  private final Value[] values;

  /** The array field whose elements are the rows; -1: one row per record. */
  private final int arrayPos;

  private RowShape(
      String source,
      Schema record,
      List<String> names,
      List<Byte> from,
      List<Integer> pos,
      List<Value> values,
      int arrayPos) {
    this.source = source;
    this.record = record;
    this.names = names.toArray(new String[0]);
    this.from = new byte[from.size()];
    this.pos = new int[pos.size()];
    for (int i = 0; i < this.from.length; i++) {
      this.from[i] = from.get(i);
      this.pos[i] = pos.get(i);
    }
    this.values = values.toArray(new Value[0]);
    this.arrayPos = arrayPos;
  }

  /** One row per record with every field of {@code schema} except those in {@code skip}. */
  public static <T extends IndexedRecord> RowShape<T> records(Schema schema, Set<String> skip) {
    if (schema.getType() != Schema.Type.RECORD) {
      throw new IllegalArgumentException(schema.getName() + " is not a record");
    }
    Builder b = new Builder();
    for (Schema.Field f : schema.getFields()) {
      if (!skip.contains(f.name())) {
        b.add(f, PARENT);
      }
    }
    return b.build(schema.getName(), schema, -1);
  }

  /**
   * One row per element of the array of records {@code arrayField}: the parent's {@code
   * parentFields}, {@code rankColumn} (an int, 1 for the first element), then every field of the
   * element. A record whose array is empty or null gives no row.
   */
  public static <T extends IndexedRecord> RowShape<T> elements(
      Schema parent, List<String> parentFields, String arrayField, String rankColumn) {
    Schema.Field array = field(parent, arrayField);
    Schema items =
        array.schema().getType() == Schema.Type.ARRAY ? array.schema().getElementType() : null;
    if (items == null || items.getType() != Schema.Type.RECORD) {
      throw new IllegalArgumentException(
          parent.getName() + "." + arrayField + " is not an array of records");
    }
    Builder b = new Builder();
    for (String name : parentFields) {
      b.add(field(parent, name), PARENT);
    }
    b.add(rankColumn, RANK, -1, Value.of(Schema.create(Schema.Type.INT)));
    for (Schema.Field f : items.getFields()) {
      b.add(f, ELEMENT);
    }
    return b.build(parent.getName() + "." + arrayField, null, array.pos());
  }

  /**
   * incident_suspects: one row per suspect, with the incident's identity, its signal and its rank
   * from 1.
   */
  public static RowShape<Incident> suspects() {
    return elements(
        Incident.getClassSchema(),
        List.of("incident_id", "host", "detected_at_us", "signal"),
        "suspects",
        "rank");
  }

  private static Schema.Field field(Schema schema, String name) {
    Schema.Field f = schema.getField(name);
    if (f == null) {
      throw new IllegalArgumentException(schema.getName() + " has no field " + name);
    }
    return f;
  }

  /** What the rows are made from, for messages: the record's name, or record.array. */
  public String source() {
    return source;
  }

  public int columns() {
    return names.length;
  }

  public String name(int column) {
    return names[column];
  }

  /**
   * The column's field: its position in the record (or array element) it comes from; -1 for the
   * rank.
   */
  int pos(int column) {
    return pos[column];
  }

  /**
   * The record schema of a shape of one row per record whose fields are all flat (strings, enums,
   * numbers, booleans, bytes, or one of those or null): rows a record can write itself
   * (RowBinaryRows). Null for other shapes.
   */
  Schema flatRecord() {
    if (arrayPos >= 0 || record == null) {
      return null;
    }
    for (Schema.Field f : record.getFields()) {
      Schema t = withoutNull(f.schema());
      switch (t.getType()) {
        case STRING, ENUM, BOOLEAN, INT, LONG, FLOAT, DOUBLE, BYTES, NULL -> {}
        default -> {
          return null;
        }
      }
    }
    return record;
  }

  /** The other branch of a union of null and one type; any other schema as it is. */
  static Schema withoutNull(Schema s) {
    if (s.getType() != Schema.Type.UNION || s.getTypes().size() != 2) {
      return s;
    }
    List<Schema> b = s.getTypes();
    return b.get(0).getType() == Schema.Type.NULL
        ? b.get(1)
        : b.get(1).getType() == Schema.Type.NULL ? b.get(0) : s;
  }

  /** What the column's values are, by the contract. */
  Value value(int column) {
    return values[column];
  }

  /** The value of {@code column} in the row of {@code parent} ({@code element}, {@code rank}). */
  Object get(int column, IndexedRecord parent, IndexedRecord element, int rank) {
    return switch (from[column]) {
      case PARENT -> parent.get(pos[column]);
      case ELEMENT -> element.get(pos[column]);
      default -> rank;
    };
  }

  /**
   * The walk over a record's rows; RowBinaryRows writes each row. Part of the sink, so
   * serializable.
   */
  abstract static class Encoder<T extends IndexedRecord> implements RowEncoder<T> {
    private static final long serialVersionUID = 1L;
    final RowShape<T> shape;

    Encoder(RowShape<T> shape) {
      this.shape = shape;
    }

    @Override
    public final void encode(T r, RowBatch out) {
      if (shape.arrayPos < 0) {
        row(r, null, 0, out);
        return;
      }
      Collection<?> items = (Collection<?>) r.get(shape.arrayPos);
      if (items == null) {
        return;
      }
      int rank = 0;
      for (Object item : items) {
        row(r, (IndexedRecord) item, ++rank, out);
      }
    }

    /** Writes one row, ended with {@link RowBatch#endRow()}; values by {@link RowShape#get}. */
    abstract void row(IndexedRecord parent, IndexedRecord element, int rank, RowBatch out);
  }

  private static final class Builder {
    final List<String> names = new ArrayList<>();
    final List<Byte> from = new ArrayList<>();
    final List<Integer> pos = new ArrayList<>();
    final List<Value> values = new ArrayList<>();

    void add(Schema.Field f, byte source) {
      add(f.name(), source, f.pos(), Value.of(f.schema()));
    }

    void add(String name, byte source, int position, Value value) {
      names.add(name);
      from.add(source);
      pos.add(position);
      values.add(value);
    }

    <T extends IndexedRecord> RowShape<T> build(String source, Schema record, int arrayPos) {
      return new RowShape<>(source, record, names, from, pos, values, arrayPos);
    }
  }

  /** What the values of one Avro schema are as a column's, decided when the shape is built. */
  static final class Value implements Serializable {
    private static final long serialVersionUID = 1L;

    enum Kind {
      NULL,
      STRING,
      ENUM,
      BOOLEAN,
      INT,
      LONG,
      FLOAT,
      DOUBLE,
      BYTES,
      ARRAY,
      RECORD
    }

    final Kind kind;

    /** A union with null: the value may be null. */
    final boolean nullable;

    /** ARRAY: its elements. */
    final Value items;

    private Value(Kind kind, boolean nullable, Value items) {
      this.kind = kind;
      this.nullable = nullable;
      this.items = items;
    }

    static Value of(Schema s) {
      return switch (s.getType()) {
        case NULL -> new Value(Kind.NULL, true, null);
        case STRING -> new Value(Kind.STRING, false, null);
        case ENUM -> new Value(Kind.ENUM, false, null);
        case BOOLEAN -> new Value(Kind.BOOLEAN, false, null);
        case INT -> new Value(Kind.INT, false, null);
        case LONG -> new Value(Kind.LONG, false, null);
        case FLOAT -> new Value(Kind.FLOAT, false, null);
        case DOUBLE -> new Value(Kind.DOUBLE, false, null);
        case BYTES -> new Value(Kind.BYTES, false, null);
        case ARRAY -> new Value(Kind.ARRAY, false, of(s.getElementType()));
        case RECORD ->
            new Value(Kind.RECORD, false, null); // no column type: RowBinaryRows refuses it
        case UNION -> {
          // null or one type: a null is written as null whatever the branch.
          List<Schema> types = new ArrayList<>();
          for (Schema t : s.getTypes()) {
            if (t.getType() != Schema.Type.NULL) {
              types.add(t);
            }
          }
          if (types.size() > 1) {
            throw new IllegalArgumentException(
                "ClickHouse rows: unions of several non-null types are not supported: " + s);
          }
          if (types.isEmpty()) {
            yield new Value(Kind.NULL, true, null);
          }
          Value v = of(types.get(0));
          yield new Value(v.kind, true, v.items);
        }
        case MAP, FIXED ->
            throw new IllegalArgumentException("ClickHouse rows: no column contract for " + s);
      };
    }

    /** As Avro would name it: {@code ["null", long]}, {@code array<string>}. */
    @Override
    public String toString() {
      String base =
          kind == Kind.ARRAY
              ? "array<" + items + ">"
              : kind.name().toLowerCase(java.util.Locale.ROOT);
      return nullable && kind != Kind.NULL ? "[\"null\", " + base + "]" : base;
    }
  }
}
