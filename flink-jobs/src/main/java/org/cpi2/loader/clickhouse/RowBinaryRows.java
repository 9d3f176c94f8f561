package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.avro.Schema;
import org.apache.avro.generic.IndexedRecord;
import org.apache.avro.io.Encoder;
import org.apache.avro.specific.SpecificRecordBase;
import org.apache.avro.util.Utf8;

/**
 * Avro records as ClickHouse RowBinary rows ({@code INSERT INTO db.table (c1, c2, ...) FORMAT
 * RowBinary}) for one table, compiled from a {@link RowShape} and the table's columns as the server
 * reports them. RowBinary costs the server and the encoder little (no text to parse, no digits to
 * print), but it has no names and no defaults: each value must be written with exactly its column's
 * type, in the order of the statement's column list. So the encoder is built for the table, and
 * refuses ({@link Unsupported}: the writer fails, naming the column) rather than guess.
 *
 * <p>The columns are those of the shape, in its order, that the table has and can insert into: a
 * field without a column is left out, MATERIALIZED and ALIAS columns are the server's, and a column
 * with a default expression but no field is left to the server. Values follow the column contract
 * of RowShape: strings, enum symbols and base64 of bytes as String (LowCardinality(String) takes
 * the same bytes), booleans as UInt8, ints as Int32 or Int64, longs as Int64, doubles as Float64,
 * arrays as Array, unions with null as Nullable. A non-finite double is NULL in a Nullable column;
 * in a Float64 column it is written as it is.
 */
public final class RowBinaryRows {
  private RowBinaryRows() {}

  /** Why a table cannot take RowBinary rows of a shape: names the column and its type. */
  public static final class Unsupported extends Exception {
    private static final long serialVersionUID = 1L;

    Unsupported(String message) {
      super(message);
    }
  }

  /**
   * The encoder of {@code shape}'s rows for a table of these columns, and the columns it writes.
   */
  public static <T extends IndexedRecord> InsertPlan<T> compile(
      RowShape<T> shape, List<TableColumn> table) throws Unsupported {
    Map<String, TableColumn> unmatched = new LinkedHashMap<>();
    for (TableColumn c : table) {
      unmatched.put(c.name(), c);
    }
    List<String> names = new ArrayList<>();
    List<Integer> from = new ArrayList<>();
    List<Writer> writers = new ArrayList<>();
    for (int i = 0; i < shape.columns(); i++) {
      TableColumn c = unmatched.remove(shape.name(i));
      if (c == null || c.computed()) {
        continue;
      }
      try {
        writers.add(Writer.of(shape.value(i), ColumnType.parse(c.type())));
      } catch (Unsupported e) {
        throw new Unsupported(
            "column "
                + c.name()
                + " "
                + c.type()
                + " ("
                + shape.source()
                + "."
                + shape.name(i)
                + ": "
                + shape.value(i)
                + "): "
                + e.getMessage());
      }
      names.add(c.name());
      from.add(i);
    }
    for (TableColumn c : unmatched.values()) {
      if (!c.hasDefault()) {
        throw new Unsupported(
            "column "
                + c.name()
                + " "
                + c.type()
                + " has no field in "
                + shape.source()
                + " and no default");
      }
    }
    if (names.isEmpty()) {
      throw new Unsupported(
          "no column of the table has a field in "
              + shape.source()
              + (table.isEmpty() ? " (no columns: no such table?)" : ""));
    }
    int[] columns = from.stream().mapToInt(Integer::intValue).toArray();
    Rows<T> rows = new Rows<>(shape, columns, writers.toArray(new Writer[0]));
    RowEncoder<T> encoder =
        shape.flatRecord() == null ? rows : new SelfWrittenRows<>(rows, shape.flatRecord());
    return new InsertPlan<>(encoder, names);
  }

  private static final class Rows<T extends IndexedRecord> extends RowShape.Encoder<T> {
    private static final long serialVersionUID = 1L;

    /** The shape's column of each written column. */
    final int[] columns;

    final Writer[] writers;

    Rows(RowShape<T> shape, int[] columns, Writer[] writers) {
      super(shape);
      this.columns = columns;
      this.writers = writers;
    }

