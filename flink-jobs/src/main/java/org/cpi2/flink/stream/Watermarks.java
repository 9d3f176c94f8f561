package org.cpi2.flink.stream;

import java.time.Duration;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.EnforcementAction;

/**
 * Event-time policy. Samples carry their window start as event time, read from the wire bytes in
 * the source ({@link SampleEventTime}), so that each Kafka partition has its own watermark and the
 * job's watermark is the slowest partition's: interleaving partitions that are far apart (a
 * backlog, a collector catching up) makes no sample late. A partition's watermark trails its newest
 * sample by the bounded out-of-orderness ({@code time.out-of-orderness-s}, 30 s by default), and a
 * partition that sends nothing for {@code time.source-idleness-s} stops holding time back. Samples
 * later than that bound are still processed by the detector and the correlator (they are placed by
 * their own time) but may miss a spec period or an analysis that already ran.
 *
 * <p>Actions and spec seeds never hold event time back: their streams are idle (they emit no
 * watermark), so they update state whenever they arrive and the samples alone drive the clocks.
 * Idle, not the maximum watermark: an operator's watermark is the minimum over its active inputs,
 * so while the samples' partitions are idle (a job started before its collectors publish, a
 * collector silent for longer than {@code time.source-idleness-s}) a maximum on the other input
 * would become the operator's watermark, and a watermark never goes back: every event-time timer
 * after it (spec periods, analyses) would never fire.
 */
public final class Watermarks {
  private Watermarks() {}

  /**
   * For the samples' source: give it to {@code env.fromSource} (per split) or apply it to test
   * data.
   */
  public static WatermarkStrategy<RawRecord> samples(long outOfOrdernessS, long idlenessS) {
    SampleEventTime time = new SampleEventTime();
    return WatermarkStrategy.<RawRecord>forBoundedOutOfOrderness(
            Duration.ofSeconds(outOfOrdernessS))
        .withTimestampAssigner((r, previous) -> time.millis(r.value))
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

  /** Marks the stream idle and emits no watermark, so that it never delays the other input. */
  static final class NoHoldback<T> implements WatermarkGenerator<T> {
    @Override
    public void onEvent(T event, long timestamp, WatermarkOutput output) {
      output.markIdle();
    }

    @Override
    public void onPeriodicEmit(WatermarkOutput output) {
      output.markIdle();
    }
  }
}
