package org.cpi2.flink.detect;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.BroadcastState;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReadOnlyBroadcastState;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedBroadcastProcessFunction;
import org.apache.flink.util.Collector;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.records.DetectorTask;
import org.cpi2.flink.records.SpecHistory;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.spec.JobPlatformMap;
import org.cpi2.flink.spec.SpecBuilderFunction;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.schema.CpiSpec;

/**
 * Paper section 4.1, keyed by host: judges every sample of the host's tasks against its job's spec
 * on its platform in force at the sample's time (specs arrive as broadcast state) and emits it as a
 * {@link ScoredSample}, flagged as an outlier and, when it completes enough outliers within the
 * anomaly window, as anomalous. Specs that are not yet usable still give a threshold, so that the
 * incident can say why nothing was done. Enforcers' actions pass through unchanged: the correlator,
 * chained behind, reads samples and actions as one stream.
 *
 * <p>A sample is judged against the spec in force at its own time: the newest spec whose period
 * ended at or before it. The spec builder emits the specs of a period before it forwards the
 * watermark past that period's end, so once the watermark has passed the last spec period boundary
 * at or before a sample, that sample's spec is final: the sample is judged on arrival, and
 * detection does not wait for the next sampling period to move the watermark. Otherwise (in the
 * minute or so after each spec period ends, and when replaying history) it waits in state until its
 * spec is final (one timer per host and spec period); a task's waiting samples are judged first,
 * oldest first, as soon as their spec is final. A late sample (at or before the watermark) is
 * judged at once. Either way an outlier is placed among the task's outliers by its own time (see
 * {@link AnomalyWindow}). A task's outliers are forgotten once the watermark is {@code
 * state.task-ttl-s} past the newest of them.
 *
 * <p>For a signal of some tasks only ({@link Signal#perTask}), a sample without it (a neighbour of
 * a service, there for its CPU usage) is passed on at once, unjudged.
 */
