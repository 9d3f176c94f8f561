package org.cpi2.flink.correlate;

/**
 * The antagonist correlation of paper section 4.2 (ARCHITECTURE.md). Over the time-aligned pairs
 * (victim CPI c_i, suspect CPU usage u_i), with u normalised so that it sums to 1 over those pairs:
 * add u_i·(1 − c_t/c_i) when c_i > c_t and u_i·(c_i/c_t − 1) when c_i < c_t. The result lies in
 * [−1, 1]. Pairs are aligned on equal window start times; both series are sorted by time. A suspect
 * with no aligned pair, or whose aligned usage sums to 0, correlates 0 with lift 0.
 */
public final class AntagonistCorrelation {
  private AntagonistCorrelation() {}

  /**
   * The paper's correlation and its lift: the correlation minus the plain mean of the same pairs'
   * terms, which is what a suspect of constant usage would get. When the victim's CPI is above the
   * threshold through the whole window, every tenant correlates about equally (the terms are all
   * positive whatever the usage); the lift is what separates a suspect whose usage rose and fell
   * with the victim's CPI from a bystander. Beside them the statistics that say how much of that
   * could be chance ({@link Significance}): Pearson's r of the suspect's usage and the victim's CPI
   * over the {@code pairs}, and the effective number of independent pairs given both series' lag-1
   * autocorrelations.
   */
  public record Measure(
      double correlation,
      double lift,
      double comovingCpu,
      double beyondOwnUsage,
      double pearson,
      int pairs,
      double effectivePairs) {
    /**
     * The chance of a Pearson r this large over these pairs with no relation ({@link
     * Significance}).
     */
    public double pearsonP() {
      return Significance.pValue(pearson, effectivePairs, 2);
    }

    /**
     * The same for the correlation beyond the victim's own usage (a partial r, one variable held).
     */
    public double beyondOwnUsageP() {
      return Significance.pValue(beyondOwnUsage, effectivePairs, 3);
    }
  }

  /**
   * Fewer aligned samples than this give no co-moving CPU: a Pearson r of 3 or 4 points is noise.
   */
  public static final int MIN_COMOVING_PAIRS = 5;

  public static Measure measure(
      long[] victimTimes,
      double[] victimCpi,
      int victimLength,
      double threshold,
      long[] suspectTimes,
      double[] suspectCpu,
      int suspectLength) {
    return measure(
        victimTimes,
        victimCpi,
        null,
        victimLength,
        threshold,
        suspectTimes,
        suspectCpu,
        suspectLength);
  }

  /**
   * As {@link #measure(long[], double[], int, double, long[], double[], int)}; with the victim's
   * own CPU usage at the same samples ({@code victimCpu}, else null), also what the suspect
   * explains beyond it: the partial correlation r(u, c | v) of the suspect's usage u and the
   * victim's CPI c, the victim's usage v held fixed. A suspect whose usage mirrors the victim's own
   * (|r(u, v)| near 1) explains nothing beyond it: 0. NaN without {@code victimCpu}, with fewer
   * than {@link #MIN_COMOVING_PAIRS} pairs, or without variation in the CPI or the victim's usage.
   */
  public static Measure measure(
      long[] victimTimes,
      double[] victimCpi,
      double[] victimCpu,
      int victimLength,
      double threshold,
      long[] suspectTimes,
      double[] suspectCpu,
      int suspectLength) {
    return measure(
        victimTimes,
        victimCpi,
        victimCpu,
        victimLength,
        threshold,
        suspectTimes,
        suspectCpu,
        suspectLength,
        Long.MIN_VALUE);
  }

