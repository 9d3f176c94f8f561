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
   * with the victim's CPI from a bystander.
   */
  public record Measure(
      double correlation, double lift, double comovingCpu, double beyondOwnUsage) {}

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
    double ownSum = 0;
    double ownSq = 0;
    double ownCpi = 0;
    double ownUsage = 0;
    double usageSum = 0;
    double weighted = 0;
    double termSum = 0;
    double usageSq = 0;
    double cpiSum = 0;
    double cpiSq = 0;
    double cross = 0;
    int pairs = 0;
    int i = 0;
    int j = 0;
    while (i < victimLength && j < suspectLength) {
      long tv = victimTimes[i];
      long ts = suspectTimes[j];
      if (tv < ts) {
        i++;
      } else if (ts < tv) {
        j++;
      } else {
        double u = suspectCpu[j];
        double c = victimCpi[i];
        if (u >= 0 && Double.isFinite(u)) {
          double t = term(c, threshold);
          usageSum += u;
          weighted += u * t;
          termSum += t;
          usageSq += u * u;
          cpiSum += c;
          cpiSq += c * c;
          cross += u * c;
          pairs++;
          if (victimCpu != null) {
            double v = victimCpu[i];
            ownSum += v;
            ownSq += v * v;
            ownCpi += v * c;
            ownUsage += v * u;
          }
        }
        i++;
        j++;
      }
    }
    double beyond = Double.NaN;
    if (victimCpu != null && pairs >= MIN_COMOVING_PAIRS) {
      double rcv = pearson(pairs, cpiSum, cpiSq, ownSum, ownSq, ownCpi);
      double rcu = pearson(pairs, cpiSum, cpiSq, usageSum, usageSq, cross);
      double ruv = pearson(pairs, usageSum, usageSq, ownSum, ownSq, ownUsage);
      beyond = partial(rcu, rcv, ruv);
    }
    if (usageSum <= 0) {
      return new Measure(0, 0, 0, Double.isNaN(beyond) ? beyond : 0);
    }
    double correlation = weighted / usageSum;
    return new Measure(
        correlation,
        correlation - termSum / pairs,
        comovingCpu(pairs, usageSum, usageSq, cpiSum, cpiSq, cross),
        beyond);
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
    if (cpiVar <= 1e-12) {
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
    double x = 0;
    double xx = 0;
    double y = 0;
    double yy = 0;
    double xy = 0;
    for (int i = 0; i < n; i++) {
      x += victimCpu[i];
      xx += victimCpu[i] * victimCpu[i];
      y += victimCpi[i];
      yy += victimCpi[i] * victimCpi[i];
      xy += victimCpu[i] * victimCpi[i];
    }
    return pearson(n, x, xx, y, yy, xy);
  }

  /** 1 − r(u, v)² below this: the suspect's usage is the victim's own, mirrored or in step. */
  private static final double MIRROR = 0.05;

  private static double pearson(int n, double x, double xx, double y, double yy, double xy) {
    double vx = xx / n - (x / n) * (x / n);
    double vy = yy / n - (y / n) * (y / n);
    if (vx <= 1e-12 || vy <= 1e-12) {
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
