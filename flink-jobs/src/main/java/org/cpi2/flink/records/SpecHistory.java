package org.cpi2.flink.records;

import java.util.Arrays;
import org.cpi2.schema.CpiSpec;

/**
 * The last few specs of one job × platform, oldest first, so that a sample is judged against the
 * spec in force at its own event time (the newest spec whose period ended at or before it), even
 * when the watermark jumps and newer specs arrive before older samples are judged.
 */
public class SpecHistory {
  public static final int KEEP = 4;

  public CpiSpec[] specs = new CpiSpec[0];

  public SpecHistory() {}

  /** A copy with {@code spec} added in period order (same period: replaced), at most KEEP long. */
  public SpecHistory with(CpiSpec spec) {
    CpiSpec[] next = Arrays.copyOf(specs, specs.length + 1);
    int i = specs.length;
    while (i > 0 && next[i - 1].getPeriodEndUs() > spec.getPeriodEndUs()) {
      next[i] = next[i - 1];
      i--;
    }
    next[i] = spec;
    if (i > 0 && next[i - 1].getPeriodEndUs() == spec.getPeriodEndUs()) {
      System.arraycopy(next, i, next, i - 1, next.length - i);
      next = Arrays.copyOf(next, next.length - 1);
    }
    SpecHistory h = new SpecHistory();
    h.specs = next.length > KEEP ? Arrays.copyOfRange(next, next.length - KEEP, next.length) : next;
    return h;
  }

  /** The newest spec whose period ended at or before {@code tUs}; null if none. */
  public CpiSpec at(long tUs) {
    for (int i = specs.length - 1; i >= 0; i--) {
      if (specs[i].getPeriodEndUs() <= tUs) {
        return specs[i];
      }
    }
    return null;
  }
}
