package org.cpi2.flink.records;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.util.Arrays;
import org.cpi2.schema.CpiSpec;
import org.junit.jupiter.api.Test;

class SpecHistoryTest {
  private static CpiSpec spec(long end) {
    return CpiSpec.newBuilder()
        .setJob("web")
        .setPlatform("p1")
        .setPeriodEndUs(end)
        .setNumSamples(1)
        .setNumTasks(1)
        .setEligibleTasks(1)
        .setCpuUsageMean(1)
        .setCpiMean(end)
        .setCpiStddev(0)
        .setUsable(true)
        .setWeightedCount(1)
        .setWeightedSum(end)
        .setWeightedSumSq(0)
        .setWeightedCpuSum(1)
        .build();
  }

  private static long[] ends(SpecHistory h) {
    return Arrays.stream(h.specs).mapToLong(CpiSpec::getPeriodEndUs).toArray();
  }

  @Test
  void keepsTheLastFewInPeriodOrderAndFindsTheOneInForce() {
    SpecHistory h = new SpecHistory();
    for (long end : new long[] {10, 30, 20, 40, 50, 30}) {
      h = h.with(spec(end));
    }
    assertEquals("[20, 30, 40, 50]", Arrays.toString(ends(h)));
    assertNull(h.at(19));
    assertEquals(30, h.at(35).getPeriodEndUs());
    assertEquals(50, h.at(1000).getPeriodEndUs());
    assertEquals(20, h.at(20).getPeriodEndUs());
  }
}
