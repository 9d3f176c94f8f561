package org.cpi2.flink.functions;

import java.time.Duration;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.EnforcementAction;

/**
 * Event-time policy. Samples carry their window start as event time; watermarks trail the newest
 * sample by the bounded out-of-orderness ({@code time.out-of-orderness-s}, 30 s by default), and a
 * source split that sends nothing for {@code time.source-idleness-s} stops holding time back.
 * Samples later than that bound are still processed by the detector and the correlator (they are
 * placed by their own time) but may miss a spec period or an analysis that already ran.
 *
 * <p>Actions and spec seeds never hold event time back (their watermark is the maximum): they
 * update state whenever they arrive, and the samples alone drive the clocks.
 */
public final class Watermarks {
  private Watermarks() {}

  public static WatermarkStrategy<CpiSample> samples(long outOfOrdernessS, long idlenessS) {
    return WatermarkStrategy.<CpiSample>forBoundedOutOfOrderness(Duration.ofSeconds(outOfOrdernessS))
        .withTimestampAssigner((s, previous) -> s.getWindowStartUs() / 1000)
        .withIdleness(Duration.ofSeconds(idlenessS));
  }

  public static WatermarkStrategy<EnforcementAction> actions() {
    return WatermarkStrategy.<EnforcementAction>forGenerator(ctx -> new NoHoldback<>())
        .withTimestampAssigner((a, previous) -> a.getAtUs() / 1000);
  }

  public static WatermarkStrategy<CpiSpec> specs() {
    return WatermarkStrategy.<CpiSpec>forGenerator(ctx -> new NoHoldback<>())
        .withTimestampAssigner((s, previous) -> s.getPeriodEndUs() / 1000);
  }

  /** Emits the maximum watermark once, so that the stream never delays the other input. */
  static final class NoHoldback<T> implements WatermarkGenerator<T> {
    private boolean sent;

    @Override
    public void onEvent(T event, long timestamp, WatermarkOutput output) {}

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
      if (!sent) {
        output.emitWatermark(new Watermark(Long.MAX_VALUE));
        sent = true;
      }
    }
  }
}
