package org.cpi2.flink.functions;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.MapState;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.co.KeyedCoProcessFunction;
import org.apache.flink.util.Collector;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.logic.PeriodMoments;
import org.cpi2.flink.logic.SpecMath;
import org.cpi2.flink.records.TaskCount;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;

/**
 * Builds the CPI spec of one (job, platform), paper section 3.1. Input 1: samples; input 2: specs
 * from the compacted cpi2.specs topic, which seed a fresh deployment (a seed is adopted when it
 * is newer than the spec in state). Samples are accumulated per event-time period; when the
 * watermark passes a period's end the period is folded into the spec with age weighting and the
 * spec is emitted.
 *
 * <p>Late samples: a sample whose period was already folded is not counted (metric
 * {@code lateSamples}); with the bounded out-of-orderness of the watermarks, that is a sample more
 * than that bound late at the very end of a period.
 */
public class SpecBuilderFunction extends KeyedCoProcessFunction<String, CpiSample, CpiSpec, CpiSpec> {
  private static final long serialVersionUID = 1L;

  private final long periodUs;
  private final double ageWeight;
  private final double minCpu;
  private final int minTasks;
  private final long minSamplesPerTask;
  private final long taskTtlS;

  private transient SpecMath math;
  private transient ValueState<CpiSpec> spec;
  private transient ValueState<Integer> seededEligible;
  private transient MapState<Long, PeriodMoments> periods;
  private transient MapState<String, Long> periodTasks;
  private transient MapState<String, TaskCount> samplesPerTask;
  private transient Counter lateSamples;

  public SpecBuilderFunction(Cpi2Options o) {
    this.periodUs = o.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L;
    this.ageWeight = o.getDouble(Cpi2Options.SPEC_AGE_WEIGHT);
    this.minCpu = o.getDouble(Cpi2Options.MIN_CPU_USAGE);
    this.minTasks = o.getInt(Cpi2Options.SPEC_MIN_TASKS);
    this.minSamplesPerTask = o.getLong(Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK);
    this.taskTtlS = o.getLong(Cpi2Options.TASK_TTL_S);
  }

  /** The key of a spec, also its key on the compacted topic. */
  public static String key(String job, String platform) {
    return job + "|" + platform;
  }

  @Override
  public void open(OpenContext ctx) {
    math = new SpecMath(ageWeight, minCpu, minTasks, minSamplesPerTask);
    spec = getRuntimeContext().getState(new ValueStateDescriptor<>("spec", RecordTypes.SPEC));
    seededEligible = getRuntimeContext().getState(new ValueStateDescriptor<>("seeded-eligible", Types.INT));
    periods =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>("periods", Types.LONG, TypeInformation.of(PeriodMoments.class)));
    periodTasks =
        getRuntimeContext().getMapState(new MapStateDescriptor<>("period-tasks", Types.STRING, Types.LONG));
    // No state TTL here: a job's map holds all its tasks, and TTL filtering would visit it whole
    // on every access. Tasks not seen for state.task-ttl-s of event time are dropped at each fold.
    samplesPerTask =
        getRuntimeContext()
            .getMapState(new MapStateDescriptor<>("samples-per-task", Types.STRING, TypeInformation.of(TaskCount.class)));
    lateSamples = getRuntimeContext().getMetricGroup().counter("lateSamples");
  }

  @Override
  public void processElement1(CpiSample s, Context ctx, Collector<CpiSpec> out) throws Exception {
    if (!math.counts(s.getCpi(), s.getCpuUsage())) {
      return;
    }
    long t = s.getWindowStartUs();
    long periodEnd = Math.floorDiv(t, periodUs) * periodUs + periodUs;
    CpiSpec current = spec.value();
    if (current != null && periodEnd <= current.getPeriodEndUs()) {
      lateSamples.inc();
      return;
    }
    PeriodMoments m = periods.get(periodEnd);
    if (m == null) {
      m = new PeriodMoments();
      ctx.timerService().registerEventTimeTimer(periodEnd / 1000 - 1);
    }
    m.add(s.getCpi(), s.getCpuUsage());
    periods.put(periodEnd, m);
    String pt = periodEnd + "|" + s.getTask();
    Long n = periodTasks.get(pt);
    periodTasks.put(pt, n == null ? 1 : n + 1);
    TaskCount h = samplesPerTask.get(s.getTask());
    if (h == null) {
      h = new TaskCount();
    }
    h.count++;
    h.lastSeenUs = Math.max(h.lastSeenUs, t);
    samplesPerTask.put(s.getTask(), h);
  }

  @Override
  public void processElement2(CpiSpec seed, Context ctx, Collector<CpiSpec> out) throws Exception {
    CpiSpec current = spec.value();
    if (current == null || seed.getPeriodEndUs() > current.getPeriodEndUs()) {
      spec.update(seed);
      seededEligible.update(seed.getEligibleTasks());
      out.collect(seed);
    }
  }

  @Override
  public void onTimer(long timestampMs, OnTimerContext ctx, Collector<CpiSpec> out) throws Exception {
    long end = (timestampMs + 1) * 1000;
    List<Long> due = new ArrayList<>();
    for (Long p : periods.keys()) {
      if (p <= end) {
        due.add(p);
      }
    }
    due.sort(Long::compare);
    String[] jobPlatform = ctx.getCurrentKey().split("\\|", 2);
    for (long p : due) {
      PeriodMoments m = periods.get(p);
      periods.remove(p);
      int tasks = takePeriodTasks(p);
      int eligible = eligibleTasks(p);
      Integer seeded = seededEligible.value();
      if (seeded != null) {
        // After a seed, history restarts empty: keep the seed's eligibility until it catches up.
        if (eligible >= seeded) {
          seededEligible.clear();
        } else {
          eligible = seeded;
        }
      }
      CpiSpec previous = spec.value();
      if (previous != null && p <= previous.getPeriodEndUs()) {
        lateSamples.inc(m.count);
        continue; // a newer seed arrived meanwhile
      }
      CpiSpec next = math.fold(previous, jobPlatform[0], jobPlatform[1], p, m, tasks, eligible);
      spec.update(next);
      out.collect(next);
    }
  }

  /** Tasks with enough samples, after dropping tasks not seen for the task TTL before {@code periodEnd}. */
  private int eligibleTasks(long periodEnd) throws Exception {
    Map<String, Long> counts = new HashMap<>();
    Iterator<Map.Entry<String, TaskCount>> it = samplesPerTask.iterator();
    while (it.hasNext()) {
      Map.Entry<String, TaskCount> e = it.next();
      if (e.getValue().lastSeenUs < periodEnd - taskTtlS * 1_000_000L) {
        it.remove();
      } else {
        counts.put(e.getKey(), e.getValue().count);
      }
    }
    return math.eligibleTasks(counts.entrySet());
  }

  private int takePeriodTasks(long period) throws Exception {
    String prefix = period + "|";
    int n = 0;
    Iterator<Map.Entry<String, Long>> it = periodTasks.iterator();
    while (it.hasNext()) {
      if (it.next().getKey().startsWith(prefix)) {
        n++;
        it.remove();
      }
    }
    return n;
  }
}
