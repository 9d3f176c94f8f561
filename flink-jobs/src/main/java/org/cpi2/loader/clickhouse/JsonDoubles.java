package org.cpi2.loader.clickhouse;

import java.math.BigInteger;

/**
 * Finite doubles as the shortest decimal that parses back to the same double, written as ASCII
 * straight into a byte array, in Double.toString's layout ({@code 0.5}, {@code 1.0}, {@code
 * 1234.5678}, {@code 1.0E-5}, {@code 1.0E7}). Java 17's Double.toString (the job's JVM) builds a
 * String through FloatingDecimal and was, with the boxing, most of the cost of a sample row; this
 * is Raffaello Giulietti's Schubfach algorithm ("The Schubfach way to render doubles", 2020; what
 * Double.toString does from Java 19 on), written anew from the paper. Its output parses to the same
 * value as Double.toString's and is never longer (Java 17 is sometimes one digit longer than
 * needed); JsonDoublesTest checks both on millions of doubles.
 */
final class JsonDoubles {
  /** Longest output: "-2.2250738585072014E-308". */
  static final int MAX_CHARS = 24;

  private static final int P = 53; // precision, hidden bit included
  private static final int Q_MIN = -1074; // exponent of the smallest subnormal
  private static final long C_MIN = 1L << (P - 1);
  private static final long T_MASK = C_MIN - 1;
  private static final int BQ_MASK = 0x7ff;

  /** Coefficients of subnormals this small get one more digit of room (paper, 8.2.1). */
  private static final long C_TINY = 3;

  private static final long MASK_63 = Long.MAX_VALUE;
  private static final int K_MIN = -324;
  private static final int K_MAX = 292;

  /**
   * g1(k), g0(k) interleaved: g = g1 2^63 + g0 = floor(10^-k 2^-r) + 1, r = flog2pow10(-k) - 125.
   */
  private static final long[] G = new long[2 * (K_MAX - K_MIN + 1)];

  private static final long[] POW10 = new long[19];
  private static final byte[] TWO_DIGITS = new byte[200];

  static {
    BigInteger mask63 = BigInteger.ONE.shiftLeft(63).subtract(BigInteger.ONE);
    for (int k = K_MIN; k <= K_MAX; k++) {
      int r = flog2pow10(-k) - 125;
      BigInteger pow = BigInteger.TEN.pow(Math.abs(k));
      BigInteger g;
      if (k <= 0) {
        g = r >= 0 ? pow.shiftRight(r) : pow.shiftLeft(-r);
      } else {
        g = BigInteger.ONE.shiftLeft(-r).divide(pow);
      }
      g = g.add(BigInteger.ONE);
      G[2 * (k - K_MIN)] = g.shiftRight(63).longValueExact();
      G[2 * (k - K_MIN) + 1] = g.and(mask63).longValue();
    }
    POW10[0] = 1;
    for (int i = 1; i < POW10.length; i++) {
      POW10[i] = POW10[i - 1] * 10;
    }
    for (int i = 0; i < 100; i++) {
      TWO_DIGITS[2 * i] = (byte) ('0' + i / 10);
      TWO_DIGITS[2 * i + 1] = (byte) ('0' + i % 10);
    }
  }

  private JsonDoubles() {}

  /** floor(log10(2^e)), |e| <= 5456721. */
  private static int flog10pow2(int e) {
    return (int) (e * 661_971_961_083L >> 41);
  }

  /** floor(log10(3/4 2^e)), |e| <= 2620920. */
  private static int flog10threeQuartersPow2(int e) {
    return (int) (e * 661_971_961_083L + -274_743_187_321L >> 41);
  }

  /** floor(log2(10^e)), |e| <= 1233. */
  private static int flog2pow10(int e) {
    return (int) (e * 913_124_641_741L >> 38);
  }

  /**
   * Writes finite {@code v} at {@code off} (room for {@link #MAX_CHARS} bytes); returns the end.
   */
  static int write(double v, byte[] b, int off) {
    long bits = Double.doubleToRawLongBits(v);
    if (bits < 0) {
      b[off++] = '-';
    }
    long t = bits & T_MASK;
    int bq = (int) (bits >>> (P - 1)) & BQ_MASK;
    if (bq != 0) {
      int mq = -Q_MIN + 1 - bq; // -q
      long c = C_MIN | t;
      if (0 < mq && mq < P) {
        long f = c >> mq;
        if (f << mq == c) { // an integer below 2^53
          return chars(f, 0, b, off);
        }
      }
      return decimal(-mq, c, 0, b, off);
    }
    if (t != 0) {
      return t < C_TINY ? decimal(Q_MIN, 10 * t, -1, b, off) : decimal(Q_MIN, t, 0, b, off);
    }
    b[off] = '0';
    b[off + 1] = '.';
    b[off + 2] = '0';
    return off + 3;
  }

