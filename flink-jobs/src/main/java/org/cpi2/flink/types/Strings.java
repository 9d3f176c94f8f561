package org.cpi2.flink.types;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Strings in the hand-written in-flight serializers: a varint of the UTF-8 length plus one (0 for
 * null), then the bytes in one write. Flink's StringValue.writeString writes character by character
 * through the output view (a virtual call per character), a large share of the Kafka source
 * thread's CPU for the samples' long strings (platform names); the JDK's UTF-8 coding of ASCII
 * strings is a bulk copy. Reading returns the same String for the same bytes while a thread's cache
 * of recent strings holds it ({@link Recent}).
 */
final class Strings {
  private Strings() {}

  static void write(String s, DataOutputView out) throws IOException {
    if (s == null) {
      out.writeByte(0);
      return;
    }
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    int n = b.length + 1;
    while (n >= 0x80) {
      out.writeByte((n & 0x7F) | 0x80);
      n >>>= 7;
    }
    out.writeByte(n);
    out.write(b);
  }

  static String read(DataInputView in) throws IOException {
    int n = 0;
    int shift = 0;
    int b;
    do {
      b = in.readUnsignedByte();
      n |= (b & 0x7F) << shift;
      shift += 7;
    } while ((b & 0x80) != 0);
    if (n == 0) {
      return null;
    }
    int length = n - 1;
    if (length > Recent.MAX_LENGTH) {
      byte[] bytes = new byte[length];
      in.readFully(bytes);
      return new String(bytes, StandardCharsets.UTF_8);
    }
    return RECENT.get().read(in, length);
  }

  private static final ThreadLocal<Recent> RECENT = ThreadLocal.withInitial(Recent::new);

  /**
   * The strings a thread read recently, by the hash of their bytes (one per slot, the newest wins).
   * The strings on the wire repeat: a host's, task's, job's and platform's names come with every
   * sample of the task. A string read again is the one read before, so reading it allocates
   * nothing, and its hash code, which keyed state asks for on every access, is computed once.
   *
   * <p>Each task's names come back once per sampling period, after every other task's: a name is
   * still in its slot only if none of the others since took it, about e^(-names/slots) of the time,
   * so the table has several times more slots than a fleet's live task and task id names (a miss
   * costs a copy, a new String, and the hash computed again by keyed state). The hash takes the
   * bytes 8 at a time.
   */
  static final class Recent {
    static final int MAX_LENGTH = 256;
    static final int BITS = 19;
    static final int SLOTS = 1 << BITS;
    private static final VarHandle LONGS =
        MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long MIX = 0x9E3779B97F4A7C15L;

    private final byte[] scratch = new byte[MAX_LENGTH];
    private final byte[][] bytes = new byte[SLOTS][];
    private final String[] strings = new String[SLOTS];

    String read(DataInputView in, int length) throws IOException {
      byte[] b = scratch;
      in.readFully(b, 0, length);
      int slot = slot(b, length);
      byte[] known = bytes[slot];
      if (known != null && Arrays.equals(known, 0, known.length, b, 0, length)) {
        return strings[slot];
      }
      byte[] copy = Arrays.copyOf(b, length);
      String s = new String(copy, StandardCharsets.UTF_8);
      bytes[slot] = copy;
      strings[slot] = s;
      return s;
    }

    static int slot(byte[] b, int length) {
      long h = length;
      int i = 0;
      for (; i + 8 <= length; i += 8) {
        h = (h ^ (long) LONGS.get(b, i)) * MIX;
      }
      long tail = 0;
      for (; i < length; i++) {
        tail = (tail << 8) | (b[i] & 0xff);
      }
      h = (h ^ tail) * MIX;
      return (int) ((h ^ (h >>> 29)) >>> (64 - BITS));
    }
  }
}
