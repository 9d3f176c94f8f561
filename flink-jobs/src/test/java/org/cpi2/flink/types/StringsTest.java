package org.cpi2.flink.types;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

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
        Arrays.asList(
            null,
            "",
            "a",
            "host-001",
            "ü€",
            "\uD83D\uDE00 emoji",
            "x".repeat(127),
            "y".repeat(128),
            new String(longOne));
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

  @Test
  void aStringReadAgainIsTheSameInstanceAndCollidingStringsStayApart() throws Exception {
    DataOutputSerializer out = new DataOutputSerializer(16);
    List<String> values = new java.util.ArrayList<>();
    for (int i = 0; i < Strings.Recent.SLOTS + Strings.Recent.SLOTS / 4; i++) {
      values.add("job-" + (i % 7) + "/" + i); // more strings than slots: some share one
    }
    values.add("z".repeat(Strings.Recent.MAX_LENGTH));
    values.add("z".repeat(Strings.Recent.MAX_LENGTH + 1)); // not cached
    for (String s : values) {
      Strings.write(s, out);
    }
    DataInputDeserializer in = new DataInputDeserializer(out.getCopyOfBuffer());
    for (String s : values) {
      assertEquals(s, Strings.read(in));
    }
    out.clear();
    Strings.write("web/17", out);
    Strings.write("web/17", out);
    Strings.write("Ünïcode/1", out);
    Strings.write("Ünïcode/1", out);
    in = new DataInputDeserializer(out.getCopyOfBuffer());
    String first = Strings.read(in);
    assertSame(first, Strings.read(in));
    String unicode = Strings.read(in);
    assertEquals("Ünïcode/1", unicode);
    assertSame(unicode, Strings.read(in));
  }

  @Test
  void namesThatDifferOnlyInPlacesSpreadOverTheSlotsLikeRandomOnes() {
    // Task names of one job differ in a few digits, often in the last bytes, which the hash takes
    // apart from the 8-byte words. Random slots for n names in m would fill m(1 - e^(-n/m)).
    int n = 100_000;
    java.util.BitSet used = new java.util.BitSet(Strings.Recent.SLOTS);
    for (int i = 0; i < n; i++) {
      byte[] b =
          ("jobs/batch-tenant-" + (i % 25) + "/" + i)
              .getBytes(java.nio.charset.StandardCharsets.UTF_8);
      used.set(Strings.Recent.slot(b, b.length));
    }
    double m = Strings.Recent.SLOTS;
    double random = m * (1 - Math.exp(-n / m));
    org.junit.jupiter.api.Assertions.assertTrue(
        used.cardinality() > 0.98 * random, used.cardinality() + " slots used, random: " + random);
  }
}
