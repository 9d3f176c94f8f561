package org.cpi2.flink.types;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/**
 * Strings in the hand-written in-flight serializers: a varint of the UTF-8 length plus one (0 for
 * null), then the bytes in one write. Flink's StringValue.writeString writes character by
 * character through the output view (a virtual call per character), which JFR put at a fifth of
 * the Kafka source thread's CPU for the samples' strings (a platform name alone is ~70
 * characters); the JDK's UTF-8 coding of ASCII strings is a bulk copy.
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
    byte[] bytes = new byte[n - 1];
    in.readFully(bytes);
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
