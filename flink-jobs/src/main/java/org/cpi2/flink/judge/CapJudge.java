package org.cpi2.flink.judge;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.util.OutputTag;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.correlate.TaskSeries;
import org.cpi2.flink.records.CapState;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.schema.ActionCause;
import org.cpi2.schema.ActionKind;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.TaskClass;

/**
 * Paper section 7.2, the correlator's judge of caps (same host key, same series of the host's
 * tasks): every cap applied because of an incident is judged when the watermark passes its expiry,
 * from the victim's CPI while capped against the mean over {@code judge.before-s} before it, with
 * the spec's σ as the margin. Only samples at or above the minimum CPU usage count, as for the
 * spec. The series must reach back {@link #retentionUs} behind the watermark.
 */
public final class CapJudge implements java.io.Serializable {
  private static final long serialVersionUID = 1L;

  /** Side output of the correlator: the judged caps. */
  public static final OutputTag<CapOutcome> OUTCOMES =
      new OutputTag<>("outcomes", RecordTypes.OUTCOME);

  private final long beforeUs;
  private final long capDurationUs;
  private final double minCpu;
  private final Signal signal;
  private transient MapState<String, CapState> judging;

  public CapJudge(Cpi2Options o) {
    this(o, Signal.CPI);
  }

  /**
   * The judge of the caps of {@code signal}'s incidents (whose ids name the signal: {@link
   * Signal#ofIncident}), from that signal's series; {@code o} are the signal's options.
   */
  public CapJudge(Cpi2Options o, Signal signal) {
    this.signal = signal;
    this.beforeUs = o.getLong(Cpi2Options.JUDGE_BEFORE_S) * 1_000_000L;
    this.capDurationUs = o.getLong(Cpi2Options.CAP_DURATION_S) * 1_000_000L;
    this.minCpu = o.getDouble(Cpi2Options.MIN_CPU_USAGE);
  }

  public void open(RuntimeContext rc) {
    judging =
        rc.getMapState(
            new MapStateDescriptor<>(
                "judged-caps", RecordTypes.STATE_STRING, TypeInformation.of(CapState.class)));
  }

  /**
   * How far behind the watermark a cap that has not expired may reach: its time before and during.
   */
  public long retentionUs() {
    return beforeUs + 2 * capDurationUs;
  }

  /**
   * Takes an APPLIED action for an incident; returns the event time (ms) at which to judge it: its
   * expiry. Other actions: Long.MIN_VALUE.
   */
  public long onAction(EnforcementAction a) throws Exception {
    if (a.getKind() != ActionKind.APPLIED
        || a.getCause() != ActionCause.INCIDENT
        || a.getVictimTask() == null
        || Signal.ofIncident(a.getIncidentId()) != signal) {
      return Long.MIN_VALUE;
    }
    CapState c = new CapState();
    c.task = a.getTask();
    c.victimTask = a.getVictimTask();
    c.incidentId = a.getIncidentId();
    c.appliedAtUs = a.getAtUs();
    c.expiresAtUs = a.getExpiresAtUs() != null ? a.getExpiresAtUs() : a.getAtUs() + capDurationUs;
    judging.put(a.getActionId(), c);
    return c.expiresAtUs / 1000;
  }

  /** Judges every cap of the host that expired at or before {@code timestampMs}. */
  public void judgeDue(
      String host, long timestampMs, MapState<String, TaskSeries> series, List<CapOutcome> out)
      throws Exception {
    if (judging.isEmpty()) {
      return;
    }
    List<String> done = new ArrayList<>();
    for (Map.Entry<String, CapState> e : judging.entries()) {
      CapState c = e.getValue();
      if (c.expiresAtUs / 1000 > timestampMs) {
        continue;
      }
      done.add(e.getKey());
      TaskSeries ts = series.get(c.victimTask);
      double[] before = values(ts, c.appliedAtUs - beforeUs, c.appliedAtUs);
      double[] during = values(ts, c.appliedAtUs, c.expiresAtUs);
      double sigma = ts != null && ts.spec != null ? ts.spec.stddev() : 0;
      OutcomeJudgement.Result r = OutcomeJudgement.judge(before, during, sigma);
      out.add(
          CapOutcome.newBuilder()
              .setActionId(e.getKey())
              .setIncidentId(c.incidentId)
              .setHost(host)
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
      judging.remove(k);
    }
  }

  /** CPI of the samples in [from, to) at or above the minimum CPU usage. */
  private double[] values(TaskSeries ts, long from, long to) {
    if (ts == null) {
      return new double[0];
    }
    double[] out = new double[ts.size()];
    int n = 0;
    for (int i = 0; i < ts.size(); i++) {
      if (ts.times[i] >= from
          && ts.times[i] < to
          && ts.cpu[i] >= minCpu
          && Double.isFinite(ts.cpi[i])) {
        out[n++] = ts.cpi[i];
      }
    }
    return Arrays.copyOf(out, n);
  }

  private static TaskClass taskClass(TaskSeries ts) {
    try {
      return ts == null || ts.taskClass == null ? TaskClass.UNKNOWN : ts.taskClass;
    } catch (IllegalArgumentException e) {
      return TaskClass.UNKNOWN;
    }
  }

  private static double nanToZero(double x) {
    return Double.isNaN(x) ? 0 : x;
  }
}
