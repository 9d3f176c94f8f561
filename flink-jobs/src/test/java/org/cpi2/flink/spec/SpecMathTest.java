package org.cpi2.flink.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.LinkedHashMap;
import java.util.Map;
import org.cpi2.flink.logic.PeriodMoments;
import org.cpi2.schema.CpiSpec;
import org.junit.jupiter.api.Test;

class SpecMathTest {
  private final SpecMath math = new SpecMath(0.9, 0.25, 5, 100);

  @Test
  void ageWeightingMatchesHandComputedExample() {
    // Period 1: CPI 1, 2, 3 at CPU 0.5; a CPI-100 sample at CPU 0.1 is filtered out.
    PeriodMoments p1 = new PeriodMoments();
    for (double[] s : new double[][] {{1, 0.5}, {2, 0.5}, {3, 0.5}, {100, 0.1}}) {
      if (math.counts(s[0], s[1])) {
        p1.add(s[0], s[1]);
      }
    }
    CpiSpec first = math.fold(null, "web", "p1", 3_600_000_000L, p1, 3, 0);
    assertEquals(3, first.getNumSamples());
    assertEquals(2.0, first.getCpiMean(), 1e-12);
    assertEquals(Math.sqrt(14.0 / 3 - 4), first.getCpiStddev(), 1e-12); // 0.8165
    assertEquals(0.5, first.getCpuUsageMean(), 1e-12);

    // Period 2: CPI 2, 4 at CPU 1.0. Weighted: count 0.9*3+2 = 4.7, sum 0.9*6+6 = 11.4,
    // sum of squares 0.9*14+20 = 32.6, CPU sum 0.9*1.5+2 = 3.35.
    PeriodMoments p2 = new PeriodMoments();
    p2.add(2, 1.0);
    p2.add(4, 1.0);
    CpiSpec second = math.fold(first, "web", "p1", 7_200_000_000L, p2, 2, 0);
    assertEquals(4.7, second.getWeightedCount(), 1e-12);
    assertEquals(11.4, second.getWeightedSum(), 1e-12);
    assertEquals(32.6, second.getWeightedSumSq(), 1e-12);
    assertEquals(2.425531914893617, second.getCpiMean(), 1e-12); // 11.4 / 4.7
    assertEquals(1.026140898024467, second.getCpiStddev(), 1e-12); // sqrt(32.6/4.7 - mean^2)
    assertEquals(0.7127659574468085, second.getCpuUsageMean(), 1e-12); // 3.35 / 4.7
    assertEquals(2, second.getNumSamples());
    assertEquals(7_200_000_000L, second.getPeriodEndUs());
  }

  @Test
  void cpuFloorAndMissingCpiAreFiltered() {
    assertTrue(math.counts(1.0, 0.25));
    assertFalse(math.counts(1.0, 0.2499));
    assertFalse(math.counts(null, 1.0));
    assertFalse(math.counts(Double.NaN, 1.0));
    assertFalse(math.counts(0.0, 1.0));
  }

  @Test
  void usableOnlyWithFiveTasksOfHundredSamples() {
    Map<String, Long> perTask = new LinkedHashMap<>();
    for (int i = 0; i < 4; i++) {
      perTask.put("t" + i, 100L);
    }
    perTask.put("t4", 99L);
    assertEquals(4, math.eligibleTasks(perTask.entrySet()));
    PeriodMoments p = new PeriodMoments();
    p.add(1, 1);
    assertFalse(math.fold(null, "j", "p", 1, p, 5, 4).getUsable());
    perTask.put("t4", 100L);
    assertEquals(5, math.eligibleTasks(perTask.entrySet()));
    assertTrue(math.fold(null, "j", "p", 1, p, 5, 5).getUsable());
  }
}
