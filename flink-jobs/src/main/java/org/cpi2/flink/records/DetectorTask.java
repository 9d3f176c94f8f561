package org.cpi2.flink.records;

/**
 * What the anomaly detector keeps of one task of a host: the times of its recent outliers (sorted,
 * within one anomaly window of the newest) and of its samples waiting for their spec (sorted). A
 * Flink POJO.
 */
public class DetectorTask {
  public long[] outliers = new long[0];
  public long[] waiting = new long[0];

  /**
   * The re-baselined spec (its period_end_us) for which the task's shift anomaly was reported; 0:
   * none.
   */
  public long shiftReportedUs;

  public DetectorTask() {}

  public long newestOutlier() {
    return outliers.length == 0 ? Long.MIN_VALUE : outliers[outliers.length - 1];
  }
}
