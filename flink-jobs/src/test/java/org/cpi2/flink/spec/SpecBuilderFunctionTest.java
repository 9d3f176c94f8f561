package org.cpi2.flink.spec;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.streaming.api.operators.co.KeyedCoProcessOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSpec;
import org.junit.jupiter.api.Test;

class SpecBuilderFunctionTest {
  // The hand-computed folds weigh the previous period 0.9: the per-period option, which wins.
  private static final Cpi2Options OPTIONS =
      Fixtures.options(
          Cpi2Options.SPEC_AGE_WEIGHT,
          "0.9",
          Cpi2Options.SPEC_PERIOD_S,
          "600",
          Cpi2Options.SPEC_MIN_TASKS,
          "2",
          Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK,
          "2");

  private static KeyedTwoInputStreamOperatorTestHarness<String, SpecInput, CpiSpec, CpiSpec>
      harness() throws Exception {
    return ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(
        new SpecBuilderFunction(OPTIONS),
        (SpecInput s) -> s.key,
        (CpiSpec s) -> SpecBuilderFunction.key(s.getJob(), s.getPlatform()),
        Types.STRING);
  }

  private static void add(
      KeyedTwoInputStreamOperatorTestHarness<String, SpecInput, CpiSpec, CpiSpec> h,
      String task,
      long t,
      double cpi,
      double cpu)
      throws Exception {
    // One sample as the combiner before the shuffle sends it alone (SpecInputCombinerTest covers
    // the combining): only samples that count cross.
    if (SpecMath.counts(cpi, cpu, OPTIONS.getDouble(Cpi2Options.MIN_CPU_USAGE))) {
      long periodUs = OPTIONS.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L;
      h.processElement1(
          SpecInput.ofSample(
              SpecBuilderFunction.key("web", "p1"),
              (t / periodUs + 1) * periodUs,
              task,
              t,
              cpi,
              cpu),
          t / 1000);
    }
  }

  @Test
  void foldsPeriodsWithAgeWeightingWhenTheWatermarkPasses() throws Exception {
    var h = harness();
    // Period [0, 10 min): CPI 1, 2, 3 (CPU 0.5) from two tasks; CPI 100 at CPU 0.1 is filtered.
    add(h, "web/0", 1 * MIN, 1, 0.5);
    add(h, "web/1", 2 * MIN, 2, 0.5);
    add(h, "web/0", 3 * MIN, 3, 0.5);
    add(h, "web/1", 4 * MIN, 100, 0.1);
    // An out-of-order sample of the next period arrives before this period closes.
    add(h, "web/0", 11 * MIN, 2, 1.0);
    assertEquals(2, h.numEventTimeTimers());
    h.processBothWatermarks(new Watermark(10 * MIN / 1000 - 2));
    assertTrue(h.extractOutputValues().isEmpty(), "nothing before the period ends");
    h.processBothWatermarks(new Watermark(10 * MIN / 1000));
    List<CpiSpec> out = h.extractOutputValues();
    assertEquals(1, out.size());
    CpiSpec first = out.get(0);
    assertEquals("web", first.getJob());
    assertEquals("p1", first.getPlatform());
    assertEquals(10 * MIN, first.getPeriodEndUs());
    assertEquals(3, first.getNumSamples());
    assertEquals(2, first.getNumTasks());
    assertEquals(2.0, first.getCpiMean(), 1e-12);
    assertEquals(Math.sqrt(14.0 / 3 - 4), first.getCpiStddev(), 1e-12);
    assertEquals(1, first.getEligibleTasks(), "web/0 has 2 samples, web/1 only 1 counted");
    assertFalse(first.getUsable());

    // Period [10, 20 min): CPI 2 (already in) and 4, both CPU 1.0. Weighted moments as in
    // SpecMathTest: mean 11.4 / 4.7, stddev sqrt(32.6/4.7 - mean^2).
    add(h, "web/1", 12 * MIN, 4, 1.0);
    add(h, "web/0", 5 * MIN, 9, 1.0); // late: its period was published
    h.processBothWatermarks(new Watermark(20 * MIN / 1000));
    CpiSpec second = h.extractOutputValues().get(1);
    assertEquals(2.425531914893617, second.getCpiMean(), 1e-12);
    assertEquals(1.026140898024467, second.getCpiStddev(), 1e-12);
    assertEquals(2, second.getNumSamples());
    assertEquals(2, second.getEligibleTasks());
    assertTrue(second.getUsable());
    h.close();
  }

  /** One sample of task web/HOST on host hHOST at minute {@code m}, in its 1-minute bucket. */
  private static void addOnHost(
      KeyedTwoInputStreamOperatorTestHarness<String, SpecInput, CpiSpec, CpiSpec> h,
      int host,
      double m,
      double cpi)
      throws Exception {
    long t = (long) (m * MIN) + host * 1_000_000L;
    long periodUs = OPTIONS.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L;
    h.processElement1(
        SpecInput.ofSample(
            SpecBuilderFunction.key("web", "p1"),
            (t / periodUs + 1) * periodUs,
            (t / MIN + 1) * MIN,
            "h" + host,
            "web/" + host,
            t,
            cpi,
            1.0),
        t / 1000);
  }