    @Override
    void row(IndexedRecord parent, IndexedRecord element, int rank, RowBatch out) {
      for (int i = 0; i < columns.length; i++) {
        writers[i].write(shape.get(columns[i], parent, element, rank), out);
      }
      out.endRow();
    }
  }

  /**
   * The rows of a flat record (no arrays, maps or nested records) written by the record itself: a
   * class Avro generated with custom coders writes its fields in schema order with customEncode,
   * each value unboxed, into {@link SelfWrittenEncoder}, which writes those with a column and drops
   * the others. Same bytes as {@link Rows} (RowBinaryRowsTest compares the two), without a boxed
   * number or a lookup by field position per column: a third of the Kafka source thread's CPU went
   * to the samples' rows that way. Other records go through {@link Rows}.
   */
  private static final class SelfWrittenRows<T extends IndexedRecord> implements RowEncoder<T> {
    private static final long serialVersionUID = 1L;
    private final Rows<T> general;

    /** Per field of the record, in schema order: the writer of its column, or null. */
    private final Writer[] byField;

    /** Per field: RowBinary Strings of its enum symbols, by ordinal (null if not an enum). */
    private final byte[][][] symbols;

    private final Schema record;
    private transient SelfWrittenEncoder encoder;

    /** The last class of record seen, and whether it writes itself with the shape's schema. */
    private transient Class<?> lastClass;

    private transient boolean lastWritesItself;

    SelfWrittenRows(Rows<T> general, Schema record) {
      this.general = general;
      this.record = record;
      List<Schema.Field> fields = record.getFields();
      byField = new Writer[fields.size()];
      symbols = new byte[fields.size()][][];
      for (int c = 0; c < general.columns.length; c++) {
        byField[general.shape.pos(general.columns[c])] = general.writers[c];
      }
      for (Schema.Field f : fields) {
        Schema t = RowShape.withoutNull(f.schema());
        if (t.getType() == Schema.Type.ENUM) {
          symbols[f.pos()] =
              t.getEnumSymbols().stream().map(RowBinaryRows::binaryString).toArray(byte[][]::new);
        }
      }
    }

    @Override
    public void encode(T r, RowBatch out) {
      if (r.getClass() != lastClass) {
        lastWritesItself = writesItself(r);
        lastClass = r.getClass();
      }
      if (!lastWritesItself) {
        general.encode(r, out);
        return;
      }
      SpecificRecordBase self = (SpecificRecordBase) r;
      SelfWrittenEncoder e = encoder;
      if (e == null) {
        e = new SelfWrittenEncoder(byField, symbols);
        encoder = e;
      }
      e.start(out);
      try {
        self.customEncode(e);
      } catch (IOException x) {
        throw new UncheckedIOException(x);
      }
      e.finish();
      out.endRow();
    }

    /** A generated class with custom coders (it overrides customEncode) of the shape's schema. */
    private boolean writesItself(IndexedRecord r) {
      if (!(r instanceof SpecificRecordBase) || !r.getSchema().equals(record)) {
        return false;
      }
      try {
        return r.getClass().getMethod("customEncode", Encoder.class).getDeclaringClass()
            != SpecificRecordBase.class;
      } catch (NoSuchMethodException e) {
        return false;
      }
    }
  }

  /**
   * Avro's encoder calls of one flat record (see {@link SelfWrittenRows}) as a RowBinary row: each
   * value is its field's, in order; a union's index comes before its value (null or not), and a
   * Nullable column gets its flag with the value.
   */
  private static final class SelfWrittenEncoder extends Encoder {
    private final Writer[] byField;
    private final byte[][][] symbols;
    private RowBatch out;
    private int field;

    SelfWrittenEncoder(Writer[] byField, byte[][][] symbols) {
      this.byField = byField;
      this.symbols = symbols;
    }

    void start(RowBatch batch) {
      out = batch;
      field = 0;
    }

    void finish() {
      if (field != byField.length) {
        throw new IllegalStateException(
            "clickhouse: the record wrote " + field + " of its " + byField.length + " fields");
      }
    }

