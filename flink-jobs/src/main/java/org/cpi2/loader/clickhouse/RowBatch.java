package org.cpi2.loader.clickhouse;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Base64;

/**
 * The rows of one insert in one growable array, and the writers of values into it in ClickHouse's
 * RowBinary layout ({@link RowBinaryRows}). Records are encoded straight into the batch the sink
 * will send, and the insert posts that array: no String per row, no StringBuilder of the batch, no
 * String-to-UTF-8 copy of it. Not thread-safe: the sink's writer fills one batch while its sender
 * thread posts another.
 */
public final class RowBatch {
  private static final VarHandle INT_LE =
      MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG_LE =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

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

  /** Ends the current row (RowBinary has no separator: it only counts). */
  public void endRow() {
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

  /** Bytes already in the batch's format (encoded enum symbols). */
  public void put(byte[] bytes) {
    put(bytes, 0, bytes.length);
  }

  /** {@code length} bytes of {@code bytes} from {@code offset}. */
  public void put(byte[] bytes, int offset, int length) {
    ensure(length);
    System.arraycopy(bytes, offset, buf, len, length);
    len += length;
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
   * A RowBinary String: the length of its UTF-8 as a varint, then the UTF-8 (a lone surrogate
   * becomes {@code ?}). String.getBytes checks and copies an ASCII string in bulk (vector
   * instructions), which beat a copy char by char here even with the array it allocates.
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