  @Test
  void aJobWideShiftReBaselinesTheSpecFromTheBucketAfterNext() throws Exception {
    var h = harness();
    // Ten hosts, a task each, CPI about 1.0 for the first period: a usable spec.
    for (int m = 0; m < 9; m++) {
      for (int i = 0; i < 10; i++) {
        addOnHost(h, i, m, 1.0 + 0.1 * ((m + i) % 3 - 1));
      }
    }
    h.processBothWatermarks(new Watermark(10 * MIN / 1000));
    CpiSpec learnt = h.extractOutputValues().get(0);
    assertTrue(learnt.getUsable());
    assertEquals(1.0, learnt.getCpiMean(), 0.01);
    assertEquals(1.0, learnt.getShiftRatio(), 0);
    // Minute 11 as before; minute 12 on 2 of the hosts at 1.5: interference, no shift.
    for (int i = 0; i < 10; i++) {
      addOnHost(h, i, 11, 1.0 + 0.1 * (i % 3 - 1));
      addOnHost(h, i, 12, i < 2 ? 1.5 : 1.0);
    }
    h.processBothWatermarks(new Watermark(13 * MIN / 1000 - 1));
    assertEquals(1, h.extractOutputValues().size(), "two hosts of ten: no shift");
    // Minute 13: the release reached every host, CPI 1.5.
    for (int i = 0; i < 10; i++) {
      addOnHost(h, i, 13, 1.5 + 0.02 * (i % 3 - 1));
    }
    h.processBothWatermarks(new Watermark(14 * MIN / 1000 - 2));
    assertEquals(1, h.extractOutputValues().size(), "the bucket is held to its end");
    h.processBothWatermarks(new Watermark(14 * MIN / 1000 - 1));
    List<CpiSpec> out = h.extractOutputValues();
    assertEquals(2, out.size());
    CpiSpec shifted = out.get(1);
    assertEquals(15 * MIN, shifted.getPeriodEndUs(), "in force from the end of the next bucket");
    assertEquals(1.5, shifted.getShiftRatio(), 1e-9, "the median host's level over the mean");
    assertEquals(1.0, shifted.getShiftShare(), 0);
    assertEquals(1.5 * learnt.getCpiMean(), shifted.getCpiMean(), 1e-9);
    assertEquals(1.5 * learnt.getCpiStddev(), shifted.getCpiStddev(), 1e-9);
    // The open period so far (minutes 11, 12) was rescaled with the history: the next fold sees
    // the job at its new level, not a mix of the old and the new.
    for (int m = 14; m < 19; m++) {
      for (int i = 0; i < 10; i++) {
        addOnHost(h, i, m, 1.5);
      }
    }
    h.processBothWatermarks(new Watermark(20 * MIN / 1000));
    CpiSpec next = h.extractOutputValues().get(2);
    assertEquals(20 * MIN, next.getPeriodEndUs());
    assertEquals(1.0, next.getShiftRatio(), 0, "learnt from the data again");
    assertEquals(1.5, next.getCpiMean(), 0.01);
    h.close();
  }

  @Test
  void specsSurviveASnapshotAndRestore() throws Exception {
    var h = harness();
    add(h, "web/0", 1 * MIN, 1, 0.5);
    add(h, "web/1", 2 * MIN, 3, 0.5);
    h.processBothWatermarks(new Watermark(10 * MIN / 1000));
    add(h, "web/0", 12 * MIN, 2, 0.5); // in flight: the open period
    OperatorSubtaskState snapshot = h.snapshot(1, 1);
    h.close();

    // A new operator instance, as after a restart: state comes only from the snapshot.
    var restored =
        new KeyedTwoInputStreamOperatorTestHarness<>(
            new KeyedCoProcessOperator<>(new SpecBuilderFunction(OPTIONS)),
            (SpecInput s) -> s.key,
            (CpiSpec s) -> SpecBuilderFunction.key(s.getJob(), s.getPlatform()),
            Types.STRING);
    restored.initializeState(snapshot);
    restored.open();
    restored.processBothWatermarks(new Watermark(20 * MIN / 1000));
    CpiSpec spec = restored.extractOutputValues().get(0);
    // Restored moments 0.9 * (2, 4, 10) plus the in-flight sample (1, 2, 4): mean 5.6 / 2.8.
    assertEquals(2.8, spec.getWeightedCount(), 1e-12);
    assertEquals(2.0, spec.getCpiMean(), 1e-12);
    assertEquals(20 * MIN, spec.getPeriodEndUs());
    restored.close();
  }

