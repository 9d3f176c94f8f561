package org.cpi2.flink.records;

import org.cpi2.flink.logic.TaskSeries;

/** An anomaly waiting for its analysis: when it happened and the spec it was judged against. */
public class PendingAnalysis {
  public long timeUs;
  public boolean specUsable;
  public double specMean;
  public double specStddev;
  public double threshold;

  public PendingAnalysis() {}

  public static PendingAnalysis of(ScoredSample s) {
    PendingAnalysis p = new PendingAnalysis();
    p.timeUs = s.timeUs;
    p.specUsable = s.specUsable;
    p.specMean = s.specMean;
    p.specStddev = s.specStddev;
    p.threshold = s.threshold;
    return p;
  }

  public void applySpecTo(TaskSeries v) {
    v.specKnown = true;
    v.specUsable = specUsable;
    v.specMean = specMean;
    v.specStddev = specStddev;
    v.threshold = threshold;
  }
}
