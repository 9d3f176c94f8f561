package org.cpi2.flink.spec;

import java.util.Map;
import org.cpi2.flink.logic.PeriodMoments;
import org.cpi2.flink.signal.Signal;
import org.cpi2.schema.CpiSpec;

/**
 * The CPI spec arithmetic of paper section 3.1: per-period moments folded into age-weighted running
 * moments (previous moments times the age weight, then plus the new period), mean and standard
 * deviation from the weighted moments, and the eligibility rule (at least {@code minTasks} tasks
 * with at least {@code minSamplesPerTask} samples each).
 */
public final class SpecMath {
  private final double ageWeight;
  private final double minCpuUsage;
  private final int minTasks;
  private final long minSamplesPerTask;

  public SpecMath(double ageWeight, double minCpuUsage, int minTasks, long minSamplesPerTask) {
    if (ageWeight < 0 || ageWeight > 1) {
      throw new IllegalArgumentException("age weight must be in [0, 1]: " + ageWeight);
    }
    this.ageWeight = ageWeight;
    this.minCpuUsage = minCpuUsage;
    this.minTasks = minTasks;
    this.minSamplesPerTask = minSamplesPerTask;
  }

  /** Whether a sample counts towards the spec: a finite positive CPI at or above the CPU floor. */
  public boolean counts(Double cpi, double cpuUsage) {
    return counts(cpi, cpuUsage, minCpuUsage);
  }

  /** Whether a sample counts towards a spec with the CPU floor {@code minCpuUsage}. */
  public static boolean counts(Double cpi, double cpuUsage, double minCpuUsage) {
    return cpi != null && Double.isFinite(cpi) && cpi > 0 && cpuUsage >= minCpuUsage;
  }

  /**
   * Whether a sample counts towards a spec of {@code signal}: a value the signal can take (never a
   * missing one, which is not 0) at or above the CPU floor.
   */
  public static boolean counts(Signal signal, Double value, double cpuUsage, double minCpuUsage) {
    return signal.valid(value) && cpuUsage >= minCpuUsage;
  }

  /** Tasks whose sample count over the spec's history reaches the per-task minimum. */
  public int eligibleTasks(Iterable<Map.Entry<String, Long>> samplesPerTask) {
    int n = 0;
    for (Map.Entry<String, Long> e : samplesPerTask) {
      if (e.getValue() >= minSamplesPerTask) {
        n++;
      }
    }
    return n;
  }

  /**
   * Folds one period into the running spec. {@code previous} may be null (first period).
   *
   * @param numTasks distinct tasks with counted samples in this period
   * @param eligibleTasks tasks with enough samples over the spec's history
   */
  public CpiSpec fold(
      CpiSpec previous,
      String job,
      String platform,
      long periodEndUs,
      PeriodMoments period,
      int numTasks,
      int eligibleTasks) {
    double w = previous == null ? 0 : ageWeight;
    double count = period.count + (previous == null ? 0 : w * previous.getWeightedCount());
    double sum = period.sum + (previous == null ? 0 : w * previous.getWeightedSum());
    double sumSq = period.sumSq + (previous == null ? 0 : w * previous.getWeightedSumSq());
    double cpuSum = period.cpuSum + (previous == null ? 0 : w * previous.getWeightedCpuSum());
    double mean = count > 0 ? sum / count : 0;
    double variance = count > 0 ? Math.max(0, sumSq / count - mean * mean) : 0;
    return CpiSpec.newBuilder()
        .setJob(job)
        .setPlatform(platform)
        .setPeriodEndUs(periodEndUs)
        .setNumSamples(period.count)
        .setNumTasks(numTasks)
        .setEligibleTasks(eligibleTasks)
        .setCpuUsageMean(count > 0 ? cpuSum / count : 0)
        .setCpiMean(mean)
        .setCpiStddev(Math.sqrt(variance))
        .setUsable(eligibleTasks >= minTasks)
        .setWeightedCount(count)
        .setWeightedSum(sum)
        .setWeightedSumSq(sumSq)
        .setWeightedCpuSum(cpuSum)
        .build();
  }
}