  @Test
  void aFreshDeploymentIsSeededFromTheSpecTopic() throws Exception {
    var h = harness();
    CpiSpec seed =
        CpiSpec.newBuilder()
            .setJob("web")
            .setPlatform("p1")
            .setPeriodEndUs(10 * MIN)
            .setNumSamples(10)
            .setNumTasks(5)
            .setEligibleTasks(5)
            .setCpuUsageMean(0.5)
            .setCpiMean(2.0)
            .setCpiStddev(0.0)
            .setUsable(true)
            .setWeightedCount(10)
            .setWeightedSum(20)
            .setWeightedSumSq(40)
            .setWeightedCpuSum(5)
            .build();
    h.processElement2(seed, 0);
    h.processElement2(seed, 0); // its own spec read back: not newer, ignored
    assertTrue(h.extractOutputValues().isEmpty(), "published once the data reaches its time");
    add(h, "web/0", 12 * MIN, 4, 1.0);
    assertEquals(
        List.of(seed), h.extractOutputValues(), "a sample after the seed's period: it is in force");
    h.processBothWatermarks(new Watermark(20 * MIN / 1000));
    CpiSpec next = h.extractOutputValues().get(1);
    assertEquals(10.0, next.getWeightedCount(), 1e-12); // 0.9 * 10 + 1
    assertEquals(2.2, next.getCpiMean(), 1e-12); // (0.9 * 20 + 4) / 10
    assertTrue(next.getUsable(), "the seed's eligibility holds until history catches up");
    h.close();
  }

  private static CpiSpec seed(long periodEnd) {
    return CpiSpec.newBuilder()
        .setJob("web")
        .setPlatform("p1")
        .setPeriodEndUs(periodEnd)
        .setNumSamples(10)
        .setNumTasks(5)
        .setEligibleTasks(5)
        .setCpuUsageMean(0.5)
        .setCpiMean(9.0)
        .setCpiStddev(0.0)
        .setUsable(true)
        .setWeightedCount(10)
        .setWeightedSum(90)
        .setWeightedSumSq(810)
        .setWeightedCpuSum(5)
        .build();
  }

  @Test
  void aSeedNewerThanTheDataGivesWayToSpecsBuiltFromTheData() throws Exception {
    var h = harness();
    h.processElement2(seed(60 * MIN), 0); // from a deployment whose clock was an hour ahead
    add(h, "web/0", 1 * MIN, 1, 0.5); // a sample of a period the seed covers: the seed goes
    add(h, "web/1", 2 * MIN, 3, 0.5);
    h.processBothWatermarks(new Watermark(10 * MIN / 1000));
    List<CpiSpec> out = h.extractOutputValues();
    assertEquals(1, out.size(), "the seed was never published: the detector never judged by it");
    CpiSpec built = out.get(0);
    assertEquals(10 * MIN, built.getPeriodEndUs());
    assertEquals(
        2.0, built.getCpiMean(), 1e-12, "from the two samples alone, none of the seed's CPI 9");
    // Later samples of periods before the seed's end are no longer late either.
    add(h, "web/0", 12 * MIN, 5, 0.5);
    h.processBothWatermarks(new Watermark(20 * MIN / 1000));
    assertEquals(20 * MIN, h.extractOutputValues().get(1).getPeriodEndUs());
    h.close();
  }

  @Test
  void aSeedIsNotAdoptedOverSamplesOfItsPeriodsAndAFoldedSpecKeepsLateSamplesOut()
      throws Exception {
    var h = harness();
    add(h, "web/0", 1 * MIN, 1, 0.5); // waiting to be folded at 10 min
    h.processElement2(seed(60 * MIN), 0);
    assertTrue(h.extractOutputValues().isEmpty(), "the data is older than the seed: not adopted");
    h.processBothWatermarks(new Watermark(10 * MIN / 1000));
    assertEquals(1.0, h.extractOutputValues().get(0).getCpiMean(), 1e-12);
    // A seed newer than a spec built from data is adopted, published by a sample after it, folded
    // on; older samples are late from then on.
    h.processElement2(seed(20 * MIN), 0);
    add(h, "web/0", 21 * MIN, 3, 0.5);
    h.processBothWatermarks(new Watermark(30 * MIN / 1000));
    List<CpiSpec> out = h.extractOutputValues();
    assertEquals(
        List.of(10 * MIN, 20 * MIN, 30 * MIN), out.stream().map(CpiSpec::getPeriodEndUs).toList());
    assertEquals(9.0, out.get(1).getCpiMean(), 1e-12, "the seed");
    add(h, "web/1", 15 * MIN, 7, 0.5); // before the last fold: late, the spec stays
    h.processBothWatermarks(new Watermark(40 * MIN / 1000));
    assertEquals(3, h.extractOutputValues().size(), "no new spec from a late sample");
    h.close();
  }
}