  /**
   * The shortest decimal in the rounding interval of c 2^q, the closest to it if several (paper,
   * figure 7).
   */
  private static int decimal(int q, long c, int dk, byte[] b, int off) {
    int out = (int) c & 1;
    long cb = c << 2;
    long cbr = cb + 2;
    long cbl;
    int k;
    if (c != C_MIN || q == Q_MIN) {
      cbl = cb - 2; // regular spacing
      k = flog10pow2(q);
    } else {
      cbl = cb - 1; // c is a power of two: the gap below is half the gap above
      k = flog10threeQuartersPow2(q);
    }
    int h = q + flog2pow10(-k) + 2;
    long g1 = G[2 * (k - K_MIN)];
    long g0 = G[2 * (k - K_MIN) + 1];
    long vb = rop(g1, g0, cb << h);
    long vbl = rop(g1, g0, cbl << h);
    long vbr = rop(g1, g0, cbr << h);
    long s = vb >> 2;
    if (s >= 100) {
      // One digit less: s' = floor(s / 10); is s' 10^(k+1) or (s'+1) 10^(k+1) alone in the
      // interval?
      long sp10 = 10 * Math.multiplyHigh(s, 115_292_150_460_684_698L << 4);
      long tp10 = sp10 + 10;
      boolean upin = vbl + out <= sp10 << 2;
      boolean wpin = (tp10 << 2) + out <= vbr;
      if (upin != wpin) {
        return chars(upin ? sp10 : tp10, k, b, off);
      }
    }
    long t = s + 1;
    boolean uin = vbl + out <= s << 2;
    boolean win = (t << 2) + out <= vbr;
    if (uin != win) {
      return chars(uin ? s : t, k + dk, b, off);
    }
    long cmp = vb - ((s + t) << 1); // both in: the closer one, the even one on a tie
    return chars(cmp < 0 || (cmp == 0 && (s & 1) == 0) ? s : t, k + dk, b, off);
  }

  /** Round to odd of g cp / 2^127, g = g1 2^63 + g0 (paper, 9.8.3). */
  private static long rop(long g1, long g0, long cp) {
    long x1 = Math.multiplyHigh(g0, cp);
    long y0 = g1 * cp;
    long y1 = Math.multiplyHigh(g1, cp);
    long z = (y0 >>> 1) + x1;
    long vbp = y1 + (z >>> 63);
    return vbp | ((z & MASK_63) + MASK_63) >>> 63;
  }

  /** Writes f 10^e (f > 0) as Double.toString lays it out. */
  private static int chars(long f, int e, byte[] b, int off) {
    while (f % 10 == 0) {
      f /= 10;
      e++;
    }
    int n = digits(f);
    int exp = n - 1 + e; // f 10^e = d.ddd 10^exp
    if (exp >= 0 && exp < 7) {
      if (n <= exp + 1) { // an integer: digits, zeros, ".0"
        off = putDigits(f, n, b, off);
        for (int i = n; i <= exp; i++) {
          b[off++] = '0';
        }
        b[off++] = '.';
        b[off++] = '0';
        return off;
      }
      // exp + 1 digits, the point, the rest: write all digits one place to the right, then move
      // the integer part back over the gap.
      int end = putDigits(f, n, b, off + 1);
      System.arraycopy(b, off + 1, b, off, exp + 1);
      b[off + exp + 1] = '.';
      return end;
    }
    if (exp < 0 && exp >= -3) {
      b[off++] = '0';
      b[off++] = '.';
      for (int i = -1; i > exp; i--) {
        b[off++] = '0';
      }
      return putDigits(f, n, b, off);
    }
    // d.dddE[-]x
    int end = putDigits(f, n, b, off + 1);
    b[off] = b[off + 1];
    b[off + 1] = '.';
    if (n == 1) {
      b[end++] = '0';
    }
    b[end++] = 'E';
    if (exp < 0) {
      b[end++] = '-';
      exp = -exp;
    }
    return putDigits(exp, digits(exp), b, end);
  }

  /** Number of decimal digits of v >= 0. */
  static int digits(long v) {
    int n = flog10pow2(Long.SIZE - Long.numberOfLeadingZeros(v)); // n or n + 1 digits
    return v >= POW10[n] ? n + 1 : Math.max(n, 1);
  }

  /** Writes the n digits of v >= 0 at off; returns off + n. */
  static int putDigits(long v, int n, byte[] b, int off) {
    int p = off + n;
    while (v >= 100_000_000L) { // 8 digits at a time in int arithmetic
      long q = v / 100_000_000L;
      int r = (int) (v - q * 100_000_000L);
      for (int i = 0; i < 4; i++) {
        int r100 = r / 100;
        int d = (r - r100 * 100) << 1;
        b[--p] = TWO_DIGITS[d + 1];
        b[--p] = TWO_DIGITS[d];
        r = r100;
      }
      v = q;
    }
    int r = (int) v;
    while (r >= 100) {
      int r100 = r / 100;
      int d = (r - r100 * 100) << 1;
      b[--p] = TWO_DIGITS[d + 1];
      b[--p] = TWO_DIGITS[d];
      r = r100;
    }
    if (r >= 10) {
      b[--p] = TWO_DIGITS[(r << 1) + 1];
      b[--p] = TWO_DIGITS[r << 1];
    } else {
      b[--p] = (byte) ('0' + r);
    }
    return off + n;
  }
}