  /**
   * As {@link #measure(long[], double[], double[], int, double, long[], double[], int)}; the
   * victim's samples before {@code absentBeforeUs} pair with a usage of 0: the suspect was not on
   * the host then (a task new there, its first sample at that time), and used none of its CPU. A
   * task that arrives as the victim's CPI rises then co-moves with it, as an antagonist already
   * there does when its usage rises. The paper's correlation is unchanged by them (a usage of 0
   * adds nothing to it); the lift, the co-moving CPU and r see them. Long.MIN_VALUE: none.
   */
  public static Measure measure(
      long[] victimTimes,
      double[] victimCpi,
      double[] victimCpu,
      int victimLength,
      double threshold,
      long[] suspectTimes,
      double[] suspectCpu,
      int suspectLength,
      long absentBeforeUs) {
    // The aligned pairs, in time order: the suspect's usage u, the victim's CPI c (and usage v).
    double[] us = new double[victimLength];
    double[] cs = new double[victimLength];
    double[] vs = victimCpu == null ? null : new double[victimLength];
    int pairs = 0;
    int j = 0;
    for (int i = 0; i < victimLength; i++) {
      long tv = victimTimes[i];
      double u;
      if (tv < absentBeforeUs) {
        u = 0;
      } else {
        while (j < suspectLength && suspectTimes[j] < tv) {
          j++;
        }
        if (j >= suspectLength || suspectTimes[j] != tv) {
          continue;
        }
        u = suspectCpu[j];
      }
      if (!(u >= 0) || !Double.isFinite(u)) {
        continue;
      }
      us[pairs] = u;
      cs[pairs] = victimCpi[i];
      if (vs != null) {
        vs[pairs] = victimCpu[i];
      }
      pairs++;
    }
    double usageSum = 0;
    double weighted = 0;
    double termSum = 0;
    for (int k = 0; k < pairs; k++) {
      double t = term(cs[k], threshold);
      usageSum += us[k];
      weighted += us[k] * t;
      termSum += t;
    }
    double beyond = Double.NaN;
    double rcu = Double.NaN;
    double effective = pairs;
    if (pairs >= MIN_COMOVING_PAIRS) {
      rcu = pearson(us, cs, pairs);
      effective =
          Significance.effectivePairs(
              pairs, lagOne(us, pairs), lagOne(residuals(cs, us, pairs), pairs, mean(cs, pairs)));
      if (vs != null) {
        double rcv = pearson(cs, vs, pairs);
        double ruv = pearson(us, vs, pairs);
        beyond = partial(rcu, rcv, ruv);
      }
    }
    if (usageSum <= 0) {
      return new Measure(0, 0, 0, Double.isNaN(beyond) ? beyond : 0, 0, pairs, effective);
    }
    double correlation = weighted / usageSum;
    return new Measure(
        correlation,
        correlation - termSum / pairs,
        comovingCpu(us, cs, pairs),
        beyond,
        Double.isNaN(rcu) ? 0 : rcu,
        pairs,
        effective);
  }

  /**
   * The residuals of y's least-squares line on x over the first n values: what of y its relation to
   * x leaves. Their autocorrelation is the one the test of that relation must allow for: the
   * victim's CPI with its own slow moves (a step, a drift) left in, what follows the suspect's
   * usage taken out.
   */
  static double[] residuals(double[] y, double[] x, int n) {
    double mx = 0;
    double my = 0;
    for (int i = 0; i < n; i++) {
      mx += x[i];
      my += y[i];
    }
    mx /= n;
    my /= n;
    double sxx = 0;
    double sxy = 0;
    for (int i = 0; i < n; i++) {
      sxx += (x[i] - mx) * (x[i] - mx);
      sxy += (x[i] - mx) * (y[i] - my);
    }
    double b = flat(sxx / n, mx) ? 0 : sxy / sxx;
    double[] e = new double[n];
    for (int i = 0; i < n; i++) {
      e[i] = y[i] - my - b * (x[i] - mx);
    }
    return e;
  }

  /**
   * The lag-1 autocorrelation of the first n values: sum (x_k - m)(x_k+1 - m) / sum (x_k - m)^2.
   * NaN under 3 values or without variation.
   */
  static double lagOne(double[] x, int n) {
    return lagOne(x, n, mean(x, n));
  }

  /**
   * As {@link #lagOne(double[], int)}; without variation means a variance under that {@link #flat}
   * allows a series of mean {@code scale} (the residuals of a series have mean 0: their scale is
   * the series').
   */
  static double lagOne(double[] x, int n, double scale) {
    if (n < 3) {
      return Double.NaN;
    }
    double m = 0;
    for (int i = 0; i < n; i++) {
      m += x[i];
    }
    m /= n;
    double num = 0;
    double den = 0;
    for (int i = 0; i < n; i++) {
      den += (x[i] - m) * (x[i] - m);
      if (i + 1 < n) {
        num += (x[i] - m) * (x[i + 1] - m);
      }
    }
    return flat(den / n, scale) ? Double.NaN : num / den;
  }

  private static double mean(double[] x, int n) {
    double m = 0;
    for (int i = 0; i < n; i++) {
      m += x[i];
    }
    return n == 0 ? 0 : m / n;
  }

  /** Pearson's r of the first n values of x and y; NaN when either does not vary. */
  static double pearson(double[] x, double[] y, int n) {
    double[] m = sums(x, y, n);
    return pearson(n, m[0], m[1], m[2], m[3], m[4]);
  }

