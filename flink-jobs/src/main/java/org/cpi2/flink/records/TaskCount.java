package org.cpi2.flink.records;

import java.util.Arrays;

/**
 * Samples one task contributed to its job's spec over the spec's history, when it was last seen,
 * and the ends of the periods not yet folded in which it reported (usually one, two across a period
 * boundary). A Flink POJO.
 */
public class TaskCount {
  public long count;
  public long lastSeenUs;
  public long[] periods = new long[0];

  public TaskCount() {}

  /** Notes that the task reported in the period ending at {@code periodEnd}. */
  public void seenIn(long periodEnd) {
    for (long p : periods) {
      if (p == periodEnd) {
        return;
      }
    }
    periods = Arrays.copyOf(periods, periods.length + 1);
    periods[periods.length - 1] = periodEnd;
  }

  /** Forgets the period ending at {@code periodEnd}; true if the task had reported in it. */
  public boolean forget(long periodEnd) {
    for (int i = 0; i < periods.length; i++) {
      if (periods[i] == periodEnd) {
        long[] rest = new long[periods.length - 1];
        System.arraycopy(periods, 0, rest, 0, i);
        System.arraycopy(periods, i + 1, rest, i, periods.length - i - 1);
        periods = rest;
        return true;
      }
    }
    return false;
  }
}
