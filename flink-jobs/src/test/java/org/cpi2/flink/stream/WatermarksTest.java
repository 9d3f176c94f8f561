package org.cpi2.flink.stream;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.apache.flink.streaming.util.KeyedTwoInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.spec.SpecBuilderFunction;
import org.cpi2.flink.spec.SpecInput;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.EnforcementAction;
import org.junit.jupiter.api.Test;

class WatermarksTest {
  /** What a watermark generator told its output. */
  private static final class Recorded implements WatermarkOutput {
    final List<Long> watermarks = new ArrayList<>();
    boolean idle;

    @Override
    public void emitWatermark(org.apache.flink.api.common.eventtime.Watermark w) {
      watermarks.add(w.getTimestamp());
      idle = false;
    }

    @Override
    public void markIdle() {
      idle = true;
    }

    @Override
    public void markActive() {
      idle = false;
    }
  }

  private static <T> Recorded drive(WatermarkStrategy<T> strategy, T event, long timestamp) {
    WatermarkGenerator<T> g = strategy.createWatermarkGenerator(null);
    Recorded out = new Recorded();
    g.onPeriodicEmit(out);
    g.onEvent(event, timestamp, out);
    g.onPeriodicEmit(out);
    return out;
  }

  @Test
  void actionsAndSeedsAreIdleAndEmitNoWatermark() {
    EnforcementAction action = new EnforcementAction();
    action.setAtUs(5 * MIN);
    Recorded a = drive(Watermarks.actions(), action, 5 * MIN / 1000);
    assertEquals(List.of(), a.watermarks);
    assertTrue(a.idle);
    CpiSpec seed = new CpiSpec();
    seed.setPeriodEndUs(10 * MIN);
    Recorded s = drive(Watermarks.specs(), seed, 10 * MIN / 1000);
    assertEquals(List.of(), s.watermarks);
    assertTrue(s.idle);
  }

  /**
   * The lab on a quiet machine: the job starts, the samples' partitions go idle before the
   * collector's first window, the seeds' stream says what {@link Watermarks#specs()} says. A
   * maximum watermark there became the spec builder's (and the detector's, through the actions), so
   * no spec period and no analysis ever closed once the samples came: no spec, no incident.
   */
  @Test
  void samplesIdleAtTheStartStillCloseSpecPeriodsOnceTheyCome() throws Exception {
    Cpi2Options options =
        Fixtures.options(Cpi2Options.SPEC_PERIOD_S, "600", Cpi2Options.SPEC_MIN_TASKS, "1");
    KeyedTwoInputStreamOperatorTestHarness<String, SpecInput, CpiSpec, CpiSpec> h =
        ProcessFunctionTestHarnesses.forKeyedCoProcessFunction(
            new SpecBuilderFunction(options),
            (SpecInput in) -> in.key,
            (CpiSpec s) -> SpecBuilderFunction.key(s.getJob(), s.getPlatform()),
            Types.STRING);
    h.processWatermarkStatus1(WatermarkStatus.IDLE); // no sample yet: the partitions go idle
    CpiSpec other = new CpiSpec();
    other.setPeriodEndUs(MIN);
    Recorded seeds = drive(Watermarks.specs(), other, MIN / 1000);
    for (long w : seeds.watermarks) {
      h.processWatermark2(new Watermark(w));
    }
    if (seeds.idle) {
      h.processWatermarkStatus2(WatermarkStatus.IDLE);
    }
    h.processWatermarkStatus1(WatermarkStatus.ACTIVE); // the collector's samples come
    String key = SpecBuilderFunction.key("lab-victim", "p1");
    for (int i = 1; i <= 3; i++) {
      h.processElement1(
          SpecInput.ofSample(key, 10 * MIN, "victim-" + i, i * MIN, 0.1, 0.1), i * MIN / 1000);
    }
    h.processWatermark1(new Watermark(11 * MIN / 1000));
    List<CpiSpec> specs = h.extractOutputValues();
    assertEquals(1, specs.size(), "the period [0, 10 min) closes with the samples' watermark");
    assertEquals(10 * MIN, specs.get(0).getPeriodEndUs());
    assertEquals(3, specs.get(0).getNumSamples());
    h.close();
  }
}
