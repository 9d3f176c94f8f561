package org.cpi2.loader.clickhouse;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/**
 * The rows of one insert in one growable array, and the writers of values into it: JSON values for
 * JSONEachRow rows ({@link JsonRows}), ClickHouse's binary layout for RowBinary rows ({@link
 * RowBinaryRows}). Records are encoded straight into the batch the sink will send, and the insert
 * posts that array: no String per row, no StringBuilder of the batch, no String-to-UTF-8 copy of
 * it. Not thread-safe: the sink's writer fills one batch while its sender thread posts another.
 */
public final class RowBatch {
  private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] NULL = "null".getBytes(StandardCharsets.US_ASCII);
  private static final byte[] LONG_MIN =
      Long.toString(Long.MIN_VALUE).getBytes(StandardCharsets.US_ASCII);
  private static final VarHandle INT_LE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /**
   * Characters copied as they are inside a JSON string: printable ASCII but {@code "} and {@code
   * \}.
   */
  private static final boolean[] PLAIN = new boolean[128];

  static {
    for (int c = 0x20; c < 0x7f; c++) {
      PLAIN[c] = c != '"' && c != '\\';
    }
    PLAIN[0x7f] = true; // DEL is not a control character for JSON
  }

  private byte[] buf;
  private int len;
  private int rows;

  /** Growth doubles the array but stops at this (plus 64 KiB) before doubling on past it. */
  private final long softLimit;

  public RowBatch() {
    this(1 << 16);
  }

  public RowBatch(int initialCapacity) {
    this(initialCapacity, Integer.MAX_VALUE);
  }

  /**
   * {@code softLimit}: the size at which the batch will be sent (the sink's batch-bytes); the array
   * stops doubling there, so the row that crosses it does not double the memory.
   */
  public RowBatch(int initialCapacity, long softLimit) {
    buf = new byte[Math.max(initialCapacity, 64)];
    this.softLimit = softLimit;
  }

  /** The rows; valid up to {@link #length()}. */
  public byte[] array() {
    return buf;
  }

  public int length() {
    return len;
  }

  public int rows() {
    return rows;
  }

  /** Empties the batch; keeps the array for the next one. */
  public void clear() {
    len = 0;
    rows = 0;
  }

  /** Back to an earlier {@link #length()} and {@link #rows()} (drops a row left half-written). */
  void truncate(int length, int rowCount) {
    len = length;
    rows = rowCount;
  }

  /** Ends the current JSONEachRow row (a newline). */
  public void endRow() {
    put((byte) '\n');
    rows++;
  }

  /** Ends the current RowBinary row (RowBinary has no separator: it only counts). */
  public void endBinaryRow() {
    rows++;
  }

  private void ensure(int more) {
    if (len + more > buf.length) {
      long doubled = (long) buf.length * 2;
      long cap = softLimit + (1 << 16);
      long want = Math.max(buf.length < cap ? Math.min(doubled, cap) : doubled, (long) len + more);
      if (want > Integer.MAX_VALUE - 16) {
        throw new IllegalStateException(
            "clickhouse: a batch cannot exceed 2 GiB (see clickhouse.batch-bytes)");
      }
      buf = Arrays.copyOf(buf, (int) want);
    }
  }

  public void put(byte b) {
    ensure(1);
    buf[len++] = b;
  }

  /** Bytes already in the batch's format (precomputed field names, encoded enum symbols). */
  public void put(byte[] bytes) {
    put(bytes, 0, bytes.length);
  }

  /** {@code length} bytes of {@code bytes} from {@code offset}. */
  public void put(byte[] bytes, int offset, int length) {
    ensure(length);
    System.arraycopy(bytes, offset, buf, len, length);
    len += length;
  }

  // JSON values.

  public void putNull() {
    put(NULL);
  }

  public void putBoolean(boolean b) {
    put(b ? (byte) '1' : (byte) '0');
  }

  public void putLong(long v) {
    ensure(20);
    if (v < 0) {
      if (v == Long.MIN_VALUE) {
        put(LONG_MIN);
        return;
      }
      buf[len++] = '-';
      v = -v;
    }
    len = JsonDoubles.putDigits(v, JsonDoubles.digits(v), buf, len);
  }

  /** A double in a form that parses back to the same value; NaN and infinities as null. */
  public void putDouble(double d) {
    if (!Double.isFinite(d)) {
      putNull();
    } else {
      ensure(JsonDoubles.MAX_CHARS);
      len = JsonDoubles.write(d, buf, len);
    }
  }

  public void putFloat(float f) {
    if (!Float.isFinite(f)) {
      putNull();
    } else {
      putAscii(Float.toString(f));
    }
  }

  @SuppressWarnings(
      "deprecation") // String.getBytes(int, int, byte[], int): the low byte of each char, here
  // ASCII.
  private void putAscii(String s) {
    ensure(s.length());
    s.getBytes(0, s.length(), buf, len);
    len += s.length();
  }

  /**
   * A JSON string. Printable ASCII but {@code "} and {@code \} (most of what the job writes) is
   * copied byte by byte; from the first other character on, {@code "}, {@code \} and control
   * characters are escaped ({@code \n}, {@code \r}, {@code \t}, else {@code \}{@code u00XX}) and
   * the rest encoded as UTF-8, a surrogate pair as one 4-byte sequence. A lone surrogate becomes
   * {@code ?}, as String.getBytes(UTF_8) makes it.
   */
  public void putString(CharSequence cs) {
    String s = cs.toString();
    int n = s.length();
    ensure(n + 2);
    byte[] b = buf;
    int p = len;
    b[p++] = '"';
    for (int i = 0; i < n; i++) {
      char c = s.charAt(i);
      if (c >= 128 || !PLAIN[c]) {
        len = p;
        putEscaped(s, i);
        put((byte) '"');
        return;
      }
      b[p++] = (byte) c;
    }
    b[p++] = '"';
    len = p;
  }

  private void putEscaped(String s, int from) {
    int n = s.length();
    ensure(6 * (n - from)); // at most 6 bytes per char (backslash u00XX); a pair is 4 bytes for 2
    // chars
    byte[] b = buf;
    int p = len;
    for (int i = from; i < n; i++) {
      char c = s.charAt(i);
      if (c < 128) {
        if (PLAIN[c]) {
          b[p++] = (byte) c;
        } else {
          b[p++] = '\\';
          switch (c) {
            case '"' -> b[p++] = '"';
            case '\\' -> b[p++] = '\\';
            case '\n' -> b[p++] = 'n';
            case '\r' -> b[p++] = 'r';
            case '\t' -> b[p++] = 't';
            default -> {
              b[p++] = 'u';
              b[p++] = '0';
              b[p++] = '0';
              b[p++] = HEX[c >> 4];
              b[p++] = HEX[c & 0xf];
            }
          }
        }
      } else if (c < 0x800) {
        b[p++] = (byte) (0xc0 | (c >> 6));
        b[p++] = (byte) (0x80 | (c & 0x3f));
      } else if (!Character.isSurrogate(c)) {
        b[p++] = (byte) (0xe0 | (c >> 12));
        b[p++] = (byte) (0x80 | ((c >> 6) & 0x3f));
        b[p++] = (byte) (0x80 | (c & 0x3f));
      } else if (Character.isHighSurrogate(c)
          && i + 1 < n
          && Character.isLowSurrogate(s.charAt(i + 1))) {
        int cp = Character.toCodePoint(c, s.charAt(++i));
        b[p++] = (byte) (0xf0 | (cp >> 18));
        b[p++] = (byte) (0x80 | ((cp >> 12) & 0x3f));
        b[p++] = (byte) (0x80 | ((cp >> 6) & 0x3f));
        b[p++] = (byte) (0x80 | (cp & 0x3f));
      } else {
        b[p++] = '?';
      }
    }
    len = p;
  }

  /** Bytes as a base64 JSON string (the bytes themselves are left untouched). */
  public void putBase64(ByteBuffer bytes) {
    byte[] encoded = base64(bytes);
    ensure(encoded.length + 2);
    buf[len++] = '"';
    System.arraycopy(encoded, 0, buf, len, encoded.length);
    len += encoded.length;
    buf[len++] = '"';
  }

  private static byte[] base64(ByteBuffer bytes) {
    ByteBuffer copy = bytes.duplicate();
    byte[] raw = new byte[copy.remaining()];
    copy.get(raw);
    return Base64.getEncoder().encode(raw);
  }

  // RowBinary: fixed-width numbers little-endian, strings and arrays prefixed with their length.

  /** An unsigned LEB128 varint: the length of a RowBinary string or array. */
  public void putVarUInt(long v) {
    ensure(10);
    while ((v & ~0x7fL) != 0) {
      buf[len++] = (byte) (v | 0x80);
      v >>>= 7;
    }
    buf[len++] = (byte) v;
  }

  public void putInt32(int v) {
    ensure(4);
    INT_LE.set(buf, len, v);
    len += 4;
  }

  public void putInt64(long v) {
    ensure(8);
    LONG_LE.set(buf, len, v);
    len += 8;
  }

  /** The double's bits as they are: NaN and infinities too. */
  public void putFloat64(double d) {
    putInt64(Double.doubleToRawLongBits(d));
  }

  /**
   * A RowBinary String: the length of its UTF-8 as a varint, then the UTF-8, as {@link #putString}
   * would encode it (a lone surrogate becomes {@code ?}). String.getBytes checks and copies an
   * ASCII string in bulk (vector instructions), which beat a copy char by char here even with the
   * array it allocates.
   */
  public void putBinaryString(CharSequence cs) {
    byte[] utf8 = cs.toString().getBytes(StandardCharsets.UTF_8);
    putVarUInt(utf8.length);
    put(utf8);
  }

  /** Bytes as a RowBinary String of their base64 (the bytes themselves are left untouched). */
  public void putBinaryBase64(ByteBuffer bytes) {
    byte[] encoded = base64(bytes);
    putVarUInt(encoded.length);
    put(encoded);
  }

  /** The rows as text (tests, logs). */
  @Override
  public String toString() {
    return new String(buf, 0, len, StandardCharsets.UTF_8);
  }
}
