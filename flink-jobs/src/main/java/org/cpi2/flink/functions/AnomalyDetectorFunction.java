package org.cpi2.flink.functions;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReadOnlyBroadcastState;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.logic.AnomalyWindow;
import org.cpi2.flink.logic.OutlierRule;
import org.cpi2.flink.records.ScoredSample;
import org.cpi2.flink.records.SpecHistory;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;

/**
 * Paper section 4.1, keyed by host|task: judges every sample against its job's spec on its
 * platform in force at the sample's time (specs arrive as broadcast state) and emits it as a {@link ScoredSample}, flagged as an
 * outlier and, when it completes enough outliers within the anomaly window, as anomalous. Specs
 * that are not yet usable still give a threshold, so that the incident can say why nothing was
 * done.
 *
 * <p>A sample is judged against the spec in force at its own time: the newest spec whose period
 * ended at or before it. The spec builder emits the specs of a period before it forwards the
 * watermark past that period's end, so once the watermark has passed the last spec period
 * boundary at or before a sample, that sample's spec is final: the sample is judged on arrival,
 * and detection does not wait for the next sampling period to move the watermark. Otherwise
 * (in the minute or so after each spec period ends, and when replaying history) it waits in
 * state until the watermark passes it; a task's waiting samples are judged first, oldest first,
 * as soon as their spec is final. A late sample (at or before the watermark) is judged at once.
 * Either way an outlier is placed among the task's outliers by its own time (see
 * {@link AnomalyWindow}).
 */
public class AnomalyDetectorFunction
    extends KeyedBroadcastProcessFunction<String, CpiSample, CpiSpec, ScoredSample> {
  private static final long serialVersionUID = 1L;

  /** Broadcast state: the recent specs per job|platform. */
  public static final MapStateDescriptor<String, SpecHistory> SPECS =
      new MapStateDescriptor<>("specs", Types.STRING, TypeInformation.of(SpecHistory.class));

  private final double sigmas;
  private final double minCpu;
  private final int outliers;
  private final long windowUs;
  private final long taskTtlS;
  private final long specPeriodUs;

  private transient OutlierRule rule;
  private transient AnomalyWindow window;
  private transient ValueState<long[]> outlierTimes;
  private transient MapState<Long, CpiSample> waiting;

  public AnomalyDetectorFunction(Cpi2Options o) {
    this.sigmas = o.getDouble(Cpi2Options.OUTLIER_SIGMAS);
    this.minCpu = o.getDouble(Cpi2Options.MIN_CPU_USAGE);
    this.outliers = o.getInt(Cpi2Options.ANOMALY_OUTLIERS);
    this.windowUs = o.getLong(Cpi2Options.ANOMALY_WINDOW_S) * 1_000_000L;
    this.taskTtlS = o.getLong(Cpi2Options.TASK_TTL_S);
    this.specPeriodUs = o.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L;
  }

  /** The key of the detector's state for one task. */
  public static String key(CpiSample s) {
    return s.getHost() + "|" + s.getTask();
  }

  @Override
  public void open(OpenContext ctx) {
    rule = new OutlierRule(sigmas, minCpu);
    window = new AnomalyWindow(outliers, windowUs);
    ValueStateDescriptor<long[]> d =
        new ValueStateDescriptor<>(
            "outlier-times", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO);
    d.enableTimeToLive(StateTtl.forTasks(taskTtlS));
    outlierTimes = getRuntimeContext().getState(d);
    waiting =
        getRuntimeContext().getMapState(new MapStateDescriptor<>("waiting", Types.LONG, RecordTypes.SAMPLE));
  }

  @Override
  public void processElement(CpiSample s, ReadOnlyContext ctx, Collector<ScoredSample> out)
      throws Exception {
    long tMs = s.getWindowStartUs() / 1000;
    ReadOnlyBroadcastState<String, SpecHistory> specs = ctx.getBroadcastState(SPECS);
    if (tMs <= ctx.timerService().currentWatermark()) {
      out.collect(judge(s, specs));
      return;
    }
    long watermark = ctx.timerService().currentWatermark();
    if (specFinal(watermark, s.getWindowStartUs()) && judgeWaitingWithFinalSpecs(watermark, specs, out)) {
      out.collect(judge(s, specs));
      return;
    }
    waiting.put(s.getWindowStartUs(), s);
    ctx.timerService().registerEventTimeTimer(tMs);
  }

  /**
   * Judges, oldest first, the task's waiting samples whose spec has become final; true if none
   * is left waiting (their timers then find nothing to do).
   */
  private boolean judgeWaitingWithFinalSpecs(
      long watermark, ReadOnlyBroadcastState<String, SpecHistory> specs, Collector<ScoredSample> out)
      throws Exception {
    if (waiting.isEmpty()) {
      return true;
    }
    List<Long> times = new ArrayList<>();
    for (Long t : waiting.keys()) {
      times.add(t);
    }
    Collections.sort(times);
    for (Long t : times) {
      if (!specFinal(watermark, t)) {
        return false;
      }
      out.collect(judge(waiting.get(t), specs));
      waiting.remove(t);
    }
    return true;
  }

  @Override
  public void onTimer(long timestampMs, OnTimerContext ctx, Collector<ScoredSample> out)
      throws Exception {
    List<Long> due = new ArrayList<>();
    for (Long t : waiting.keys()) {
      if (t / 1000 <= timestampMs) {
        due.add(t);
      }
    }
    Collections.sort(due);
    ReadOnlyBroadcastState<String, SpecHistory> specs = ctx.getBroadcastState(SPECS);
    for (Long t : due) {
      out.collect(judge(waiting.get(t), specs));
      waiting.remove(t);
    }
  }

  /**
   * Whether the spec in force at {@code tUs} can no longer change: the watermark has passed the
   * last spec period boundary at or before it (where the spec builder's timers fire).
   */
  boolean specFinal(long watermarkMs, long tUs) {
    long boundaryMs = Math.floorDiv(tUs, specPeriodUs) * specPeriodUs / 1000;
    return watermarkMs != Long.MIN_VALUE && watermarkMs >= boundaryMs - 1;
  }

  private ScoredSample judge(CpiSample s, ReadOnlyBroadcastState<String, SpecHistory> specs)
      throws Exception {
    ScoredSample o = ScoredSample.of(s);
    SpecHistory history = specs.get(SpecBuilderFunction.key(s.getJob(), s.getPlatform()));
    CpiSpec spec = history == null ? null : history.at(s.getWindowStartUs());
    if (spec != null && spec.getWeightedCount() > 0) {
      o.specKnown = true;
      o.specUsable = spec.getUsable();
      o.specMean = spec.getCpiMean();
      o.specStddev = spec.getCpiStddev();
      o.threshold = rule.threshold(o.specMean, o.specStddev);
      o.outlier = rule.isOutlier(o.cpi, o.cpu, o.threshold);
      if (o.outlier) {
        long[] times = window.insert(outlierTimes.value(), o.timeUs);
        outlierTimes.update(times);
        o.anomalous = window.isAnomalous(times, o.timeUs);
      }
    }
    return o;
  }

  @Override
  public void processBroadcastElement(CpiSpec spec, Context ctx, Collector<ScoredSample> out)
      throws Exception {
    BroadcastState<String, SpecHistory> specs = ctx.getBroadcastState(SPECS);
    String key = SpecBuilderFunction.key(spec.getJob(), spec.getPlatform());
    SpecHistory known = specs.get(key);
    specs.put(key, (known == null ? new SpecHistory() : known).with(spec));
  }
}
