package org.cpi2.flink.detect;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AnomalyWindowTest {
  private static final long S = 1_000_000L;
  private final AnomalyWindow w = new AnomalyWindow(3, 300 * S);

  @Test
  void threeOutliersWithinFiveMinutesOutOfOrder() {
    long[] times = w.insert(null, 250 * S);
    assertFalse(w.isAnomalous(times, 250 * S));
    times = w.insert(times, 0);
    assertFalse(w.isAnomalous(times, 0));
    times = w.insert(times, 100 * S); // arrives last, lies in the middle
    assertArrayEquals(new long[] {0, 100 * S, 250 * S}, times);
    assertTrue(w.isAnomalous(times, 100 * S));
  }

  @Test
  void threeOutliersSpreadOverMoreThanFiveMinutesAreNot() {
    long[] times = null;
    for (long t : new long[] {0, 200 * S, 400 * S}) {
      times = w.insert(times, t);
      assertFalse(w.isAnomalous(times, t), "at " + t);
    }
    // Exactly five minutes apart is outside the half-open window [t, t + 5 min).
    long[] edge = w.insert(w.insert(w.insert(null, 0), 150 * S), 300 * S);
    assertFalse(w.isAnomalous(edge, 300 * S));
  }

  @Test
  void lateOutlierBeyondTheWindowIsDropped() {
    long[] times = w.insert(null, 1000 * S);
    times = w.insert(times, 600 * S);
    assertArrayEquals(new long[] {1000 * S}, times);
    assertFalse(w.isAnomalous(times, 600 * S));
  }

  @Test
  void replayedOutlierCountsOnce() {
    long[] times = w.insert(w.insert(null, 10 * S), 20 * S);
    times = w.insert(times, 20 * S);
    assertFalse(w.isAnomalous(times, 20 * S));
  }
}
