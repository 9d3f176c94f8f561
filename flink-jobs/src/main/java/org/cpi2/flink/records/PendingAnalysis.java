package org.cpi2.flink.records;

import org.cpi2.flink.correlate.TaskSeries;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.detect.SpecVerdict;

/**
 * An anomaly waiting for its analysis: when it happened and the spec it was judged against. In the
 * correlator's state through Flink's POJO serializer, whose savepoints name these fields: they stay
 * flat rather than a {@link SpecVerdict}.
 */
public class PendingAnalysis {
  public long timeUs;
  public boolean specUsable;
  public double specMean;
  public double specStddev;
  public double threshold;

  /** The anomaly is its job's shift ({@link ScoredSample#shifted}): no cap, JOB_WIDE_SHIFT. */
  public boolean shifted;

  public PendingAnalysis() {}

  /** {@code s} must have been judged against a spec. */
  public static PendingAnalysis of(ScoredSample s) {
    PendingAnalysis p = new PendingAnalysis();
    p.timeUs = s.timeUs;
    p.specUsable = s.spec.usable();
    p.specMean = s.spec.mean();
    p.specStddev = s.spec.stddev();
    p.threshold = s.spec.threshold();
    p.shifted = s.shifted;
    return p;
  }

  public void applySpecTo(TaskSeries v) {
    v.spec = new SpecVerdict(specUsable, specMean, specStddev, threshold);
  }
}
