package org.cpi2.flink.functions;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.logic.OutcomeJudgement;
import org.cpi2.flink.logic.TaskSeries;
import org.cpi2.flink.records.CapState;
import org.cpi2.flink.records.ScoredSample;
import org.cpi2.schema.ActionCause;
import org.cpi2.schema.ActionKind;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.TaskClass;

/**
 * Paper section 7.2, keyed by host|victim task. Keeps the victim's recent CPI (input 1, scored
 * samples of every task) and, for each cap applied because of an incident (input 2, APPLIED
 * actions naming the victim), judges it when the watermark passes the cap's expiry: mean CPI while
 * capped against the mean over {@code judge.before-s} before it, with the spec's σ as the margin.
 * Only samples at or above the minimum CPU usage count, as for the spec.
 */
public class OutcomeJudgeFunction
    extends KeyedCoProcessFunction<String, ScoredSample, EnforcementAction, CapOutcome> {
  private static final long serialVersionUID = 1L;

  private final long beforeUs;
  private final long capDurationUs;
  private final double minCpu;
  private final long taskTtlS;

  private transient ValueState<TaskSeries> recent;
  private transient MapState<String, CapState> caps;

  public OutcomeJudgeFunction(Cpi2Options o) {
    this.beforeUs = o.getLong(Cpi2Options.JUDGE_BEFORE_S) * 1_000_000L;
    this.capDurationUs = o.getLong(Cpi2Options.CAP_DURATION_S) * 1_000_000L;
    this.minCpu = o.getDouble(Cpi2Options.MIN_CPU_USAGE);
    this.taskTtlS = o.getLong(Cpi2Options.TASK_TTL_S);
  }

  @Override
  public void open(OpenContext ctx) {
    ValueStateDescriptor<TaskSeries> d =
        new ValueStateDescriptor<>("recent", TypeInformation.of(TaskSeries.class));
    d.enableTimeToLive(StateTtl.forEverySample(taskTtlS));
    recent = getRuntimeContext().getState(d);
    caps =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("caps", Types.STRING, TypeInformation.of(CapState.class)));
  }

  @Override
  public void processElement1(ScoredSample s, Context ctx, Collector<CapOutcome> out) throws Exception {
    TaskSeries ts = recent.value();
    if (ts == null) {
      ts = new TaskSeries();
      ts.task = s.task;
    }
    ts.job = s.job;
    ts.taskClass = s.taskClass;
    if (s.specKnown) {
      ts.specKnown = true;
      ts.specStddev = s.specStddev;
    }
    ts.add(s.timeUs, s.cpu >= minCpu ? s.cpi : Double.NaN, s.cpu, s.outlier);
    // Keep what a cap that has not expired at the watermark needs: its time before and during.
    long wm = ctx.timerService().currentWatermark();
    if (wm != Long.MIN_VALUE) {
      ts.evictUpTo(wm * 1000 - beforeUs - 2 * capDurationUs);
    }
    recent.update(ts);
  }

  @Override
  public void processElement2(EnforcementAction a, Context ctx, Collector<CapOutcome> out) throws Exception {
    if (a.getKind() != ActionKind.APPLIED
        || a.getCause() != ActionCause.INCIDENT
        || a.getVictimTask() == null) {
      return;
    }
    CapState c = new CapState();
    c.task = a.getTask();
    c.victimTask = a.getVictimTask();
    c.incidentId = a.getIncidentId();
    c.appliedAtUs = a.getAtUs();
    c.expiresAtUs = a.getExpiresAtUs() != null ? a.getExpiresAtUs() : a.getAtUs() + capDurationUs;
    caps.put(a.getActionId(), c);
    if (c.expiresAtUs / 1000 <= ctx.timerService().currentWatermark()) {
      judgeDue(ctx.getCurrentKey(), ctx.timerService().currentWatermark(), out); // a late action
    } else {
      ctx.timerService().registerEventTimeTimer(c.expiresAtUs / 1000);
    }
  }

  @Override
  public void onTimer(long timestampMs, OnTimerContext ctx, Collector<CapOutcome> out) throws Exception {
    judgeDue(ctx.getCurrentKey(), timestampMs, out);
  }

  /** Judges every cap of this victim that expired at or before {@code timestampMs}. */
  private void judgeDue(String key, long timestampMs, Collector<CapOutcome> out) throws Exception {
    String[] hostTask = key.split("\\|", 2);
    TaskSeries ts = recent.value();
    List<String> done = new ArrayList<>();
    for (Map.Entry<String, CapState> e : caps.entries()) {
      CapState c = e.getValue();
      if (c.expiresAtUs / 1000 > timestampMs) {
        continue;
      }
      done.add(e.getKey());
      double[] before = values(ts, c.appliedAtUs - beforeUs, c.appliedAtUs);
      double[] during = values(ts, c.appliedAtUs, c.expiresAtUs);
      double sigma = ts != null && ts.specKnown ? ts.specStddev : 0;
      OutcomeJudgement.Result r = OutcomeJudgement.judge(before, during, sigma);
      out.collect(
          CapOutcome.newBuilder()
              .setActionId(e.getKey())
              .setIncidentId(c.incidentId)
              .setHost(hostTask[0])
              .setJudgedAtUs(c.expiresAtUs)
              .setVictimTask(c.victimTask)
              .setVictimJob(ts == null || ts.job == null ? "" : ts.job)
              .setVictimClass(taskClass(ts))
              .setAntagonistTask(c.task)
              .setCorrelation(null)
              .setCpiBefore(nanToZero(r.cpiBefore()))
              .setCpiDuring(nanToZero(r.cpiDuring()))
              .setRelativeCpi(nanToZero(r.relative()))
              .setSpecStddev(sigma)
              .setSamplesBefore(r.before())
              .setSamplesDuring(r.during())
              .setVerdict(r.verdict())
              .build());
    }
    for (String k : done) {
      caps.remove(k);
    }
  }

  /** CPI of the samples in [from, to). */
  private static double[] values(TaskSeries ts, long from, long to) {
    if (ts == null) {
      return new double[0];
    }
    double[] out = new double[ts.size()];
    int n = 0;
    for (int i = 0; i < ts.size(); i++) {
      if (ts.times[i] >= from && ts.times[i] < to) {
        out[n++] = ts.cpi[i];
      }
    }
    return java.util.Arrays.copyOf(out, n);
  }

  private static TaskClass taskClass(TaskSeries ts) {
    try {
      return ts == null || ts.taskClass == null ? TaskClass.UNKNOWN : TaskClass.valueOf(ts.taskClass);
    } catch (IllegalArgumentException e) {
      return TaskClass.UNKNOWN;
    }
  }

  private static double nanToZero(double x) {
    return Double.isNaN(x) ? 0 : x;
  }
}
