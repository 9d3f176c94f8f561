package org.cpi2.flink.logic;

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

  /** Adds what a combined input holds. */
  public void add(org.cpi2.flink.records.SpecInput in) {
    count += in.count;
    sum += in.sum;
    sumSq += in.sumSq;
    cpuSum += in.cpuSum;
  }

  public void add(double cpi, double cpuUsage) {
    count++;
    sum += cpi;
    sumSq += cpi * cpi;
    cpuSum += cpuUsage;
  }
}
