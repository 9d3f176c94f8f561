package org.cpi2.flink.logic;

/**
 * The antagonist correlation of paper section 4.2 (DESIGN.md). Over the time-aligned pairs
 * (victim CPI c_i, suspect CPU usage u_i), with u normalised so that it sums to 1 over those
 * pairs: add u_i·(1 − c_t/c_i) when c_i > c_t and u_i·(c_i/c_t − 1) when c_i < c_t. The result
 * lies in [−1, 1]. Pairs are aligned on equal window start times; both series are sorted by time.
 * A suspect with no aligned pair, or whose aligned usage sums to 0, correlates 0 with lift 0.
 */
public final class AntagonistCorrelation {
  private AntagonistCorrelation() {}

  /**
   * The paper's correlation and its lift: the correlation minus the plain mean of the same
   * pairs' terms, which is what a suspect of constant usage would get. When the victim's CPI is
   * above the threshold through the whole window, every tenant correlates about equally (the
   * terms are all positive whatever the usage); the lift is what separates a suspect whose usage
   * rose and fell with the victim's CPI from a bystander.
   */
  public record Measure(double correlation, double lift) {}

  public static double correlate(
      long[] victimTimes,
      double[] victimCpi,
      int victimLength,
      double threshold,
      long[] suspectTimes,
      double[] suspectCpu,
      int suspectLength) {
    return measure(victimTimes, victimCpi, victimLength, threshold, suspectTimes, suspectCpu, suspectLength).correlation();
  }

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
          pairs++;
        }
        i++;
        j++;
      }
    }
    if (usageSum <= 0) {
      return new Measure(0, 0);
    }
    double correlation = weighted / usageSum;
    return new Measure(correlation, correlation - termSum / pairs);
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
