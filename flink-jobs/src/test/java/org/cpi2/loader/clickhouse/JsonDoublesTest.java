package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * The double writer against the JDK: what it writes parses back to the very same double, is never
 * longer than Java 17's Double.toString (which is not always the shortest), and is identical to it
 * for the values the job writes most (short decimals, integers, CPI-like values).
 */
class JsonDoublesTest {
  private static String write(double d) {
    byte[] b = new byte[JsonDoubles.MAX_CHARS];
    int end = JsonDoubles.write(d, b, 0);
    return new String(b, 0, end, StandardCharsets.US_ASCII);
  }

  private static void check(double d) {
    String s = write(d);
    double back = Double.parseDouble(s);
    if (Double.doubleToRawLongBits(back) != Double.doubleToRawLongBits(d)) {
      fail("not the same double: " + Double.toString(d) + " written as " + s);
    }
    // Like Double.toString from Java 19 on, at least 2 digits (so 2 * MIN_VALUE is 9.9E-324,
    // Java 17's 1.0E-323 is no closer).
    String jdk = Double.toString(d);
    if (Math.max(digits(s), 2) > Math.max(digits(jdk), 2)) {
      fail("longer than Double.toString: " + s + " vs " + jdk);
    }
  }

  /** Significant digits of a Double.toString-like form; fails on another layout. */
  private static int digits(String s) {
    int i = s.startsWith("-") ? 1 : 0;
    int first = -1;
    int last = -1;
    int points = 0;
    for (; i < s.length() && s.charAt(i) != 'E'; i++) {
      char c = s.charAt(i);
      if (c == '.') {
        points++;
      } else if (c >= '1' && c <= '9') {
        first = first < 0 ? i : first;
        last = i;
      } else if (c != '0') {
        fail("not Double.toString's layout: " + s);
      }
    }
    if (points != 1 || s.endsWith(".") || s.charAt(s.startsWith("-") ? 1 : 0) == '.') {
      fail("not Double.toString's layout: " + s);
    }
    if (first < 0) {
      return 1;
    }
    int n = last - first + 1;
    return s.substring(first, last).contains(".") ? n - 1 : n;
  }

  @Test
  void randomBitPatternsRoundTripAndAreNoLongerThanTheJdks() {
    SplittableRandom rnd = new SplittableRandom(42);
    for (int i = 0; i < 1_000_000; i++) {
      double d = Double.longBitsToDouble(rnd.nextLong());
      if (Double.isFinite(d)) {
        check(d);
      }
    }
  }

  @Test
  void valuesLikeTheJobsRoundTrip() {
    SplittableRandom rnd = new SplittableRandom(7);
    for (int i = 0; i < 200_000; i++) {
      check(rnd.nextDouble()); // cpu usage
      check(1 + 3 * rnd.nextDouble()); // CPI
      check(rnd.nextInt(1_000_000) / 1000.0); // short decimals
      check(rnd.nextLong(1L << 53)); // integers
      check(rnd.nextDouble() * Math.pow(10, rnd.nextInt(-30, 30)));
    }
  }

  @Test
  void edgesRoundTrip() {
    List<Double> edges =
        new ArrayList<>(
            List.of(
                0.0,
                -0.0,
                Double.MIN_VALUE,
                2 * Double.MIN_VALUE,
                3 * Double.MIN_VALUE,
                Double.MIN_NORMAL,
                Math.nextDown(Double.MIN_NORMAL),
                Math.nextUp(Double.MIN_NORMAL),
                Double.MAX_VALUE,
                Math.nextDown(Double.MAX_VALUE),
                1e23,
                8.41e21,
                5e-324,
                9007199254740992.0,
                9007199254740993.0,
                1e7,
                Math.nextDown(1e7),
                1e-3,
                Math.nextDown(1e-3),
                2e-3,
                4.9e-324,
                1.7976931348623157e308));
    for (int e = -1074; e <= 1023; e++) {
      edges.add(Math.scalb(1.0, e));
      edges.add(Math.nextUp(Math.scalb(1.0, e)));
      edges.add(Math.nextDown(Math.scalb(1.0, e)));
    }
    for (int e = -323; e <= 308; e++) {
      double p = Double.parseDouble("1e" + e);
      edges.add(p);
      edges.add(Math.nextUp(p));
      edges.add(Math.nextDown(p));
    }
    for (long t = 0; t < 10_000; t++) {
      edges.add(Double.longBitsToDouble(t)); // subnormals, the tiniest first
    }
    for (double d : edges) {
      check(d);
      check(-d);
    }
  }

  @Test
  void layoutIsDoubleToStringsForCommonValues() {
    for (double d :
        new double[] {
          0.5,
          1.0,
          -0.25,
          1e-5,
          0.00001,
          1e7,
          1234567.0,
          0.001,
          1.2340881417573537,
          0.6450137357984012,
          100.0,
          12345.678,
          1.0E-4,
          2.5E10,
          -3.0E-7,
          1e21,
          0.0,
          -0.0,
          123456789012.0
        }) {
      assertEquals(Double.toString(d), write(d), "layout of " + d);
    }
  }

  @Test
  void longsAreWrittenDigitForDigit() {
    RowBatch b = new RowBatch(16);
    long[] values = {
      0,
      1,
      -1,
      9,
      10,
      99,
      100,
      12345,
      -98765,
      1795389455000000L,
      Long.MAX_VALUE,
      Long.MIN_VALUE,
      Integer.MAX_VALUE,
      Integer.MIN_VALUE,
      1_000_000_000_000_000_000L
    };
    StringBuilder expected = new StringBuilder();
    for (long v : values) {
      b.putLong(v);
      b.put((byte) ',');
      expected.append(v).append(',');
    }
    assertEquals(expected.toString(), b.toString());
    SplittableRandom rnd = new SplittableRandom(3);
    for (int i = 0; i < 100_000; i++) {
      long v = rnd.nextLong() >> rnd.nextInt(64);
      b.clear();
      b.putLong(v);
      assertEquals(Long.toString(v), b.toString());
    }
    assertTrue(b.length() > 0);
  }
}