  /** {@link #comovingCpu(int, double, double, double, double, double)} of the first n pairs. */
  static double comovingCpu(double[] u, double[] c, int n) {
    double[] m = sums(u, c, n);
    return comovingCpu(n, m[0], m[1], m[2], m[3], m[4]);
  }

  /** The sums of x, x^2, y, y^2 and xy over the first n pairs. */
  private static double[] sums(double[] x, double[] y, int n) {
    double[] m = new double[5];
    for (int i = 0; i < n; i++) {
      m[0] += x[i];
      m[1] += x[i] * x[i];
      m[2] += y[i];
      m[3] += y[i] * y[i];
      m[4] += x[i] * y[i];
    }
    return m;
  }

  /** r(u, c | v) from r(c, u), r(c, v) and r(u, v); see {@link #measure}. */
  private static double partial(double rcu, double rcv, double ruv) {
    if (Double.isNaN(rcv)) {
      return Double.NaN;
    }
    if (Double.isNaN(rcu) || Double.isNaN(ruv)) {
      return 0; // a constant suspect explains no variation
    }
    double rest = (1 - rcv * rcv) * (1 - ruv * ruv);
    if (1 - ruv * ruv < MIRROR || rest <= 1e-12) {
      return 0;
    }
    return (rcu - rcv * ruv) / Math.sqrt(rest);
  }

  /**
   * The suspect's usage that moves with the victim's CPI, in CPU-sec/sec: Pearson's r of usage and
   * CPI times the usage's standard deviation, which is their covariance over the CPI's standard
   * deviation. 0 without variation in the CPI or with fewer than {@link #MIN_COMOVING_PAIRS} pairs.
   */
  static double comovingCpu(int n, double u, double uu, double c, double cc, double uc) {
    if (n < MIN_COMOVING_PAIRS) {
      return 0;
    }
    double cpiVar = cc / n - (c / n) * (c / n);
    if (flat(cpiVar, c / n)) {
      return 0;
    }
    return (uc / n - (u / n) * (c / n)) / Math.sqrt(cpiVar);
  }

  /**
   * Pearson's r of the victim's own CPU usage and its CPI over its first {@code n} samples; NaN
   * with fewer than {@link #MIN_COMOVING_PAIRS} samples or when either does not vary. Strongly
   * negative when its CPI rises as its own usage falls: self-inflicted (paper 6.1, case 3).
   */
  public static double ownUsageR(double[] victimCpu, double[] victimCpi, int n) {
    if (n < MIN_COMOVING_PAIRS) {
      return Double.NaN;
    }
    return pearson(victimCpu, victimCpi, n);
  }

  /**
   * Whether a series of this variance and mean does not vary: its variance is under 1e-12 of its
   * mean squared, rounding's share, whatever the signal's unit (a latency in seconds varies by
   * 1e-13 s^2 and moves all the same); a series of mean 0 varies when its variance is positive.
   */
  static boolean flat(double variance, double mean) {
    return !(variance > 1e-12 * mean * mean);
  }

  /** 1 − r(u, v)² below this: the suspect's usage is the victim's own, mirrored or in step. */
  private static final double MIRROR = 0.05;

  private static double pearson(int n, double x, double xx, double y, double yy, double xy) {
    double vx = xx / n - (x / n) * (x / n);
    double vy = yy / n - (y / n) * (y / n);
    if (flat(vx, x / n) || flat(vy, y / n)) {
      return Double.NaN;
    }
    double r = (xy / n - (x / n) * (y / n)) / Math.sqrt(vx * vy);
    return Math.max(-1, Math.min(1, r));
  }

  /**
   * The highest correlation a suspect can reach over the victim's first {@code n} samples without
   * piling its usage on a few of them: the mean term of the samples above the threshold, which a
   * suspect using the same CPU in each of those samples and none in the others gets. It is bounded
   * by 1 − threshold / CPI: a victim whose CPI stays under 1 / (1 − 0.35) ≈ 1.54 times its
   * threshold gives no suspect the paper's 0.35, however well its usage follows the CPI. 1 when no
   * sample is above the threshold (nothing to scale).
   */
  public static double ceiling(double[] victimCpi, int n, double threshold) {
    double sum = 0;
    int above = 0;
    for (int i = 0; i < n; i++) {
      if (victimCpi[i] > threshold) {
        sum += term(victimCpi[i], threshold);
        above++;
      }
    }
    return above == 0 ? 1 : sum / above;
  }

  /** Σ u_i·term(c_i) / Σ u_i equals the paper's sum with normalised u. */
  static double term(double c, double threshold) {
    if (c > threshold) {
      return 1 - threshold / c;
    }
    if (c < threshold) {
      return c / threshold - 1;
    }
    return 0;
  }
}
