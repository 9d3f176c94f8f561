package org.cpi2.flink.spec;

import java.util.Arrays;
import org.cpi2.flink.records.BucketHosts;
import org.cpi2.schema.CpiSpec;

/**
 * A change of a whole job (a new release, a new mix of requests): paper 3.1's spec is one per job
 * and platform, learnt over days, and a release is exactly when it is wrong: every task of the job
 * is then an outlier, on every host, with no neighbour to blame. Interference is a matter of a few
 * hosts, where an antagonist runs. So a bucket of event time (the sampling period) in which at
 * least {@code minShare} of the hosts that ran the job, and at least {@code minHosts} of them, had
 * a sample above the spec's outlier threshold (mean + k sigma, and the signal's floor) says the job
 * changed; so does one in which as many had every sample under mean - k sigma (a roll-back, the
 * load going down). The spec is then re-baselined by the ratio of the job's median level over those
 * hosts (the median of the hosts' means) to the spec's mean: its moments scaled, the spread
 * relative to the mean kept.
 *
 * <p>Error rate: in a steady job a sample is an outlier with probability p (paper 4.1: about 5% at
 * 2 sigma; here twice the normal tail beyond k sigma, for the right skew), so a host with n samples
 * of the job in the bucket has one with probability 1 - (1 - p)^n, independently of the others. The
 * hosts off the spec must also be more than a binomial tail of {@link #FALSE_SHIFT_RATE} allows at
 * that probability: a steady job of H hosts shows a shift in a bucket with probability under 1e-6
 * (1.4e-3 a day of 1-minute buckets), whatever H. At 2 sigma and a task a host that asks all of 5
 * hosts, 7 of 10, and the share (half) from 20 hosts on (JobShiftTest). A change every host of the
 * job sees at once, a drift of the whole job (the day's load), is what moves the share: a change of
 * the job, not interference, whatever its cause.
 */
public final class JobShift implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  private final double sigmas;
  private final double floor;
  private final double minShare;
  private final int minHosts;
  private final double outlierRate;

  /** The largest chance per bucket that a steady job shows a shift (see the class comment). */
  public static final double FALSE_SHIFT_RATE = 1e-6;

  /** A shift found: the ratio of the job's new level to the spec's mean, and what showed it. */
  public record Shift(double ratio, int hostsOff, int hosts) {
    /** The share of the hosts whose samples were off the spec. */
    public double share() {
      return hosts == 0 ? 0 : (double) hostsOff / hosts;
    }
  }

  /**
   * @param sigmas the outlier rule's k
   * @param floor the signal's outlier floor (0 for CPI)
   * @param minShare the share of the job's hosts off the spec in one bucket; 0 turns it off
   * @param minHosts the fewest hosts off the spec
   */
  public JobShift(double sigmas, double floor, double minShare, int minHosts) {
    this.sigmas = sigmas;
    this.floor = floor;
    this.minShare = minShare;
    this.minHosts = Math.max(1, minHosts);
    this.outlierRate = Math.min(0.5, 2 * normalTail(sigmas));
  }

  /** Whether it ever finds a shift. */
  public boolean enabled() {
    return minShare > 0;
  }

  /** The shift {@code b} shows against {@code spec}, or null. */
  public Shift find(CpiSpec spec, BucketHosts b) {
    if (!enabled() || spec == null || !spec.getUsable() || spec.getCpiStddev() <= 0) {
      return null;
    }
    double mean = spec.getCpiMean();
    double above = Math.max(mean + sigmas * spec.getCpiStddev(), floor);
    double below = mean - sigmas * spec.getCpiStddev();
    int hosts = 0;
    int up = 0;
    int down = 0;
    double chance = 0;
    double[] levels = new double[b.hosts.length];
    for (int i = 0; i < b.hosts.length; i++) {
      if (b.samples[i] <= 0) {
        continue;
      }
      chance += 1 - Math.pow(1 - outlierRate, b.samples[i]);
      levels[hosts++] = b.hostSum[i] / b.samples[i];
      if (b.hostMax[i] > above) {
        up++;
      } else if (b.hostMax[i] < below) {
        down++;
      }
    }
    int off = Math.max(up, down);
    if (hosts < minHosts
        || off < minHosts
        || off < minShare * hosts
        || mean <= 0
        || binomialTail(hosts, off, chance / hosts) > FALSE_SHIFT_RATE) {
      return null;
    }
    double[] l = Arrays.copyOf(levels, hosts);
    Arrays.sort(l);
    double median = hosts % 2 == 1 ? l[hosts / 2] : (l[hosts / 2 - 1] + l[hosts / 2]) / 2;
    double ratio = median / mean;
    if (!(ratio > 0) || (up >= down) != (ratio > 1)) {
      return null; // the hosts off the spec are not where the job's level went
    }
    return new Shift(ratio, off, hosts);
  }

  /** P(X >= k) for X binomial with n trials of probability p. */
  public static double binomialTail(int n, int k, double p) {
    if (k <= 0) {
      return 1;
    }
    if (k > n || p <= 0) {
      return 0;
    }
    if (p >= 1) {
      return 1;
    }
    double sum = 0;
    for (int i = k; i <= n; i++) {
      sum += Math.exp(logChoose(n, i) + i * Math.log(p) + (n - i) * Math.log1p(-p));
    }
    return Math.min(1, sum);
  }

  private static double logChoose(int n, int k) {
    double s = 0;
    for (int i = 1; i <= k; i++) {
      s += Math.log(n - k + i) - Math.log(i);
    }
    return s;
  }

  /** 1 - Phi(z) for the standard normal, to 1e-7 (Abramowitz and Stegun 26.2.17). */
  static double normalTail(double z) {
    if (z < 0) {
      return 1 - normalTail(-z);
    }
    double t = 1 / (1 + 0.2316419 * z);
    double poly =
        t
            * (0.319381530
                + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
    return Math.exp(-z * z / 2) / Math.sqrt(2 * Math.PI) * poly;
  }

  /**
   * {@code spec} re-baselined by {@code ratio}: its moments and CPI scaled (sum by the ratio, sum
   * of squares by its square), the rest kept.
   */
  public static CpiSpec rescale(CpiSpec spec, double ratio) {
    return CpiSpec.newBuilder(spec)
        .setCpiMean(spec.getCpiMean() * ratio)
        .setCpiStddev(spec.getCpiStddev() * ratio)
        .setWeightedSum(spec.getWeightedSum() * ratio)
        .setWeightedSumSq(spec.getWeightedSumSq() * ratio * ratio)
        .build();
  }
}
