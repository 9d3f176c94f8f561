package org.cpi2.flink.detect;

/**
 * Paper section 4.1: a sample is an outlier when its CPI exceeds the spec's mean plus {@code
 * sigmas} standard deviations and the task used at least the minimum CPU (low-usage CPI is
 * unreliable, case 3 of section 6.1). For a signal other than CPI the threshold is at least an
 * absolute floor ({@code outlier.floor}; 0 for CPI, whose threshold is the paper's).
 */
public final class OutlierRule {
  private final double sigmas;
  private final double minCpuUsage;
  private final double floor;

  public OutlierRule(double sigmas, double minCpuUsage) {
    this(sigmas, minCpuUsage, 0);
  }

  public OutlierRule(double sigmas, double minCpuUsage, double floor) {
    this.sigmas = sigmas;
    this.minCpuUsage = minCpuUsage;
    this.floor = floor;
  }

  /** The abnormal-CPI threshold c_t of a spec. */
  public double threshold(double specMean, double specStddev) {
    double t = specMean + sigmas * specStddev;
    return floor > 0 ? Math.max(t, floor) : t;
  }

  public boolean isOutlier(double cpi, double cpuUsage, double threshold) {
    return Double.isFinite(cpi) && cpuUsage >= minCpuUsage && cpi > threshold;
  }

  public double minCpuUsage() {
    return minCpuUsage;
  }
}