public class AnomalyDetectorFunction
    extends KeyedBroadcastProcessFunction<String, HostEvent, CpiSpec, HostEvent> {
  private static final long serialVersionUID = 1L;

  /** Broadcast state: the recent specs per job|platform. */
  public static final MapStateDescriptor<String, SpecHistory> SPECS =
      new MapStateDescriptor<>("specs", Types.STRING, TypeInformation.of(SpecHistory.class));

  /** In {@link #specCache}: not read from the broadcast state yet. */
  private static final SpecHistory UNREAD = new SpecHistory();

  private final double sigmas;
  private final double minCpu;
  private final double floor;
  private final double minRatio;
  private final double ratioCap;
  private final int outliers;
  private final long windowUs;
  private final long specPeriodUs;
  private final long bucketUs;
  private final long taskTtlUs;
  private final boolean perTask;

  private transient OutlierRule rule;
  private transient AnomalyWindow window;
  private transient MapState<String, DetectorTask> tasks;

  /** Samples waiting for their spec, by task and time ({@link #waitingKey}). */
  private transient MapState<String, ScoredSample> waiting;

  /** The broadcast spec histories by job and platform, as last read; emptied by every new spec. */
  private transient JobPlatformMap<SpecHistory> specCache;

  public AnomalyDetectorFunction(Cpi2Options o) {
    this(o, Signal.CPI);
  }

  /** The detector of {@code signal}, with the options {@code o} of that signal. */
  public AnomalyDetectorFunction(Cpi2Options o, Signal signal) {
    this.perTask = signal.perTask();
    this.sigmas = o.getDouble(Cpi2Options.OUTLIER_SIGMAS);
    this.minCpu = o.getDouble(Cpi2Options.MIN_CPU_USAGE);
    this.floor = o.getDouble(Cpi2Options.OUTLIER_FLOOR);
    this.minRatio = o.getDouble(Cpi2Options.OUTLIER_MIN_RATIO);
    this.ratioCap = o.getDouble(Cpi2Options.OUTLIER_MIN_RATIO_CAP);
    this.outliers = o.getInt(Cpi2Options.ANOMALY_OUTLIERS);
    this.windowUs = o.getLong(Cpi2Options.ANOMALY_WINDOW_S) * 1_000_000L;
    this.specPeriodUs = o.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L;
    this.bucketUs = o.shiftBucketUs();
    this.taskTtlUs = o.getLong(Cpi2Options.TASK_TTL_S) * 1_000_000L;
  }

  @Override
  public void open(OpenContext ctx) {
    rule = new OutlierRule(sigmas, minCpu, floor, minRatio, ratioCap);
    window = new AnomalyWindow(outliers, windowUs);
    specCache = new JobPlatformMap<>();
    tasks =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "tasks", RecordTypes.STATE_STRING, TypeInformation.of(DetectorTask.class)));
    waiting =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "waiting-samples", RecordTypes.STATE_STRING, RecordTypes.WAITING_SAMPLE));
  }

  @Override
  public void processElement(HostEvent e, ReadOnlyContext ctx, Collector<HostEvent> out)
      throws Exception {
    if (e.sample == null) {
      out.collect(e); // an action: for the correlator
      return;
    }
    ScoredSample s = e.sample;
    if (perTask && Double.isNaN(s.cpi)) {
      out.collect(HostEvent.of(s)); // a neighbour of a service: its CPU usage, nothing to judge
      return;
    }
    long watermark = ctx.timerService().currentWatermark();
    ReadOnlyBroadcastState<String, SpecHistory> specs = ctx.getBroadcastState(SPECS);
    long tMs = s.timeUs / 1000;
    if (tMs <= watermark) {
      out.collect(HostEvent.of(judge(s, specs, ctx)));
      return;
    }
    if (specFinal(watermark, s.timeUs)) {
      // Samples of an earlier build's state whose spec is final were judged by their restored
      // timers, which fire as the watermark passes: no need to look for them here.
      if (waiting.isEmpty() || judgeWaitingWithFinalSpecs(s.task, watermark, specs, ctx, out)) {
        out.collect(HostEvent.of(judge(s, specs, ctx)));
        return;
      }
    }
    DetectorTask t = task(s.task);
    t.waiting = insert(t.waiting, s.timeUs);
    tasks.put(s.task, t);
    waiting.put(waitingKey(s.task, s.timeUs), s);
    // One timer per host and spec period: where the spec of the sample's period becomes final.
    ctx.timerService().registerEventTimeTimer(finalAtMs(s.timeUs));
  }

  /**
   * Judges, oldest first, the task's waiting samples whose spec has become final; true if none of
   * the task's samples is left waiting (their timers then find nothing to do).
   */
  private boolean judgeWaitingWithFinalSpecs(
      String taskName,
      long watermark,
      ReadOnlyBroadcastState<String, SpecHistory> specs,
      ReadOnlyContext ctx,
      Collector<HostEvent> out)
      throws Exception {
    DetectorTask t = tasks.get(taskName);
    if (t == null || t.waiting.length == 0) {
      return true;
    }
    int judged = 0;
    for (long time : t.waiting) {
      if (!specFinal(watermark, time)) {
        break;
      }
      ScoredSample s = takeWaiting(waitingKey(taskName, time));
      judged++;
      if (s != null) {
        out.collect(HostEvent.of(judge(s, specs, ctx)));
      }
    }
    // judge() may have stored the task's new outliers: read it again before dropping the judged.
    t = task(taskName);
    t.waiting = Arrays.copyOfRange(t.waiting, judged, t.waiting.length);
    tasks.put(taskName, t);
    return t.waiting.length == 0;
  }

  @Override
  public void onTimer(long timestampMs, OnTimerContext ctx, Collector<HostEvent> out)
      throws Exception {
    if (!waiting.isEmpty()) {
      List<ScoredSample> due = new ArrayList<>();
      for (Map.Entry<String, ScoredSample> w : waiting.entries()) {
        if (specFinal(timestampMs, w.getValue().timeUs)) {
          due.add(w.getValue());
        }
      }
      due.sort(Comparator.comparingLong(w -> w.timeUs));
      ReadOnlyBroadcastState<String, SpecHistory> specs = ctx.getBroadcastState(SPECS);
      for (ScoredSample s : due) {
        takeWaiting(waitingKey(s.task, s.timeUs));
        out.collect(HostEvent.of(judge(s, specs, ctx)));
        DetectorTask t = task(s.task);
        t.waiting = remove(t.waiting, s.timeUs);
        tasks.put(s.task, t);
      }
    }
    if (timestampMs % (windowUs / 1000) == 0) {
      forgetOldOutliers(timestampMs * 1000 - taskTtlUs);
    }
  }

  /** Drops the state of tasks with nothing waiting and no outlier after {@code horizonUs}. */
  private void forgetOldOutliers(long horizonUs) throws Exception {
    List<String> old = new ArrayList<>();
    for (Map.Entry<String, DetectorTask> e : tasks.entries()) {
      if (e.getValue().waiting.length == 0 && e.getValue().newestOutlier() <= horizonUs) {
        old.add(e.getKey());
      }
    }
    for (String k : old) {
      tasks.remove(k);
    }
  }

  /**
   * Whether the spec in force at {@code tUs} can no longer change: the watermark has passed the
   * last spec period boundary at or before it (where the spec builder's timers fire), and the end
   * of the bucket two before its own (a re-baselined spec found in a bucket is in force from the
   * end of the next one).
   */
  boolean specFinal(long watermarkMs, long tUs) {
    return watermarkMs != Long.MIN_VALUE && watermarkMs >= finalAtMs(tUs);
  }

  /** The watermark (ms) from which the spec in force at {@code tUs} is final. */
  private long finalAtMs(long tUs) {
    long period = Math.floorDiv(tUs, specPeriodUs) * specPeriodUs;
    long bucket = Math.floorDiv(tUs, bucketUs) * bucketUs - bucketUs;
    return Math.max(period, bucket) / 1000 - 1;
  }

  /** The waiting sample of {@code key}, removed from the state, or null. */
  private ScoredSample takeWaiting(String key) throws Exception {
    ScoredSample s = waiting.get(key);
    if (s != null) {
      waiting.remove(key);
    }
    return s;
  }

  /** Judges the sample {@code o} (its judgement fields are set) and returns it. */
  private ScoredSample judge(
      ScoredSample o, ReadOnlyBroadcastState<String, SpecHistory> specs, ReadOnlyContext ctx)
      throws Exception {
    SpecHistory history = specCache.get(o.job, o.platform, UNREAD);
    if (history == UNREAD) {
      history = specs.get(SpecBuilderFunction.key(o.job, o.platform));
      specCache.put(o.job, o.platform, history);
    }
    CpiSpec spec = history == null ? null : history.at(o.timeUs);
    if (spec != null && spec.getWeightedCount() > 0) {
      double mean = spec.getCpiMean();
      double stddev = spec.getCpiStddev();
      o.spec = new SpecVerdict(spec.getUsable(), mean, stddev, rule.threshold(mean, stddev));
      o.outlier = rule.isOutlier(o.cpi, o.cpu, o.spec.threshold(), mean);
      if (!o.outlier && spec.getShiftRatio() > 0 && spec.getShiftRatio() != 1) {
        judgeShift(o, spec);
      }
      if (o.outlier) {
        DetectorTask t = task(o.task);
        t.outliers = window.insert(t.outliers, o.timeUs);
        tasks.put(o.task, t);
        o.anomalous = window.isAnomalous(t.outliers, o.timeUs);
        // Forget the task's outliers at the first anomaly-window boundary after their TTL.
        long windowMs = windowUs / 1000;
        ctx.timerService()
            .registerEventTimeTimer(
                ((t.newestOutlier() + taskTtlUs) / 1000 / windowMs + 1) * windowMs);
      }
    }
    return o;
  }

  /**
   * Under a re-baselined spec: whether {@code o} is an outlier against the spec before the
   * re-baseline (its job moved), and whether it would then have made its task anomalous; that
   * anomaly is reported once per re-baseline ({@link ScoredSample#shifted}).
   */
  private void judgeShift(ScoredSample o, CpiSpec spec) throws Exception {
    double r = spec.getShiftRatio();
    double meanBefore = spec.getCpiMean() / r;
    double before = rule.threshold(meanBefore, spec.getCpiStddev() / r);
    if (!rule.isOutlier(o.cpi, o.cpu, before, meanBefore)) {
      return;
    }
    o.shifted = true;
    DetectorTask t = task(o.task);
    if (t.shiftReportedUs != spec.getPeriodEndUs() && window.completes(t.outliers, o.timeUs)) {
      o.anomalous = true;
      t.shiftReportedUs = spec.getPeriodEndUs();
      tasks.put(o.task, t);
    }
  }

  private DetectorTask task(String name) throws Exception {
    DetectorTask t = tasks.get(name);
    return t == null ? new DetectorTask() : t;
  }

  private static String waitingKey(String task, long tUs) {
    return task + '|' + tUs;
  }

  private static long[] insert(long[] sorted, long t) {
    int pos = Arrays.binarySearch(sorted, t);
    if (pos >= 0) {
      return sorted;
    }
    int at = -pos - 1;
    long[] out = new long[sorted.length + 1];
    System.arraycopy(sorted, 0, out, 0, at);
    out[at] = t;
    System.arraycopy(sorted, at, out, at + 1, sorted.length - at);
    return out;
  }

  private static long[] remove(long[] sorted, long t) {
    int pos = Arrays.binarySearch(sorted, t);
    if (pos < 0) {
      return sorted;
    }
    long[] out = new long[sorted.length - 1];
    System.arraycopy(sorted, 0, out, 0, pos);
    System.arraycopy(sorted, pos + 1, out, pos, sorted.length - pos - 1);
    return out;
  }

  @Override
  public void processBroadcastElement(CpiSpec spec, Context ctx, Collector<HostEvent> out)
      throws Exception {
    specCache.clear();
    BroadcastState<String, SpecHistory> specs = ctx.getBroadcastState(SPECS);
    String key = SpecBuilderFunction.key(spec.getJob(), spec.getPlatform());
    SpecHistory known = specs.get(key);
    specs.put(key, (known == null ? new SpecHistory() : known).with(spec));
  }
}
