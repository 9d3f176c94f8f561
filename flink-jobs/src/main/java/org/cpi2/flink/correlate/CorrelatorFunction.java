package org.cpi2.flink.correlate;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.OutputTag;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.judge.CapJudge;
import org.cpi2.flink.records.CapState;
import org.cpi2.flink.records.PendingAnalysis;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.flink.stream.StateTtl;
import org.cpi2.schema.ActionKind;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.Decision;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.schema.Suspect;
import org.cpi2.schema.TaskClass;

/**
 * Paper sections 4.2, 5 and 7.2, keyed by host, chained behind the detector: one stream of the
 * host's scored samples and its enforcer's actions. Keeps the recent CPI and CPU usage of every
 * task on the host (the correlation window, or longer while a cap may still be judged) and the caps
 * in force. An anomalous sample queues its task for analysis; the analysis runs as soon as the
 * host's period is complete (every task that reported the victim's previous sample time, at least
 * one besides the victim, has reported a sample at or after the victim's), or else when the
 * watermark passes the sample's time (a tenant that fell silent cannot hold it longer). Analyses
 * take per-second slots of event time per host ({@code correlation.min-interval-ms}), up to one
 * sampling interval ahead, latency-sensitive or protected victims first, then the most severe
 * (value over threshold): every anomalous victim of a period is analysed within it. A victim is
 * analysed again only after as many new outliers as make an anomaly since its last incident (in an
 * episode's first window, after an analysis that singled nobody out, the next outlier); capped
 * tasks are left out, and when the victim is still anomalous under a cap naming it, the new
 * incident is the next round (paper 5: "analyse again without the capped task"). Every cap applied
 * for an incident is judged from the same series when the watermark passes its expiry ({@link
 * CapJudge}; outcomes on {@link #OUTCOMES}).
 */
public class CorrelatorFunction extends KeyedProcessFunction<String, HostEvent, Incident> {
  private static final long serialVersionUID = 1L;

  /** Side output: the judged caps. */
  public static final OutputTag<CapOutcome> OUTCOMES = CapJudge.OUTCOMES;

  private final Cpi2Options options;
  private final long windowUs;
  private final long minIntervalMs;
  private final long earlyWindowUs;
  private final int anomalyOutliers;
  private final CapJudge judge;
  private final long retentionUs;
  private final Signal signal;

  private transient Analyzer analyzer;
  private transient MapState<String, TaskSeries> series;
  private transient MapState<String, PendingAnalysis> pending;
  private transient MapState<String, Long> lastIncidentUs;
  private transient MapState<String, Integer> lastRound;
  private transient MapState<String, Long> reanalyseUntilUs;
  private transient MapState<String, CapState> caps;
  private transient ValueState<Long> lastAnalysisMs;
  private transient Counter analyses;
  private transient Map<Decision, Counter> incidents; // by decision (a "decision" metric label)

  public CorrelatorFunction(Cpi2Options o) {
    this(o, Signal.CPI);
  }

  /**
   * The correlator of {@code signal}, behind that signal's detector, with its options ({@link
   * Cpi2Options#forSignal}).
   */
  public CorrelatorFunction(Cpi2Options options, Signal signal) {
    Cpi2Options o = options.forSignal(signal);
    this.signal = signal;
    this.options = o;
    this.windowUs = o.getLong(Cpi2Options.CORRELATION_WINDOW_S) * 1_000_000L;
    this.minIntervalMs = o.getLong(Cpi2Options.ANALYSIS_MIN_INTERVAL_MS);
    this.earlyWindowUs =
        DecisionPolicy.Rules.parse(o.get(Cpi2Options.CORRELATION_POLICY))
                == DecisionPolicy.Rules.PROJECT
            ? o.getLong(Cpi2Options.CORRELATION_EARLY_WINDOW_S) * 1_000_000L
            : 0;
    this.anomalyOutliers = o.getInt(Cpi2Options.ANOMALY_OUTLIERS);
    this.judge = new CapJudge(o, signal);
    this.retentionUs = Math.max(windowUs, judge.retentionUs());
  }