    /**
     * Whether the current field, of a value that is not null, has a column: then its Nullable flag
     * is written and its writer must be {@code op}. Moves on to the next field.
     */
    private boolean column(byte op, String value) {
      Writer w = byField[field++];
      if (w == null) {
        return false;
      }
      if (w.op != op) {
        throw new IllegalStateException("clickhouse: RowBinary writer " + w.op + " got " + value);
      }
      if (w.nullable) {
        out.put((byte) 0);
      }
      return true;
    }

    @Override
    public void writeIndex(int unionIndex) {}

    @Override
    public void writeNull() {
      Writer w = byField[field++];
      if (w != null) {
        if (!w.nullable) {
          throw new IllegalArgumentException("clickhouse: null for a column that is not Nullable");
        }
        out.put((byte) 1);
      }
    }

    @Override
    public void writeBoolean(boolean b) {
      if (column(Writer.UINT8, "a boolean")) {
        out.put(b ? (byte) 1 : (byte) 0);
      }
    }

    @Override
    public void writeInt(int n) {
      Writer w = byField[field];
      if (w != null && w.op == Writer.INT64) {
        writeLong(n);
      } else if (column(Writer.INT32, "an int")) {
        out.putInt32(n);
      }
    }

    @Override
    public void writeLong(long n) {
      if (column(Writer.INT64, "a long")) {
        out.putInt64(n);
      }
    }

    @Override
    public void writeFloat(float f) {
      column((byte) -1, "a float"); // no column takes a float: only a field without one
    }

    @Override
    public void writeDouble(double d) {
      Writer w = byField[field];
      if (w != null && w.nullable && w.op == Writer.FLOAT64 && !Double.isFinite(d)) {
        field++;
        out.put((byte) 1); // NULL
      } else if (column(Writer.FLOAT64, "a double")) {
        out.putFloat64(d);
      }
    }

    @Override
    public void writeString(String str) {
      if (column(Writer.STRING, "a string")) {
        if (str == null) {
          throw new IllegalArgumentException("clickhouse: null for a column that is not Nullable");
        }
        out.putBinaryString(str);
      }
    }

    @Override
    public void writeString(Utf8 utf8) {
      if (column(Writer.STRING, "a string")) {
        out.putVarUInt(utf8.getByteLength());
        out.put(utf8.getBytes(), 0, utf8.getByteLength());
      }
    }

    @Override
    public void writeBytes(ByteBuffer bytes) {
      if (column(Writer.BASE64, "bytes")) {
        out.putBinaryBase64(bytes);
      }
    }

    @Override
    public void writeBytes(byte[] bytes, int start, int len) {
      writeBytes(ByteBuffer.wrap(bytes, start, len));
    }

    @Override
    public void writeEnum(int e) {
      int f = field;
      if (column(Writer.ENUM, "an enum")) {
        out.put(symbols[f][e]);
      }
    }

    // A flat record has no fixed, array or map field: SelfWrittenRows is only built for those.
    private static IllegalStateException notFlat(String what) {
      return new IllegalStateException("clickhouse: " + what + " in a flat record");
    }

    @Override
    public void writeFixed(byte[] bytes, int start, int len) {
      throw notFlat("a fixed");
    }

    @Override
    public void writeArrayStart() {
      throw notFlat("an array");
    }

    @Override
    public void setItemCount(long itemCount) {
      throw notFlat("an array");
    }

    @Override
    public void startItem() {
      throw notFlat("an array");
    }

    @Override
    public void writeArrayEnd() {
      throw notFlat("an array");
    }

    @Override
    public void writeMapStart() {
      throw notFlat("a map");
    }

    @Override
    public void writeMapEnd() {
      throw notFlat("a map");
    }

    @Override
    public void flush() {}
  }

  /** A column's type as far as RowBinary is concerned: LowCardinality(X) is written as X. */
  record ColumnType(String name, boolean nullable, ColumnType items) {
    static ColumnType parse(String type) {
      String t = type.strip();
      String inner = inside(t, "LowCardinality");
      if (inner != null) {
        return parse(inner);
      }
      inner = inside(t, "Nullable");
      if (inner != null) {
        ColumnType x = parse(inner);
        return new ColumnType(x.name, true, x.items);
      }
      inner = inside(t, "Array");
      if (inner != null) {
        return new ColumnType("Array", false, parse(inner));
      }
      return new ColumnType(t, false, null);
    }

