package org.cpi2.flink.detect;

import java.util.Arrays;

/**
 * Paper section 4.1: a task is anomalous when it has at least {@code outliers} outliers within
 * {@code windowUs} of event time. Works on the sorted outlier timestamps of one task, so samples
 * may arrive out of order: an outlier is placed where its event time says, and whether it makes the
 * task anomalous is judged over every window of that length that contains it.
 *
 * <p>Late-sample policy: outliers older than the task's newest outlier minus the window can no
 * longer complete a current window and are dropped ({@link #insert} returns without them).
 */
public final class AnomalyWindow {
  private final int outliers;
  private final long windowUs;

  public AnomalyWindow(int outliers, long windowUs) {
    if (outliers < 1 || windowUs <= 0) {
      throw new IllegalArgumentException("need outliers >= 1 and a positive window");
    }
    this.outliers = outliers;
    this.windowUs = windowUs;
  }

  /** The sorted times with {@code t} added (duplicates kept once) and expired entries removed. */
  public long[] insert(long[] times, long t) {
    long[] base = times == null ? new long[0] : times;
    int pos = Arrays.binarySearch(base, t);
    long[] all;
    if (pos >= 0) {
      all = base;
    } else {
      int at = -pos - 1;
      all = new long[base.length + 1];
      System.arraycopy(base, 0, all, 0, at);
      all[at] = t;
      System.arraycopy(base, at, all, at + 1, base.length - at);
    }
    long newest = all[all.length - 1];
    int first = 0;
    while (first < all.length && all[first] <= newest - windowUs) {
      first++;
    }
    return first == 0 ? all : Arrays.copyOfRange(all, first, all.length);
  }

  /** How many of the sorted times lie in the window that ends just before {@code t}. */
  public int before(long[] sortedTimes, long t) {
    int n = 0;
    for (long s : sortedTimes) {
      n += s < t && s > t - windowUs ? 1 : 0;
    }
    return n;
  }

  /** Whether {@code t} would complete an anomaly: enough outliers in the window before it. */
  public boolean completes(long[] sortedTimes, long t) {
    return before(sortedTimes, t) + 1 >= outliers;
  }

  /** Whether some window of the configured length holds {@code t} and enough outliers. */
  public boolean isAnomalous(long[] sortedTimes, long t) {
    for (int i = 0; i < sortedTimes.length; i++) {
      long start = sortedTimes[i];
      if (start > t) {
        break;
      }
      if (t - start >= windowUs) {
        continue;
      }
      int n = 0;
      for (int j = i; j < sortedTimes.length && sortedTimes[j] - start < windowUs; j++) {
        n++;
      }
      if (n >= outliers) {
        return true;
      }
    }
    return false;
  }
}