  @Override
  public void open(OpenContext ctx) {
    double minCpu = options.getDouble(Cpi2Options.MIN_CPU_USAGE);
    DecisionPolicy policy = DecisionPolicy.of(options);
    analyzer = new Analyzer(windowUs, minCpu, policy, signal);
    MetricGroup metrics = getRuntimeContext().getMetricGroup();
    analyses = metrics.counter("analyses");
    incidents = new EnumMap<>(Decision.class);
    for (Decision d : Decision.values()) {
      incidents.put(d, metrics.addGroup("decision", d.name()).counter("incidents"));
    }
    long ttl = options.getLong(Cpi2Options.TASK_TTL_S);
    // No state TTL on the series: TTL filtering copies a host's whole map on every access. Tasks
    // that stop reporting are dropped in event time by prune(), at every timer of the host.
    series =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "series", RecordTypes.STATE_STRING, RecordTypes.TASK_SERIES));
    pending =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "pending",
                    RecordTypes.STATE_STRING,
                    TypeInformation.of(PendingAnalysis.class)));
    MapStateDescriptor<String, Long> li =
        new MapStateDescriptor<>("last-incident", RecordTypes.STATE_STRING, Types.LONG);
    li.enableTimeToLive(StateTtl.forTasks(ttl));
    lastIncidentUs = getRuntimeContext().getMapState(li);
    MapStateDescriptor<String, Integer> lr =
        new MapStateDescriptor<>("last-round", RecordTypes.STATE_STRING, Types.INT);
    lr.enableTimeToLive(StateTtl.forTasks(ttl));
    lastRound = getRuntimeContext().getMapState(lr);
    MapStateDescriptor<String, Long> ru =
        new MapStateDescriptor<>("reanalyse-until", RecordTypes.STATE_STRING, Types.LONG);
    ru.enableTimeToLive(StateTtl.forTasks(ttl));
    reanalyseUntilUs = getRuntimeContext().getMapState(ru);
    MapStateDescriptor<String, CapState> cd =
        new MapStateDescriptor<>(
            "caps", RecordTypes.STATE_STRING, TypeInformation.of(CapState.class));
    cd.enableTimeToLive(StateTtl.forTasks(ttl)); // caps last minutes; a silent host's go too
    caps = getRuntimeContext().getMapState(cd);
    lastAnalysisMs =
        getRuntimeContext().getState(new ValueStateDescriptor<>("last-analysis", Types.LONG));
    judge.open(getRuntimeContext());
  }

  @Override
  public void processElement(HostEvent e, Context ctx, Collector<Incident> out) throws Exception {
    if (e.scored != null) {
      processSample(e.scored, ctx, out);
    } else if (e.action != null) {
      processAction(e.action, ctx);
    }
  }

  private void processSample(ScoredSample s, Context ctx, Collector<Incident> out)
      throws Exception {
    TaskSeries ts = series.get(s.task);
    if (ts == null) {
      ts = new TaskSeries();
      ts.task = s.task;
    }
    ts.describe(s.job, s.platform, s.taskClass);
    ts.isProtected = s.isProtected;
    if (s.spec != null && !s.spec.equals(ts.spec)) {
      ts.spec = s.spec; // an equal one held is kept: the series is old, the sample's spec young
    }
    ts.add(s.timeUs, s.cpi, s.cpu, s.outlier);
    // Analyses run at the watermark, which may lag the newest sample: keep one window behind it,
    // or more while a cap may still be judged.
    long wm = ctx.timerService().currentWatermark();
    if (wm != Long.MIN_VALUE) {
      ts.evictUpTo(wm * 1000 - retentionUs);
    }
    series.put(s.task, ts);
    // One cleanup timer per host and window (timers of equal time are kept once).
    long window = windowUs / 1000;
    ctx.timerService().registerEventTimeTimer((s.timeUs / 1000 / window + 2) * window);
    if (s.anomalous && s.spec != null) {
      PendingAnalysis queued = pending.get(s.task);
      if (queued == null || queued.timeUs < s.timeUs) {
        pending.put(s.task, PendingAnalysis.of(s));
      }
      ctx.timerService().registerEventTimeTimer(s.timeUs / 1000);
    }
    if (!pending.isEmpty()) {
      analyseDue(ctx.getCurrentKey(), wm, Math.max(wm, s.timeUs / 1000), ctx, out);
    }
  }

  /** A queued analysis that may run now, with what orders it. */
  private record Ready(
      String victim, PendingAnalysis due, boolean isProtected, double severity, long lookaheadMs) {}

  /** Latency-sensitive or protected first, then the most severe, the earliest, by task name. */
  private static final Comparator<Ready> PRIORITY =
      Comparator.comparing((Ready r) -> !r.isProtected())
          .thenComparing(r -> -r.severity())
          .thenComparingLong(r -> r.due().timeUs)
          .thenComparing(Ready::victim);

  /**
   * Runs the queued analyses that may run at the host's event time {@code clockMs} (the newest
   * sample's time or the watermark): those whose time the watermark passed, and those whose host
   * period is complete (every task that reported the victim's previous sample time, at least one
   * besides the victim, has a sample at or after the victim's). In priority order ({@link
   * #PRIORITY}), each takes the next free per-second slot of event time (at or after its own time,
   * {@code correlation.min-interval-ms} after the last slot taken) if that slot lies less than one
   * of the victim's sampling intervals ahead of the clock; the rest wait for the clock to advance.
   * So at most one analysis per second of event time per host, and every anomalous victim of a
   * period is analysed within it while a host has fewer victims than seconds in its period.
   */
  private void analyseDue(
      String host, long watermarkMs, long clockMs, Context ctx, Collector<Incident> out)
      throws Exception {
    List<Ready> ready = new ArrayList<>();
    Map<Long, Boolean> complete = new HashMap<>();
    for (Map.Entry<String, PendingAnalysis> e : pending.entries()) {
      PendingAnalysis due = e.getValue();
      TaskSeries v = series.get(e.getKey());
      long previous = v == null ? Long.MIN_VALUE : v.timeBefore(due.timeUs);
      boolean passed = watermarkMs != Long.MIN_VALUE && due.timeUs / 1000 <= watermarkMs;
      if (!passed
          && (previous == Long.MIN_VALUE
              || !complete.computeIfAbsent(previous, p -> periodComplete(p, due.timeUs)))) {
        continue;
      }
      boolean isProtected =
          v != null && (v.isProtected || v.taskClass == TaskClass.LATENCY_SENSITIVE);
      double value = v == null ? Double.NaN : v.valueAt(due.timeUs);
      double severity = Double.isFinite(value) && due.threshold > 0 ? value / due.threshold : 0;
      long interval = previous == Long.MIN_VALUE ? 0 : (due.timeUs - previous) / 1000;
      ready.add(
          new Ready(e.getKey(), due, isProtected, severity, Math.max(minIntervalMs, interval)));
    }
    ready.sort(PRIORITY);
    Long last = lastAnalysisMs.value();
    long nextSlot = Long.MIN_VALUE;
    for (Ready r : ready) {
      long slot =
          Math.max(r.due().timeUs / 1000, last == null ? Long.MIN_VALUE : last + minIntervalMs);
      if (slot >= clockMs + r.lookaheadMs()) {
        nextSlot = nextSlot == Long.MIN_VALUE ? slot - r.lookaheadMs() + 1 : nextSlot;
        continue; // rate-limited: waits for the clock
      }
      pending.remove(r.victim());
      if (analyse(host, r.victim(), r.due(), clockMs, out)) {
        last = slot;
        lastAnalysisMs.update(slot);
      }
    }
    if (nextSlot != Long.MIN_VALUE) {
      ctx.timerService().registerEventTimeTimer(nextSlot);
    }
  }

  /**
   * Whether every task of the host that reported at {@code previous} (the victim's sample before
   * {@code timeUs}) has reported at or after {@code timeUs}, with at least one besides the victim.
   */
  private boolean periodComplete(long previous, long timeUs) {
    try {
      int reported = 0;
      for (TaskSeries t : series.values()) {
        if (t.has(previous)) {
          if (t.newest() < timeUs) {
            return false;
          }
          reported++;
        }
      }
      return reported >= 2; // nobody else known yet: only the watermark can say it is in
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private void processAction(EnforcementAction a, Context ctx) throws Exception {
    long judgeAtMs = judge.onAction(a);
    if (judgeAtMs != Long.MIN_VALUE) {
      long wm = ctx.timerService().currentWatermark();
      if (judgeAtMs <= wm) {
        judgeDue(ctx.getCurrentKey(), wm, ctx); // a late action
      } else {
        ctx.timerService().registerEventTimeTimer(judgeAtMs);
      }
    }
    ActionKind kind = a.getKind();
    if ((kind == ActionKind.APPLIED || kind == ActionKind.RENEWED) && a.getExpiresAtUs() != null) {
      CapState c = new CapState();
      c.task = a.getTask();
      c.victimTask = a.getVictimTask();
      c.incidentId = a.getIncidentId();
      c.appliedAtUs = a.getAtUs();
      c.expiresAtUs = a.getExpiresAtUs();
      CapState old = caps.get(a.getTask());
      if (old != null && kind == ActionKind.RENEWED) {
        c.appliedAtUs = old.appliedAtUs;
      }
      caps.put(a.getTask(), c);
    } else if (kind == ActionKind.RELEASED || kind == ActionKind.FAILED) {
      caps.remove(a.getTask());
    }
  }

  private void judgeDue(String host, long timestampMs, Context ctx) throws Exception {
    List<CapOutcome> outcomes = new ArrayList<>(1);
    judge.judgeDue(host, timestampMs, series, outcomes);
    for (CapOutcome o : outcomes) {
      ctx.output(OUTCOMES, o);
    }
  }

  @Override
  public void onTimer(long timestampMs, OnTimerContext ctx, Collector<Incident> out)
      throws Exception {
    judgeDue(ctx.getCurrentKey(), timestampMs, ctx);
    // The watermark at its end (the samples' input ended: a bounded run, a drained stop) is no
    // evidence that a task left: the series stay, so that an action read after it (the actions'
    // stream holds no time back) is judged from the samples it covers, as it would have been on
    // time.
    if (ctx.timerService().currentWatermark() != Long.MAX_VALUE) {
      prune(timestampMs * 1000 - windowUs);
    }
    if (!pending.isEmpty()) {
      analyseDue(ctx.getCurrentKey(), timestampMs, timestampMs, ctx, out);
    }
  }

  /**
   * Runs one analysis if the victim has fresh evidence, at the host's event time {@code clockMs}
   * (the incident's analysed_at_us); true if it ran.
   */
  private boolean analyse(
      String host, String victim, PendingAnalysis due, long clockMs, Collector<Incident> out)
      throws Exception {
    TaskSeries v = series.get(victim);
    if (v == null) {
      return false;
    }
    long detectedAt = due.timeUs;
    due.applySpecTo(v); // judged against the spec of the anomalous sample's time
    Long last = lastIncidentUs.get(victim);
    boolean episodeStart = last == null || last <= detectedAt - windowUs;
    Long until = episodeStart ? null : reanalyseUntilUs.get(victim);
    int needed = until != null && detectedAt < until ? 1 : anomalyOutliers;
    // A shift anomaly is reported once per re-baseline by the detector: its outliers are the ones
    // before the re-baseline, which an analysis may have seen already.
    if (last != null && !due.shifted && v.outliersAfter(last) < needed) {
      return false;
    }
    TreeSet<String> excluded = new TreeSet<>();
    boolean cappedForVictim = false;
    List<String> expired = new ArrayList<>();
    for (Map.Entry<String, CapState> e : caps.entries()) {
      CapState c = e.getValue();
      if (c.expiresAtUs <= detectedAt - windowUs) {
        expired.add(e.getKey());
      } else if (c.activeAt(detectedAt)) {
        excluded.add(c.task);
        cappedForVictim |= victim.equals(c.victimTask);
      }
    }
    for (String k : expired) {
      caps.remove(k);
    }
    List<TaskSeries> tenants = new ArrayList<>();
    for (TaskSeries t : series.values()) {
      if (t.newest() > detectedAt - windowUs) {
        tenants.add(t);
      }
    }
    Integer prev = lastRound.get(victim);
    int round = cappedForVictim && prev != null ? prev + 1 : 1;
    Incident incident =
        analyzer.analyse(host, v, tenants, excluded, detectedAt, round, due.shifted);
    if (earlyWindowUs > 0
        && incident.getDecision() != Decision.THROTTLE
        && incident.getDecision() != Decision.JOB_WIDE_SHIFT
        && episodeStart) {
      // The episode's first analysis: its onset may be only the anomaly's few samples of a long
      // window, so a window of those samples may name the antagonist a window earlier.
      Incident early =
          analyzer.analyse(host, v, tenants, excluded, detectedAt, round, earlyWindowUs);
      if (early.getDecision() == Decision.THROTTLE && clearlyFirst(early)) {
        incident = early;
      }
    }
    incident.setAnalysedAtUs(Math.max(detectedAt, clockMs * 1000));
    // Young and inconclusive: the next outlier may bring what names the antagonist.
    long reanalyseUntil = episodeStart ? detectedAt + windowUs : until == null ? 0 : until;
    if (inconclusive(incident.getDecision()) && detectedAt < reanalyseUntil) {
      reanalyseUntilUs.put(victim, reanalyseUntil);
    } else {
      reanalyseUntilUs.remove(victim);
    }
    lastIncidentUs.put(victim, detectedAt);
    lastRound.put(victim, round);
    analyses.inc();
    incidents.get(incident.getDecision()).inc();
    out.collect(incident);
    return true;
  }

  /**
   * Whether a decision left the antagonist unnamed only because the correlation has not (yet)
   * singled one out: none above the threshold, none that stands out, or only latency-sensitive
   * suspects above it. The others (a spec not usable, a victim not protected or using too little
   * CPU, no other task) do not change from one sample to the next.
   */
  private static boolean inconclusive(Decision d) {
    return d == Decision.NO_SUSPECT_ABOVE_THRESHOLD
        || d == Decision.NO_SUSPECT_STANDS_OUT
        || d == Decision.ONLY_LATENCY_SENSITIVE_SUSPECTS;
  }

  /**
   * Whether an early incident's antagonist correlates at least {@link #EARLY_MARGIN} above every
   * other suspect: a few samples tell square-wave tenants apart only when one clearly leads.
   */
  private static boolean clearlyFirst(Incident early) {
    double next = Double.NEGATIVE_INFINITY;
    for (Suspect s : early.getSuspects()) {
      if (!s.getTask().toString().equals(early.getAntagonistTask().toString())) {
        next = Math.max(next, s.getCorrelation());
      }
    }
    return early.getCorrelation() >= next + EARLY_MARGIN;
  }

  /** How far the early antagonist's correlation leads the next suspect's. */
  private static final double EARLY_MARGIN = 0.03;

  /** Drops tasks with no sample after {@code horizonUs}: they left the host. */
  private void prune(long horizonUs) throws Exception {
    List<String> gone = new ArrayList<>();
    for (Map.Entry<String, TaskSeries> e : series.entries()) {
      if (e.getValue().newest() <= horizonUs) {
        gone.add(e.getKey());
      }
    }
    for (String k : gone) {
      series.remove(k);
      lastIncidentUs.remove(k);
      lastRound.remove(k);
      reanalyseUntilUs.remove(k);
    }
  }
}
