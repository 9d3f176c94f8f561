package org.cpi2.flink.detect;

import static org.cpi2.flink.Fixtures.MIN;
import static org.cpi2.flink.Fixtures.sample;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedBroadcastOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class AnomalyDetectorFunctionTest {
  private static CpiSpec spec(double mean, double sd, long periodEnd) {
    return CpiSpec.newBuilder()
        .setJob("web")
        .setPlatform("p1")
        .setPeriodEndUs(periodEnd)
        .setNumSamples(1000)
        .setNumTasks(10)
        .setEligibleTasks(10)
        .setCpuUsageMean(0.8)
        .setCpiMean(mean)
        .setCpiStddev(sd)
        .setUsable(true)
        .setWeightedCount(1000)
        .setWeightedSum(1000 * mean)
        .setWeightedSumSq(0)
        .setWeightedCpuSum(800)
        .build();
  }

  private static KeyedBroadcastOperatorTestHarness<String, HostEvent, CpiSpec, HostEvent> harness()
      throws Exception {
    return ProcessFunctionTestHarnesses.forKeyedBroadcastProcessFunction(
        new AnomalyDetectorFunction(Cpi2Options.defaults()),
        HostEvent::host,
        Types.STRING,
        AnomalyDetectorFunction.SPECS);
  }

  private static void add(
      KeyedBroadcastOperatorTestHarness<String, HostEvent, CpiSpec, HostEvent> h,
      long t,
      double cpi,
      double cpu)
      throws Exception {
    h.processElement(
        HostEvent.of(sample("h1", "web/0", TaskClass.LATENCY_SENSITIVE, t, cpi, cpu)), t / 1000);
  }

  /** The scored samples emitted so far. */
  private static List<ScoredSample> scored(
      KeyedBroadcastOperatorTestHarness<String, HostEvent, CpiSpec, HostEvent> h) {
    return h.extractOutputValues().stream().map(e -> e.scored).toList();
  }

  /** The watermark on both inputs (samples and specs), as the job's one source sends them. */
  private static void watermark(
      KeyedBroadcastOperatorTestHarness<String, HostEvent, CpiSpec, HostEvent> h, long tUs)
      throws Exception {
    h.processWatermark(tUs / 1000);
    h.processBroadcastWatermark(tUs / 1000);
  }

  @Test
  void threeOutliersInFiveMinutesOutOfOrderMakeAnAnomaly() throws Exception {
    var h = harness();
    h.processBroadcastElement(spec(1.0, 0.25, 0), 0); // threshold 1.5, in force for the hour from 0
    // The stream has reached minute 3: the hour's specs are in, and any re-baseline (JobShift)
    // in force up to minute 4, found in a bucket the watermark has passed.
    watermark(h, 3 * MIN);
    add(h, 4 * MIN, 2.0, 0.8); // outlier
    add(h, 1 * MIN, 2.0, 0.8); // outlier, arrives out of order
    add(h, 2 * MIN, 3.0, 0.1); // high CPI but idle: not an outlier (CPU < 0.25)
    add(h, 3 * MIN, 1.4, 0.8); // below the threshold
    List<ScoredSample> out = scored(h);
    assertEquals(
        List.of(4 * MIN, 1 * MIN, 2 * MIN, 3 * MIN),
        out.stream().map(s -> s.timeUs).toList(),
        "the spec of their time is final: judged on arrival, without waiting for the watermark");
    assertEquals(List.of(true, true, false, false), out.stream().map(s -> s.outlier).toList());
    assertEquals(1.5, out.get(0).spec.threshold(), 1e-12);
    assertFalse(out.get(1).anomalous, "two outliers only");
    // A third outlier within five minutes of the first arrives, older than the newest.
    add(h, 3 * MIN + 30_000_000L, 1.6, 0.8);
    ScoredSample third = scored(h).get(4);
    assertTrue(third.outlier);
    assertTrue(third.anomalous, "1, 3.5 and 4 minutes: three outliers within five minutes");
    // Behind the watermark, a late sample is judged at once too.
    watermark(h, 10 * MIN);
    add(h, 2 * MIN + 30_000_000L, 1.6, 0.8);
    assertTrue(scored(h).get(5).anomalous, "late: placed by its own time among the outliers");
    h.close();
  }

  @Test
  void aSampleWhoseSpecMayStillChangeWaitsForTheWatermark() throws Exception {
    var h = harness();
    h.processBroadcastElement(
        spec(1.0, 0.25, 0), 0); // the hour from 0; the next spec applies from 60 min
    watermark(h, 59 * MIN);
    add(h, 61 * MIN, 2.0, 0.8); // outlier for the old spec, not for the one the next period brings
    add(h, 62 * MIN, 2.0, 0.8); // waits behind the first: judged in order
    assertTrue(scored(h).isEmpty(), "the watermark has not passed minute 60: its spec may come");
    h.processBroadcastElement(spec(3.0, 0.25, 60 * MIN), 0); // threshold 3.5
    watermark(h, 62 * MIN);
    List<ScoredSample> out = scored(h);
    assertEquals(List.of(61 * MIN, 62 * MIN), out.stream().map(s -> s.timeUs).toList());
    assertEquals(List.of(false, false), out.stream().map(s -> s.outlier).toList());
    assertEquals(3.5, out.get(0).spec.threshold(), 1e-12);
    add(h, 63 * MIN, 4.0, 0.8); // the new spec is final for it: at once
    assertTrue(scored(h).get(2).outlier);
    h.close();
  }

  @Test
  void waitingSamplesAreJudgedWhenTheWatermarkPassesTheirSpecPeriodsStartAndTheTaskCatchesUp()
      throws Exception {
    var h = harness();
    h.processBroadcastElement(spec(1.0, 0.25, 0), 0);
    watermark(h, 59 * MIN);
    add(h, 61 * MIN, 2.0, 0.8); // waits: the spec of minute 60 may still come
    add(h, 61 * MIN + 30_000_000L, 2.0, 0.8); // waits too, behind it
    assertTrue(scored(h).isEmpty());
    h.processBroadcastElement(spec(1.0, 0.25, 60 * MIN), 0); // threshold 1.5
    watermark(h, 60 * MIN - 1); // where the spec of minute 60 is final: one timer judges both
    assertEquals(
        List.of(61 * MIN, 61 * MIN + 30_000_000L),
        scored(h).stream().map(s -> s.timeUs).toList(),
        "judged before the watermark reaches their own time, oldest first");
    watermark(h, 62 * MIN); // the stream has reached minute 62: its re-baselines are in too
    add(h, 63 * MIN, 2.0, 0.8); // nothing waits any more: at once
    List<ScoredSample> out = scored(h);
    assertEquals(
        List.of(61 * MIN, 61 * MIN + 30_000_000L, 63 * MIN),
        out.stream().map(s -> s.timeUs).toList());
    assertEquals(
        List.of(false, false, true),
        out.stream().map(s -> s.anomalous).toList(),
        "three outliers by minute 63");
    h.processWatermark(63 * MIN / 1000);
    assertEquals(3, scored(h).size(), "the timers of judged samples emit nothing");
    h.close();
  }

  @Test
  void aJobWideShiftIsNoAnomalyButTheOneItWouldHaveBeenIsReportedOnce() throws Exception {
    var h = harness();
    h.processBroadcastElement(spec(1.0, 0.25, 0), 0); // threshold 1.5
    watermark(h, 1 * MIN);
    add(h, 1 * MIN, 2.0, 0.8); // outlier
    add(h, 2 * MIN, 2.0, 0.8); // outlier
    // The job as a whole moved: its spec re-baselined x1.8 (threshold 2.7), in force from 3 min,
    // found in the bucket that ended at 2 min.
    h.processBroadcastElement(
        CpiSpec.newBuilder(spec(1.8, 0.45, 3 * MIN)).setShiftRatio(1.8).setShiftShare(0.9).build(),
        0);
    add(h, 3 * MIN, 2.0, 0.8); // waits: the watermark has not passed 2 min
    assertEquals(2, scored(h).size());
    watermark(h, 3 * MIN);
    add(h, 4 * MIN, 2.1, 0.8);
    List<ScoredSample> out = scored(h);
    assertEquals(List.of(true, true, false, false), out.stream().map(x -> x.outlier).toList());
    assertEquals(List.of(false, false, true, true), out.stream().map(x -> x.shifted).toList());
    assertEquals(
        List.of(false, false, true, false),
        out.stream().map(x -> x.anomalous).toList(),
        "the third would-be outlier makes the shift's anomaly, once");
    assertEquals(2.7, out.get(2).spec.threshold(), 1e-12);
    watermark(h, 4 * MIN);
    add(h, 5 * MIN, 3.0, 0.8); // an outlier against the new baseline: judged as any
    assertTrue(scored(h).get(4).outlier);
    assertFalse(scored(h).get(4).shifted);
    h.close();
  }

  @Test
  void outliersMoreThanFiveMinutesApartAreNotAnAnomaly() throws Exception {
    var h = harness();
    h.processBroadcastElement(spec(1.0, 0.25, 0), 0);
    for (long m : new long[] {1, 4, 7, 10}) {
      add(h, m * MIN, 2.0, 0.8);
    }
    h.processWatermark(Long.MAX_VALUE);
    h.processBroadcastWatermark(Long.MAX_VALUE);
    assertTrue(scored(h).stream().allMatch(s -> s.outlier && !s.anomalous));
    h.close();
  }

  @Test
  void eachSampleIsJudgedAgainstTheSpecOfItsTime() throws Exception {
    var h = harness();
    h.processBroadcastElement(spec(3.0, 0.25, 20 * MIN), 0); // newer spec arrives first
    h.processBroadcastElement(spec(1.0, 0.25, 10 * MIN), 0);
    add(h, 15 * MIN, 2.0, 0.8); // period of the 10-minute spec: threshold 1.5
    add(h, 21 * MIN, 2.0, 0.8); // 20-minute spec: threshold 3.5
    add(h, 5 * MIN, 2.0, 0.8); // before any spec
    h.processWatermark(Long.MAX_VALUE);
    h.processBroadcastWatermark(Long.MAX_VALUE);
    List<ScoredSample> out = scored(h);
    assertEquals(List.of(false, true, true), out.stream().map(s -> s.spec != null).toList());
    assertEquals(List.of(false, true, false), out.stream().map(s -> s.outlier).toList());
    assertEquals(3.5, out.get(2).spec.threshold(), 1e-12);
    h.close();
  }

  @Test
  void withoutASpecNothingIsJudged() throws Exception {
    var h = harness();
    add(h, 1 * MIN, 50.0, 0.8);
    h.processWatermark(Long.MAX_VALUE);
    h.processBroadcastWatermark(Long.MAX_VALUE);
    ScoredSample s = scored(h).get(0);
    assertNull(s.spec);
    assertFalse(s.outlier);
    h.close();
  }

  @Test
  void theTasksOfOneHostKeepTheirOwnOutliersAndActionsPassThrough() throws Exception {
    var h = harness();
    h.processBroadcastElement(spec(1.0, 0.25, 0), 0);
    watermark(h, 2 * MIN);
    for (long m = 1; m <= 2; m++) {
      h.processElement(
          HostEvent.of(sample("h1", "web/0", TaskClass.LATENCY_SENSITIVE, m * MIN, 2.0, 0.8)),
          m * MIN / 1000);
      h.processElement(
          HostEvent.of(sample("h1", "web/1", TaskClass.LATENCY_SENSITIVE, m * MIN, 2.0, 0.8)),
          m * MIN / 1000);
    }
    var action = Fixtures.applied("a1", "h1", "video/7", "web/0", 2 * MIN, 7 * MIN);
    h.processElement(HostEvent.of(action), 2 * MIN / 1000);
    h.processElement(
        HostEvent.of(sample("h1", "web/1", TaskClass.LATENCY_SENSITIVE, 3 * MIN, 2.0, 0.8)),
        3 * MIN / 1000);
    List<HostEvent> out = h.extractOutputValues();
    assertEquals(6, out.size());
    assertEquals(action, out.get(4).action, "the action, unchanged, in its place");
    List<ScoredSample> s = scored(h).stream().filter(x -> x != null).toList();
    assertTrue(s.stream().allMatch(x -> x.outlier));
    assertEquals(
        List.of(false, false, false, false, true),
        s.stream().map(x -> x.anomalous).toList(),
        "web/1's third outlier; web/0 has two, web/1's do not count for it");
    h.processElement(
        HostEvent.of(sample("h1", "web/0", TaskClass.LATENCY_SENSITIVE, 3 * MIN, 2.0, 0.8)),
        3 * MIN / 1000);
    assertTrue(scored(h).get(6).anomalous);
    h.close();
  }

  @Test
  void aTasksOutliersAreForgottenATaskTtlAfterTheNewest() throws Exception {
    var h =
        ProcessFunctionTestHarnesses.forKeyedBroadcastProcessFunction(
            new AnomalyDetectorFunction(Fixtures.options(Cpi2Options.TASK_TTL_S, "600")),
            HostEvent::host,
            Types.STRING,
            AnomalyDetectorFunction.SPECS);
    h.processBroadcastElement(spec(1.0, 0.25, 0), 0);
    watermark(h, 0);
    add(h, 1 * MIN, 2.0, 0.8);
    add(h, 2 * MIN, 2.0, 0.8);
    watermark(h, 11 * MIN);
    add(h, 3 * MIN, 2.0, 0.8); // late, but within the TTL: completes the anomaly
    assertTrue(scored(h).get(2).anomalous);
    watermark(h, 15 * MIN); // the boundary after 3 min + 10 min TTL: forgotten
    add(h, 4 * MIN, 2.0, 0.8);
    assertFalse(scored(h).get(3).anomalous, "the earlier outliers were forgotten");
    h.close();
  }
}
