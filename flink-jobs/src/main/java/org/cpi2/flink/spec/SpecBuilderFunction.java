package org.cpi2.flink.spec;

import java.util.ArrayList;
import java.util.HashMap;
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
import org.cpi2.flink.records.BucketHosts;
import org.cpi2.flink.records.TaskCount;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.schema.CpiSpec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Builds the CPI spec of one (job, platform), paper section 3.1. Input 1: the samples that count
 * towards a spec, combined per bucket of event time before the shuffle ({@link SpecInputCombiner});
 * input 2: specs from the compacted cpi2.specs topic, which seed a fresh deployment (a seed is
 * adopted when it is newer than the spec in state). Samples are accumulated per event-time period;
 * when the watermark passes a period's end the period is folded into the spec with age weighting
 * and the spec is emitted.
 *
 * <p>Job-wide shifts ({@link JobShift}): a bucket is held until the watermark passes its end, then
 * compared, host by host, with the spec in force before it joins its period. When the job as a
 * whole moved off the spec, the spec is re-baselined (its moments and those of the open period so
 * far scaled by the ratio of the job's new level to its mean) and emitted at once with {@code
 * shift_ratio} and {@code shift_share}, in force from the end of the bucket after (its {@code
 * period_end_us}): the detector judges a sample only once the watermark has passed the start of the
 * bucket before the sample's, so every sample of a later bucket sees it, whenever it arrives.
 *
 * <p>Late samples: a sample whose period was already folded is not counted (metric {@code
 * lateSamples}); with the bounded out-of-orderness of the watermarks, that is a sample more than
 * that bound late at the very end of a period.
 */
