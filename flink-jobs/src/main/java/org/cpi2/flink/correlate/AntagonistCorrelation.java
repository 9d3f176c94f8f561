package org.cpi2.flink.correlate;

/**
 * The antagonist correlation of paper section 4.2 (DESIGN.md). Over the time-aligned pairs (victim
 * CPI c_i, suspect CPU usage u_i), with u normalised so that it sums to 1 over those pairs: add
 * u_i·(1 − c_t/c_i) when c_i > c_t and u_i·(c_i/c_t − 1) when c_i < c_t. The result lies in [−1,
 * 1]. Pairs are aligned on equal window start times; both series are sorted by time. A suspect with
 * no aligned pair, or whose aligned usage sums to 0, correlates 0 with lift 0.
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
  public record Measure(double correlation, double lift, double comovingCpu) {}

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
        }
        i++;
        j++;
      }
    }
    if (usageSum <= 0) {
      return new Measure(0, 0, 0);
    }
    double correlation = weighted / usageSum;
    return new Measure(
        correlation,
        correlation - termSum / pairs,
        comovingCpu(pairs, usageSum, usageSq, cpiSum, cpiSq, cross));
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
