package org.cpi2.flink.logic;

import org.cpi2.flink.spec.SpecMath;

/**
 * Moments of one aggregation period of one (job, platform): count, sum and sum of squares of CPI,
 * and the sum of CPU usage, over the samples that pass {@link SpecMath#counts}. A Flink POJO.
 */
public class PeriodMoments {
  public long count;
  public double sum;
  public double sumSq;
  public double cpuSum;

  public PeriodMoments() {}

  /** Adds the moments of other samples of the period (combined before the shuffle). */
  public void add(long otherCount, double otherSum, double otherSumSq, double otherCpuSum) {
    count += otherCount;
    sum += otherSum;
    sumSq += otherSumSq;
    cpuSum += otherCpuSum;
  }

  public void add(double cpi, double cpuUsage) {
    count++;
    sum += cpi;
    sumSq += cpi * cpi;
    cpuSum += cpuUsage;
  }
}