public class SpecBuilderFunction
    extends KeyedCoProcessFunction<String, SpecInput, CpiSpec, CpiSpec> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(SpecBuilderFunction.class);

  private final long periodUs;
  private final double ageWeight;
  private final double minCpu;
  private final int minTasks;
  private final long minSamplesPerTask;
  private final long taskTtlS;
  private final long bucketUs;
  private final Signal signal;
  private final JobShift jobShift;

  private transient SpecMath math;
  private transient ValueState<CpiSpec> spec;
  private transient ValueState<Integer> seededEligible;
  private transient ValueState<Long> seedEndUs;
  private transient MapState<Long, PeriodMoments> periods;
  private transient MapState<Long, BucketHosts> buckets;
  private transient Counter shifts;
  private transient MapState<String, TaskCount> samplesPerTask;
  private transient Counter lateSamples;
  private transient Counter seedsDropped;

  public SpecBuilderFunction(Cpi2Options o) {
    this(o, Signal.CPI);
  }

  /**
   * The spec builder of {@code signal}, with that signal's options ({@link Cpi2Options#forSignal}).
   */
  public SpecBuilderFunction(Cpi2Options options, Signal signal) {
    Cpi2Options o = options.forSignal(signal);
    this.signal = signal;
    this.periodUs = o.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L;
    this.ageWeight = o.specAgeWeight();
    if (o.explicitAgeWeight()) {
      LOG.info(
          "spec builder {}: {} {} per period wins over {} {}",
          signal.wireName(),
          Cpi2Options.SPEC_AGE_WEIGHT,
          ageWeight,
          Cpi2Options.SPEC_AGE_WEIGHT_PER_DAY,
          o.get(Cpi2Options.SPEC_AGE_WEIGHT_PER_DAY));
    }
    this.minCpu = o.getDouble(Cpi2Options.MIN_CPU_USAGE);
    this.minTasks = o.getInt(Cpi2Options.SPEC_MIN_TASKS);
    this.minSamplesPerTask = o.getLong(Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK);
    this.taskTtlS = o.getLong(Cpi2Options.TASK_TTL_S);
    this.bucketUs = o.shiftBucketUs();
    this.jobShift =
        new JobShift(
            o.getDouble(Cpi2Options.OUTLIER_SIGMAS),
            o.getDouble(Cpi2Options.OUTLIER_FLOOR),
            o.getDouble(Cpi2Options.SHIFT_MIN_SHARE),
            o.getInt(Cpi2Options.SHIFT_MIN_HOSTS));
  }

  /** The key of a spec in the spec builder. */
  public static String key(String job, String platform) {
    return job + "|" + platform;
  }

  /**
   * A spec's key on the compacted topic: job|platform for CPI, as it always was,
   * job|platform|signal for the others, so that compaction keeps the latest of each.
   */
  public static String topicKey(CpiSpec s) {
    String k = key(s.getJob(), s.getPlatform());
    return Signal.CPI.wireName().equals(s.getSignal()) ? k : k + "|" + s.getSignal();
  }

  @Override
  public void open(OpenContext ctx) {
    math = new SpecMath(ageWeight, minCpu, minTasks, minSamplesPerTask);
    spec = getRuntimeContext().getState(new ValueStateDescriptor<>("spec", RecordTypes.SPEC));
    seededEligible =
        getRuntimeContext().getState(new ValueStateDescriptor<>("seeded-eligible", Types.INT));
    seedEndUs = getRuntimeContext().getState(new ValueStateDescriptor<>("seed-end", Types.LONG));
    periods =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "periods", Types.LONG, TypeInformation.of(PeriodMoments.class)));
    // No state TTL here: a job's map holds all its tasks, and TTL filtering would visit it whole
    // on every access. Tasks not seen for state.task-ttl-s of event time are dropped at each fold.
    samplesPerTask =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "samples-per-task",
                    RecordTypes.STATE_STRING,
                    TypeInformation.of(TaskCount.class)));
    buckets =
        getRuntimeContext()
            .getMapState(
                new MapStateDescriptor<>(
                    "shift-buckets", Types.LONG, TypeInformation.of(BucketHosts.class)));
    shifts = getRuntimeContext().getMetricGroup().counter("jobShifts");
    lateSamples = getRuntimeContext().getMetricGroup().counter("lateSamples");
    seedsDropped = getRuntimeContext().getMetricGroup().counter("seedsDropped");
  }

  @Override
  public void processElement1(SpecInput in, Context ctx, Collector<CpiSpec> out) throws Exception {
    long periodEnd = in.periodEndUs;
    CpiSpec current = spec.value();
    Long seedEnd = seedEndUs.value();
    if (seedEnd != null) {
      // The spec in state is a seed the data has not reached yet: this input decides.
      seedEndUs.clear();
      if (periodEnd <= seedEnd) {
        spec.clear(); // the data is older than the seed: build from the data
        seededEligible.clear();
        seedsDropped.inc();
        current = null;
      } else {
        out.collect(current); // the data is past the seed: it is in force, for the detector too
      }
    }
    if (current != null && periodEnd <= current.getPeriodEndUs()) {
      lateSamples.inc(in.count);
      return;
    }
    long wm = ctx.timerService().currentWatermark();
    if (jobShift.enabled()
        && in.bucketEndUs > 0
        && (wm == Long.MIN_VALUE || wm < in.bucketEndUs / 1000 - 1)) {
      // Held until the watermark passes the bucket's end, to be compared with the spec first.
      BucketHosts b = buckets.get(in.bucketEndUs);
      if (b == null) {
        b = new BucketHosts();
        b.periodEndUs = periodEnd;
        ctx.timerService().registerEventTimeTimer(in.bucketEndUs / 1000 - 1);
        ctx.timerService().registerEventTimeTimer(periodEnd / 1000 - 1);
      }
      b.count += in.count;
      b.sum += in.sum;
      b.sumSq += in.sumSq;
      b.cpuSum += in.cpuSum;
      b.addHosts(in.hosts, in.hostSamples, in.hostSum, in.hostMax);
      buckets.put(in.bucketEndUs, b);
    } else {
      addToPeriod(periodEnd, in.count, in.sum, in.sumSq, in.cpuSum, ctx);
    }
    for (int i = 0; i < in.tasks.length; i++) {
      TaskCount h = samplesPerTask.get(in.tasks[i]);
      if (h == null) {
        h = new TaskCount();
      }
      h.count += in.taskSamples[i];
      h.lastSeenUs = Math.max(h.lastSeenUs, in.taskLastSeenUs[i]);
      h.seenIn(periodEnd);
      samplesPerTask.put(in.tasks[i], h);
    }
  }

  /**
   * A seed (the latest spec of a previous deployment, from the compacted topic) is adopted when it
   * is newer than the spec in state and no sample of a period it covers waits to be folded, and it
   * is published (to the detector and the sinks) when the first sample after its period comes: the
   * data has reached its time. A first sample of a period the seed covers means the data is older
   * than the seed (a replay of older history, or a simulated fleet that starts its clock again):
   * the seed is dropped and the spec built from the data. Otherwise every such sample would be
   * late, and the detector, judging each sample by the spec in force at its time, would find none
   * (metric {@code seedsDropped}).
   */
  @Override
  public void processElement2(CpiSpec seed, Context ctx, Collector<CpiSpec> out) throws Exception {
    CpiSpec current = spec.value();
    if (current != null && seed.getPeriodEndUs() <= current.getPeriodEndUs()) {
      return;
    }
    for (Long p : periods.keys()) {
      if (p <= seed.getPeriodEndUs()) {
        seedsDropped.inc();
        return; // samples of the seed's periods are here: the data is older than the seed
      }
    }
    for (BucketHosts b : buckets.values()) {
      if (b.periodEndUs <= seed.getPeriodEndUs()) {
        seedsDropped.inc();
        return; // the same, still held in their bucket
      }
    }
    spec.update(seed);
    seedEndUs.update(seed.getPeriodEndUs());
    seededEligible.update(seed.getEligibleTasks());
  }

  private void addToPeriod(
      long periodEnd, long count, double sum, double sumSq, double cpuSum, Context ctx)
      throws Exception {
    PeriodMoments m = periods.get(periodEnd);
    if (m == null) {
      m = new PeriodMoments();
      ctx.timerService().registerEventTimeTimer(periodEnd / 1000 - 1);
    }
    m.add(count, sum, sumSq, cpuSum);
    periods.put(periodEnd, m);
  }

  /**
   * The buckets that end at or before {@code end}, oldest first: each compared with the spec in
   * state (re-baselining it on a job-wide shift), then added to its period. The shifted spec to
   * emit, or null.
   */
  private CpiSpec shiftBuckets(long end, Context ctx) throws Exception {
    List<Long> due = new ArrayList<>();
    for (Long b : buckets.keys()) {
      if (b <= end) {
        due.add(b);
      }
    }
    due.sort(Long::compare);
    CpiSpec shifted = null;
    for (long bucketEnd : due) {
      BucketHosts b = buckets.get(bucketEnd);
      buckets.remove(bucketEnd);
      CpiSpec current = spec.value();
      JobShift.Shift found = seedEndUs.value() == null ? jobShift.find(current, b) : null;
      if (found != null) {
        spec.update(JobShift.rescale(current, found.ratio()));
        double r = found.ratio();
        for (Map.Entry<Long, PeriodMoments> e : periods.entries()) {
          if (e.getKey() > current.getPeriodEndUs()) { // open: the samples before the shift
            PeriodMoments m = e.getValue();
            m.sum *= r;
            m.sumSq *= r * r;
            periods.put(e.getKey(), m);
          }
        }
        shifts.inc();
        LOG.info(
            "spec builder {}: {} shifted x{} ({} of {} hosts off its spec in the bucket ending"
                + " {} us); re-baselined from {} us",
            signal.wireName(),
            ctx.getCurrentKey(),
            String.format("%.3f", r),
            found.hostsOff(),
            found.hosts(),
            bucketEnd,
            bucketEnd + bucketUs);
        shifted =
            CpiSpec.newBuilder(spec.value())
                .setPeriodEndUs(bucketEnd + bucketUs)
                .setShiftRatio(r)
                .setShiftShare(found.share())
                .build();
      }
      addToPeriod(b.periodEndUs, b.count, b.sum, b.sumSq, b.cpuSum, ctx);
    }
    return shifted;
  }

  @Override
  public void onTimer(long timestampMs, OnTimerContext ctx, Collector<CpiSpec> out)
      throws Exception {
    long end = (timestampMs + 1) * 1000;
    CpiSpec shifted = shiftBuckets(end, ctx);
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
      int[] counted = countTasks(p);
      int tasks = counted[0];
      int eligible = counted[1];
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
        continue; // folded already
      }
      seedEndUs.clear(); // a seed in state is folded on: the data is past it
      CpiSpec next = math.fold(previous, jobPlatform[0], jobPlatform[1], p, m, tasks, eligible);
      next.setSignal(signal.wireName());
      spec.update(next);
      out.collect(next);
    }
    if (shifted != null) {
      // What the state holds now: after a fold at the same time, the re-baselined spec has it.
      out.collect(
          CpiSpec.newBuilder(spec.value())
              .setPeriodEndUs(shifted.getPeriodEndUs())
              .setShiftRatio(shifted.getShiftRatio())
              .setShiftShare(shifted.getShiftShare())
              .setSignal(signal.wireName())
              .build());
    }
  }

  /**
   * The tasks that reported in the period ending at {@code periodEnd} (which is then forgotten),
   * and the tasks with enough samples, after dropping tasks not seen for the task TTL before it.
   */
  private int[] countTasks(long periodEnd) throws Exception {
    Map<String, Long> counts = new HashMap<>();
    List<Map.Entry<String, TaskCount>> changed = new ArrayList<>();
    List<String> gone = new ArrayList<>();
    int inPeriod = 0;
    for (Map.Entry<String, TaskCount> e : samplesPerTask.entries()) {
      TaskCount c = e.getValue();
      if (c.forget(periodEnd)) {
        inPeriod++;
        changed.add(e);
      }
      if (c.lastSeenUs < periodEnd - taskTtlS * 1_000_000L) {
        gone.add(e.getKey());
      } else {
        counts.put(e.getKey(), c.count);
      }
    }
    for (Map.Entry<String, TaskCount> e : changed) {
      samplesPerTask.put(e.getKey(), e.getValue());
    }
    for (String k : gone) {
      samplesPerTask.remove(k);
    }
    return new int[] {inPeriod, math.eligibleTasks(counts.entrySet())};
  }
}
