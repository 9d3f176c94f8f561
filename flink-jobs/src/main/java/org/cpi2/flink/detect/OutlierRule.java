package org.cpi2.flink.detect;

/**
 * Paper section 4.1: a sample is an outlier when its CPI exceeds the spec's mean plus {@code
 * sigmas} standard deviations and the task used at least the minimum CPU (low-usage CPI is
 * unreliable, case 3 of section 6.1). For a signal other than CPI the value must also exceed an
 * absolute floor ({@code outlier.floor}; 0 for CPI, whose rule is the paper's). The floor gates
 * outliers only: the threshold the correlation measures a victim against stays the spec's, so a
 * floor far above a job's normal level does not turn every normal window into a deep negative term
 * for each busy neighbour. It may also have to exceed the spec's mean times a ratio ({@code
 * outlier.min-ratio}; 0: no such gate), a floor in the signal's own units for the signals whose
 * units are each job's (CPU per unit of work, latency), gating outliers in the same way; a value at
 * or above {@code outlier.min-ratio-cap} (0: none) passes that gate whatever the mean (a pressure
 * of a quarter of the window is enough, however much the task usually waits).
 */
public final class OutlierRule {
  private final double sigmas;
  private final double minCpuUsage;
  private final double floor;
  private final double minRatio;
  private final double ratioCap;

  public OutlierRule(double sigmas, double minCpuUsage) {
    this(sigmas, minCpuUsage, 0, 0);
  }

  public OutlierRule(double sigmas, double minCpuUsage, double floor) {
    this(sigmas, minCpuUsage, floor, 0);
  }

  public OutlierRule(double sigmas, double minCpuUsage, double floor, double minRatio) {
    this(sigmas, minCpuUsage, floor, minRatio, 0);
  }

  public OutlierRule(
      double sigmas, double minCpuUsage, double floor, double minRatio, double ratioCap) {
    this.sigmas = sigmas;
    this.minCpuUsage = minCpuUsage;
    this.floor = floor;
    this.minRatio = minRatio;
    this.ratioCap = ratioCap;
  }

  /** The abnormal-CPI threshold c_t of a spec: its mean plus {@code sigmas} deviations. */
  public double threshold(double specMean, double specStddev) {
    return specMean + sigmas * specStddev;
  }

  /** Above the spec's threshold and the floor, at or above the CPU floor. */
  public boolean isOutlier(double cpi, double cpuUsage, double threshold) {
    return Double.isFinite(cpi) && cpuUsage >= minCpuUsage && cpi > threshold && cpi > floor;
  }

  /** As above, and above the spec's mean times the minimum ratio or at least the ratio's cap. */
  public boolean isOutlier(double cpi, double cpuUsage, double threshold, double specMean) {
    return isOutlier(cpi, cpuUsage, threshold)
        && (cpi > minRatio * specMean || (ratioCap > 0 && cpi >= ratioCap));
  }

  public double minCpuUsage() {
    return minCpuUsage;
  }
}
