package org.cpi2.flink.correlate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class TaskSeriesTest {
  private static List<Long> times(TaskSeries s) {
    List<Long> out = new ArrayList<>();
    for (int i = 0; i < s.size(); i++) {
      out.add(s.times[i]);
    }
    return out;
  }

  @Test
  void keepsSamplesSortedReplacesEqualTimesAndEvictsTheOldest() {
    TaskSeries s = new TaskSeries();
    s.add(30, 3.0, 0.3, false);
    s.add(10, 1.0, 0.1, true);
    s.add(20, 2.0, 0.2, false);
    s.add(20, 2.5, 0.25, true); // a replayed time replaces
    assertEquals(List.of(10L, 20L, 30L), times(s));
    assertEquals(2.5, s.cpi[1]);
    assertEquals(0.25, s.cpu[1]);
    assertTrue(s.outlier[1]);
    assertEquals(30, s.newest());
    assertEquals(20, s.timeBefore(30));
    assertEquals(Long.MIN_VALUE, s.timeBefore(10));
    assertTrue(s.has(20));
    assertFalse(s.has(25));
    assertEquals(1, s.outliersAfter(10));
    assertFalse(s.evictUpTo(15));
    assertEquals(List.of(20L, 30L), times(s));
    assertEquals(3.0, s.cpi[1]);
    assertTrue(s.evictUpTo(30));
    assertEquals(Long.MIN_VALUE, s.newest());
  }

  @Test
  void describeKeepsTheHeldStringsWhileTheyAreEqual() {
    TaskSeries s = new TaskSeries();
    String job = new String("websearch");
    s.describe(job, "p1", TaskClass.LATENCY_SENSITIVE);
    assertSame(job, s.job);
    s.describe(
        new String("websearch"),
        new String("p1"),
        TaskClass.LATENCY_SENSITIVE); // a new sample's copies
    assertSame(job, s.job, "an equal string is not stored again");
    String moved = new String("p2");
    s.describe(new String("websearch"), moved, TaskClass.BATCH);
    assertSame(job, s.job);
    assertSame(moved, s.platform, "a changed platform is taken");
    assertEquals(TaskClass.BATCH, s.taskClass);
  }

  @Test
  void steadyAddAndEvictReusesTheArrays() {
    TaskSeries s = new TaskSeries();
    for (long t = 1; t <= 10; t++) {
      s.add(t, t, t, false);
    }
    long[] times = s.times;
    for (long t = 11; t <= 1000; t++) {
      s.add(t, t, t, false);
      s.evictUpTo(t - 10);
    }
    assertSame(times, s.times, "a bounded series does not reallocate");
    assertEquals(10, s.size());
    assertEquals(991, s.times[0]);
    assertEquals(1000.0, s.cpi[9]);
  }

  @Test
  void matchesASortedMapUnderRandomAddsAndEvictions() {
    Random r = new Random(3);
    TaskSeries s = new TaskSeries();
    TreeMap<Long, Double> model = new TreeMap<>();
    for (int i = 0; i < 5000; i++) {
      long t = r.nextInt(200);
      if (r.nextInt(10) == 0) {
        s.evictUpTo(t);
        model.headMap(t, true).clear();
      } else {
        s.add(t, t * 0.5 + i, 0, false);
        model.put(t, t * 0.5 + i);
      }
      assertEquals(new ArrayList<>(model.keySet()), times(s));
      int k = 0;
      for (double v : model.values()) {
        assertEquals(v, s.cpi[k++]);
      }
    }
  }
}
