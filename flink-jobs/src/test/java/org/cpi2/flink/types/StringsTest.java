package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.List;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.junit.jupiter.api.Test;

class StringsTest {
  @Test
  void nullEmptyLongAndNonAsciiStringsSurviveARoundTrip() throws Exception {
    char[] longOne = new char[70_000];
    Arrays.fill(longOne, 'x');
    List<String> values =
        Arrays.asList(null, "", "a", "host-001", "ü€", "\uD83D\uDE00 emoji", "x".repeat(127), "y".repeat(128), new String(longOne));
    DataOutputSerializer out = new DataOutputSerializer(16);
    for (String s : values) {
      Strings.write(s, out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    for (String s : values) {
      assertEquals(s, Strings.read(in));
    }
    assertEquals(0, in.available());
  }

  @Test
  void lengthsUpTo126BytesTakeOneByte() throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(16);
    Strings.write("z".repeat(126), out);
    assertEquals(127, out.length());
    out.clear();
    Strings.write("z".repeat(127), out);
    assertEquals(129, out.length(), "length + 1 = 128 needs a second varint byte");
  }
}
