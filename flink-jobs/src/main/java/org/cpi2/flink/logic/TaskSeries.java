package org.cpi2.flink.logic;

import java.util.Arrays;

/**
 * The recent samples of one task on one host, sorted by window start: CPI (NaN when unknown), CPU
 * usage and whether the sample was an outlier, plus what the task is and the spec it was last
 * judged against. Bounded by a retention span of event time. Checkpointed by
 * {@code types.TaskSeriesSerializer}, which must learn every field added here.
 */
public class TaskSeries {
  public String task;
  public String job;
  public String platform;
  public String taskClass;
  public boolean isProtected;
  public boolean specKnown;
  public boolean specUsable;
  public double specMean;
  public double specStddev;
  public double threshold;
  public long[] times = new long[0];
  public double[] cpi = new double[0];
  public double[] cpu = new double[0];
  public boolean[] outlier = new boolean[0];

  public TaskSeries() {}

  public int size() {
    return times.length;
  }

  public long newest() {
    return times.length == 0 ? Long.MIN_VALUE : times[times.length - 1];
  }

  /** Whether there is a sample at exactly {@code t}. */
  public boolean has(long t) {
    return Arrays.binarySearch(times, t) >= 0;
  }

  /** The time of the newest sample before {@code t}; Long.MIN_VALUE if none. */
  public long timeBefore(long t) {
    int pos = Arrays.binarySearch(times, t);
    int before = (pos >= 0 ? pos : -pos - 1) - 1;
    return before >= 0 ? times[before] : Long.MIN_VALUE;
  }

  /**
   * Adds one sample in time order; a sample with an existing time replaces it, so a replay is not
   * counted twice. Callers bound the series with {@link #evictUpTo}.
   */
  public void add(long t, double cpiValue, double cpuValue, boolean isOutlier) {
    int pos = Arrays.binarySearch(times, t);
    if (pos >= 0) {
      cpi[pos] = cpiValue;
      cpu[pos] = cpuValue;
      outlier[pos] = isOutlier;
    } else {
      int at = -pos - 1;
      times = insert(times, at, t);
      cpi = insert(cpi, at, cpiValue);
      cpu = insert(cpu, at, cpuValue);
      outlier = insert(outlier, at, isOutlier);
    }
  }

  /** Drops samples whose time is at or before {@code t}; true when nothing is left. */
  public boolean evictUpTo(long t) {
    int first = 0;
    while (first < times.length && times[first] <= t) {
      first++;
    }
    if (first > 0) {
      times = Arrays.copyOfRange(times, first, times.length);
      cpi = Arrays.copyOfRange(cpi, first, cpi.length);
      cpu = Arrays.copyOfRange(cpu, first, cpu.length);
      outlier = Arrays.copyOfRange(outlier, first, outlier.length);
    }
    return times.length == 0;
  }

  /** Outliers with a time strictly after {@code t}. */
  public int outliersAfter(long t) {
    int n = 0;
    for (int i = 0; i < times.length; i++) {
      if (times[i] > t && outlier[i]) {
        n++;
      }
    }
    return n;
  }

  private static long[] insert(long[] a, int at, long v) {
    long[] out = new long[a.length + 1];
    System.arraycopy(a, 0, out, 0, at);
    out[at] = v;
    System.arraycopy(a, at, out, at + 1, a.length - at);
    return out;
  }

  private static double[] insert(double[] a, int at, double v) {
    double[] out = new double[a.length + 1];
    System.arraycopy(a, 0, out, 0, at);
    out[at] = v;
    System.arraycopy(a, at, out, at + 1, a.length - at);
    return out;
  }

  private static boolean[] insert(boolean[] a, int at, boolean v) {
    boolean[] out = new boolean[a.length + 1];
    System.arraycopy(a, 0, out, 0, at);
    out[at] = v;
    System.arraycopy(a, at, out, at + 1, a.length - at);
    return out;
  }
}
