package org.cpi2.flink.spec;

import static org.cpi2.flink.Fixtures.MIN;
import static org.cpi2.flink.Fixtures.sample;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class SpecInputCombinerTest {
  private static final long PERIOD = 10 * MIN;

  private static OneInputStreamOperatorTestHarness<CpiSample, SpecInput> harness(int maxTasks)
      throws Exception {
    var h = new OneInputStreamOperatorTestHarness<>(new SpecInputCombiner(0.25, PERIOD, maxTasks));
    h.open();
    return h;
  }

  private static void add(
      OneInputStreamOperatorTestHarness<CpiSample, SpecInput> h,
      String task,
      long t,
      Double cpi,
      double cpu)
      throws Exception {
    h.processElement(sample("h1", task, TaskClass.BATCH, t, cpi, cpu), t / 1000);
  }

  private static Map<String, Long> samplesPerTask(SpecInput in) {
    Map<String, Long> m = new HashMap<>();
    for (int i = 0; i < in.tasks.length; i++) {
      m.put(in.tasks[i], in.taskSamples[i]);
    }
    return m;
  }

  @Test
  void combinesAPeriodsSamplesThatCountAndSendsThemBeforeTheWatermarkThatClosesIt()
      throws Exception {
    var h = harness(1000);
    add(h, "web/0", 1 * MIN, 1.0, 0.5);
    add(h, "web/1", 2 * MIN, 2.0, 0.5);
    add(h, "web/0", 3 * MIN, 3.0, 1.0);
    add(h, "web/0", 4 * MIN, 9.0, 0.1); // below the CPU floor
    add(h, "web/0", 5 * MIN, null, 0.5); // no CPI
    add(h, "web/0", 6 * MIN, Double.NaN, 0.5);
    add(h, "web/0", 11 * MIN, 4.0, 0.5); // the next period
    h.processWatermark(PERIOD / 1000 - 2);
    assertTrue(h.extractOutputValues().isEmpty(), "held while no period closes");
    h.processWatermark(PERIOD / 1000 - 1); // the spec builder folds [0, 10 min) here
    List<Object> out = new ArrayList<>(h.getOutput());
    assertEquals(4, out.size(), "two inputs, then both watermarks: " + out);
    assertInstanceOf(Watermark.class, out.get(0));
    SpecInput first = (SpecInput) ((StreamRecord<?>) out.get(1)).getValue();
    SpecInput next = (SpecInput) ((StreamRecord<?>) out.get(2)).getValue();
    assertEquals(
        new Watermark(PERIOD / 1000 - 1),
        out.get(3),
        "the inputs go before the watermark that closes their period");
    assertEquals(SpecBuilderFunction.key("web", "p1"), first.key);
    assertEquals(PERIOD, first.periodEndUs);
    assertEquals(3, first.count);
    assertEquals(6.0, first.sum, 0);
    assertEquals(14.0, first.sumSq, 0);
    assertEquals(2.0, first.cpuSum, 0);
    assertEquals(Map.of("web/0", 2L, "web/1", 1L), samplesPerTask(first));
    int web0 = first.tasks[0].equals("web/0") ? 0 : 1;
    assertEquals(3 * MIN, first.taskLastSeenUs[web0]);
    assertEquals(2 * PERIOD, next.periodEndUs);
    assertEquals(1, next.count);
    h.close();
  }

  @Test
  void sendsWhatItHoldsAtABarrierWhenIdleAtTheEndAndWhenFull() throws Exception {
    var h = harness(3);
    add(h, "web/0", 1 * MIN, 1.0, 0.5);
    h.prepareSnapshotPreBarrier(1);
    assertEquals(
        1, h.extractOutputValues().size(), "before the barrier: the combiner has no state");
    assertTrue(h.snapshot(1, 1).getManagedOperatorState().isEmpty());
    add(h, "web/0", 2 * MIN, 1.0, 0.5);
    h.processWatermarkStatus(WatermarkStatus.IDLE);
    assertEquals(2, h.extractOutputValues().size(), "before going idle");
    add(h, "web/0", 3 * MIN, 1.0, 0.5);
    add(h, "web/1", 3 * MIN, 1.0, 0.5);
    assertEquals(2, h.extractOutputValues().size());
    add(h, "web/2", 3 * MIN, 1.0, 0.5); // the third task entry
    assertEquals(3, h.extractOutputValues().size(), "full");
    add(h, "db/0", 4 * MIN, 1.0, 0.5);
    h.endInput();
    List<SpecInput> out = h.extractOutputValues();
    assertEquals(4, out.size(), "at the end of input");
    assertArrayEquals(new String[] {"db/0"}, out.get(3).tasks);
    assertEquals(SpecBuilderFunction.key("db", "p1"), out.get(3).key);
    h.close();
  }

  /** Specs built from combined inputs equal those built sample by sample. */
  @Test
  void combiningChangesNoSpec() throws Exception {
    Cpi2Options options =
        Fixtures.options(
            Cpi2Options.SPEC_PERIOD_S,
            "600",
            Cpi2Options.SPEC_MIN_TASKS,
            "2",
            Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK,
            "20");
    Random r = new Random(5);
    var combiner = harness(50);
    var oneByOne = specBuilder(options);
    var combined = specBuilder(options);
    for (long t = 0; t < 6 * PERIOD; t += 10_000_000L) {
      for (int task = 0; task < 8; task++) {
        double cpi = 1 + r.nextDouble();
        double cpu = r.nextDouble();
        if (cpu >= 0.25) {
          oneByOne.processElement1(
              SpecInput.ofSample(
                  SpecBuilderFunction.key("web", "p1"),
                  (t / PERIOD + 1) * PERIOD,
                  "web/" + task,
                  t,
                  cpi,
                  cpu),
              t / 1000);
        }
        combiner.processElement(
            sample("h1", "web/" + task, TaskClass.BATCH, t, cpi, cpu), t / 1000);
      }
      if (t % (3 * MIN) == 0) {
        combiner.processWatermark(t / 1000);
        for (SpecInput in : combiner.extractOutputValues()) {
          combined.processElement1(in, 0);
        }
        combiner.getOutput().clear();
        combined.processBothWatermarks(new Watermark(t / 1000));
        oneByOne.processBothWatermarks(new Watermark(t / 1000));
      }
    }
    List<CpiSpec> expected = oneByOne.extractOutputValues();
    List<CpiSpec> actual = combined.extractOutputValues();
    assertEquals(5, expected.size());
    assertEquals(expected.size(), actual.size());
    for (int i = 0; i < expected.size(); i++) {
      assertEquals(expected.get(i).getNumSamples(), actual.get(i).getNumSamples());
      assertEquals(expected.get(i).getNumTasks(), actual.get(i).getNumTasks());
      assertEquals(expected.get(i).getEligibleTasks(), actual.get(i).getEligibleTasks());
      assertEquals(expected.get(i).getUsable(), actual.get(i).getUsable());
      assertEquals(expected.get(i).getCpiMean(), actual.get(i).getCpiMean(), 1e-12);
      assertEquals(expected.get(i).getCpiStddev(), actual.get(i).getCpiStddev(), 1e-12);
      assertEquals(expected.get(i).getCpuUsageMean(), actual.get(i).getCpuUsageMean(), 1e-12);
    }
    assertTrue(actual.get(4).getUsable(), "eligible once every task has 20 samples");
  }

  private static KeyedTwoInputStreamOperatorTestHarness<String, SpecInput, CpiSpec, CpiSpec>
      specBuilder(Cpi2Options o) throws Exception {
    return ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(
        new SpecBuilderFunction(o),
        (SpecInput s) -> s.key,
        (CpiSpec s) -> SpecBuilderFunction.key(s.getJob(), s.getPlatform()),
        Types.STRING);
  }
}
