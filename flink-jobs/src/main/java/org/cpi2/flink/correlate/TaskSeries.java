package org.cpi2.flink.correlate;

import java.util.Arrays;
import java.util.Objects;
import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.TaskClass;

/**
 * The recent samples of one task on one host, sorted by window start: CPI (NaN when unknown), CPU
 * usage and whether the sample was an outlier, plus what the task is and the spec it was last
 * judged against. Bounded by a retention span of event time. The first {@link #size()} elements of
 * the arrays are the samples; the arrays have room to spare, so that a sample is added and the
 * oldest evicted in place: series reallocated at every sample would be a large share of the
 * TaskManager's allocations and keep the young collections copying them. Checkpointed by {@code
 * types.TaskSeriesSerializer}, which must learn every field added here.
 */
public class TaskSeries {
  public String task;
  public String job;
  public String platform;
  public TaskClass taskClass;
  public boolean isProtected;

  /** The spec the task was last judged against; null until one was known. */
  public SpecVerdict spec;

  /** Samples held: valid elements of the arrays below. */
  public int size;

  public long[] times = new long[0];
  public double[] cpi = new double[0];
  public double[] cpu = new double[0];
  public boolean[] outlier = new boolean[0];

  public TaskSeries() {}

  public int size() {
    return size;
  }

  /**
   * What the task is, from its newest sample. Strings equal to those held are not stored: every
   * sample decodes new ones, and storing them would keep each long-lived series pointing at young
   * objects, which every young collection would then copy.
   */
  public void describe(String taskJob, String taskPlatform, TaskClass cls) {
    job = kept(job, taskJob);
    platform = kept(platform, taskPlatform);
    taskClass = cls;
  }

  private static String kept(String held, String latest) {
    return Objects.equals(held, latest) ? held : latest;
  }

  public long newest() {
    return size == 0 ? Long.MIN_VALUE : times[size - 1];
  }

  /** Whether there is a sample at exactly {@code t}. */
  public boolean has(long t) {
    return Arrays.binarySearch(times, 0, size, t) >= 0;
  }

  /** The value (CPI or the signal's) of the sample at exactly {@code t}; NaN if none. */
  public double valueAt(long t) {
    int pos = Arrays.binarySearch(times, 0, size, t);
    return pos >= 0 ? cpi[pos] : Double.NaN;
  }

  /** The time of the newest sample before {@code t}; Long.MIN_VALUE if none. */
  public long timeBefore(long t) {
    int pos = Arrays.binarySearch(times, 0, size, t);
    int before = (pos >= 0 ? pos : -pos - 1) - 1;
    return before >= 0 ? times[before] : Long.MIN_VALUE;
  }

  /**
   * Adds one sample in time order; a sample with an existing time replaces it, so a replay is not
   * counted twice. Callers bound the series with {@link #evictUpTo}.
   */
  public void add(long t, double cpiValue, double cpuValue, boolean isOutlier) {
    int pos = Arrays.binarySearch(times, 0, size, t);
    if (pos >= 0) {
      cpi[pos] = cpiValue;
      cpu[pos] = cpuValue;
      outlier[pos] = isOutlier;
      return;
    }
    int at = -pos - 1;
    if (size == times.length) {
      int room = Math.max(4, size * 3 / 2 + 1);
      times = Arrays.copyOf(times, room);
      cpi = Arrays.copyOf(cpi, room);
      cpu = Arrays.copyOf(cpu, room);
      outlier = Arrays.copyOf(outlier, room);
    }
    int tail = size - at;
    System.arraycopy(times, at, times, at + 1, tail);
    System.arraycopy(cpi, at, cpi, at + 1, tail);
    System.arraycopy(cpu, at, cpu, at + 1, tail);
    System.arraycopy(outlier, at, outlier, at + 1, tail);
    times[at] = t;
    cpi[at] = cpiValue;
    cpu[at] = cpuValue;
    outlier[at] = isOutlier;
    size++;
  }

  /** Drops samples whose time is at or before {@code t}; true when nothing is left. */
  public boolean evictUpTo(long t) {
    int first = 0;
    while (first < size && times[first] <= t) {
      first++;
    }
    if (first > 0) {
      int rest = size - first;
      System.arraycopy(times, first, times, 0, rest);
      System.arraycopy(cpi, first, cpi, 0, rest);
      System.arraycopy(cpu, first, cpu, 0, rest);
      System.arraycopy(outlier, first, outlier, 0, rest);
      size = rest;
    }
    return size == 0;
  }

  /** Outliers with a time strictly after {@code t}. */
  public int outliersAfter(long t) {
    int n = 0;
    for (int i = 0; i < size; i++) {
      if (times[i] > t && outlier[i]) {
        n++;
      }
    }
    return n;
  }
}