    /** X of {@code wrapper(X)}, or null. */
    private static String inside(String t, String wrapper) {
      return t.startsWith(wrapper + "(") && t.endsWith(")")
          ? t.substring(wrapper.length() + 1, t.length() - 1)
          : null;
    }
  }

  /** How the values of one column are written. */
  private static final class Writer implements Serializable {
    private static final long serialVersionUID = 1L;
    static final byte STRING = 0;
    static final byte ENUM = 1;
    static final byte BASE64 = 2;
    static final byte UINT8 = 3;
    static final byte INT32 = 4;
    static final byte INT64 = 5;
    static final byte FLOAT64 = 6;
    static final byte ARRAY = 7;

    final byte op;

    /** A Nullable column: a flag byte (1: NULL) before the value. */
    final boolean nullable;

    private final Writer items;

    /**
     * Enum symbols as RowBinary Strings, by ordinal of the enum class last seen (built on first
     * use).
     */
    private transient EnumSymbols symbols; // immutable: safe to race on

    private Writer(byte op, boolean nullable, Writer items) {
      this.op = op;
      this.nullable = nullable;
      this.items = items;
    }

    static Writer of(RowShape.Value v, ColumnType t) throws Unsupported {
      if (v.nullable && !t.nullable) {
        throw new Unsupported("a nullable value needs a Nullable column");
      }
      byte op =
          switch (v.kind) {
            case STRING -> expect(t, "String", STRING);
            case ENUM -> expect(t, "String", ENUM);
            case BYTES -> expect(t, "String", BASE64);
            case BOOLEAN -> expect(t, "UInt8", UINT8);
            case INT -> t.name.equals("Int32") ? INT32 : expect(t, "Int64", INT64);
            case LONG -> expect(t, "Int64", INT64);
            case DOUBLE -> expect(t, "Float64", FLOAT64);
            case ARRAY -> expect(t, "Array", ARRAY);
            default -> throw new Unsupported("no RowBinary writer for " + v);
          };
      return new Writer(op, t.nullable, op == ARRAY ? of(v.items, t.items) : null);
    }

    private static byte expect(ColumnType t, String name, byte op) throws Unsupported {
      if (!t.name.equals(name)) {
        throw new Unsupported("RowBinary writes it as " + name + ", not as " + t.name);
      }
      return op;
    }

    void write(Object v, RowBatch out) {
      if (nullable) {
        if (v == null || (op == FLOAT64 && !Double.isFinite(((Number) v).doubleValue()))) {
          out.put((byte) 1);
          return;
        }
        out.put((byte) 0);
      } else if (v == null) {
        throw new IllegalArgumentException("clickhouse: null for a column that is not Nullable");
      }
      switch (op) {
        case STRING -> out.putBinaryString((CharSequence) v);
        case INT64 -> out.putInt64(((Number) v).longValue());
        case FLOAT64 -> out.putFloat64(((Number) v).doubleValue());
        case ENUM -> writeEnum(v, out);
        case UINT8 -> out.put((Boolean) v ? (byte) 1 : (byte) 0);
        case INT32 -> out.putInt32(((Number) v).intValue());
        case BASE64 -> out.putBinaryBase64((ByteBuffer) v);
        case ARRAY -> {
          Collection<?> c = (Collection<?>) v;
          out.putVarUInt(c.size());
          for (Object item : c) {
            items.write(item, out);
          }
        }
        default -> throw new IllegalStateException("RowBinary writer " + op);
      }
    }

    private void writeEnum(Object v, RowBatch out) {
      if (!(v instanceof Enum<?> e)) {
        out.putBinaryString(v.toString()); // a GenericEnumSymbol
        return;
      }
      EnumSymbols s = symbols;
      if (s == null || !s.isFor(e)) {
        s = EnumSymbols.of(e, RowBinaryRows::binaryString);
        symbols = s;
      }
      out.put(s.of(e));
    }
  }

  private static byte[] binaryString(String s) {
    RowBatch b = new RowBatch(64);
    b.putBinaryString(s);
    return Arrays.copyOf(b.array(), b.length());
  }
}
