package org.cpi2.flink.detect;

/**
 * Paper section 4.1: a sample is an outlier when its CPI exceeds the spec's mean plus {@code
 * sigmas} standard deviations and the task used at least the minimum CPU (low-usage CPI is
 * unreliable, case 3 of section 6.1).
 */
public final class OutlierRule {
  private final double sigmas;
  private final double minCpuUsage;

  public OutlierRule(double sigmas, double minCpuUsage) {
    this.sigmas = sigmas;
    this.minCpuUsage = minCpuUsage;
  }

  /** The abnormal-CPI threshold c_t of a spec. */
  public double threshold(double specMean, double specStddev) {
    return specMean + sigmas * specStddev;
  }

  public boolean isOutlier(double cpi, double cpuUsage, double threshold) {
    return Double.isFinite(cpi) && cpuUsage >= minCpuUsage && cpi > threshold;
  }

  public double minCpuUsage() {
    return minCpuUsage;
  }
}
