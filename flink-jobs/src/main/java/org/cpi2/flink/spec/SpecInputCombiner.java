package org.cpi2.flink.spec;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.watermark.Watermark;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.runtime.watermarkstatus.WatermarkStatus;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.logic.PeriodMoments;
import org.cpi2.flink.signal.Signal;
import org.cpi2.schema.CpiSample;

/**
 * The spec builder's input, combined before the shuffle: in the source's thread, the samples that
 * count towards a spec (a finite positive CPI at or above the CPU floor) are summed per (job,
 * platform) and bucket of event time ({@code shift.bucket-s}, within a spec period), with per task
 * the samples it contributed and per host their count, sum and largest value, and leave as one
 * {@link SpecInput} per (job, platform) and bucket. Sent one by one, they would be a second shuffle
 * of every sample.
 *
 * <p>What it holds leaves before anything could need it downstream, so it keeps no state and
 * nothing is lost or counted twice on a restore: before it forwards a watermark that closes a
 * bucket it holds (where the spec builder looks at that bucket, and folds a period that ends
 * there), before it forwards that its input went idle (other inputs may then move the spec
 * builder's watermark on), before every checkpoint barrier, at the end of input, and when it holds
 * {@link #maxTasks} task entries (a bucket's host entries are never more than its task entries).
 */
public final class SpecInputCombiner extends AbstractStreamOperator<SpecInput>
    implements OneInputStreamOperator<CpiSample, SpecInput>, BoundedOneInput {
  private static final long serialVersionUID = 1L;

  /** The samples of one (job, platform) and bucket so far. */
  private static final class Open {
    final String key;
    final long periodEndUs;
    final long bucketEndUs;
    final PeriodMoments moments = new PeriodMoments();
    long maxTimeUs = Long.MIN_VALUE;

    /** Per task: samples, last seen (µs). */
    final HashMap<String, long[]> tasks = new HashMap<>();

    /** Per host: samples, sum of values, largest value. */
    final HashMap<String, double[]> hosts = new HashMap<>();

    Open(String key, long periodEndUs, long bucketEndUs) {
      this.key = key;
      this.periodEndUs = periodEndUs;
      this.bucketEndUs = bucketEndUs;
    }
  }

  private final Signal signal;
  private final double minCpu;
  private final long periodUs;
  private final long bucketUs;
  private final int maxTasks;

  /** The open combinations by job and platform (usually one bucket, two across a boundary). */
  private transient JobPlatformMap<List<Open>> byJobPlatform;

  private transient List<Open> open;
  private transient int taskEntries;

  /** The earliest watermark (ms) at which an open bucket closes. */
  private transient long firstCloseMs;

  private transient Counter emitted;

  /** Task entries held at most by the job's combiner (a few tens of MB). */
  public static final int MAX_TASKS = 200_000;

  /** The job's CPI combiner: the CPU floor and spec period of {@code o}. */
  public static SpecInputCombiner of(Cpi2Options o) {
    return of(o, Signal.CPI);
  }

  /**
   * The combiner of {@code signal}'s spec: its CPU floor, the spec period and shift bucket of
   * {@code o}.
   */
  public static SpecInputCombiner of(Cpi2Options o, Signal signal) {
    return new SpecInputCombiner(
        signal,
        o.forSignal(signal).getDouble(Cpi2Options.MIN_CPU_USAGE),
        o.getLong(Cpi2Options.SPEC_PERIOD_S) * 1_000_000L,
        o.shiftBucketUs(),
        MAX_TASKS);
  }

  /**
   * One bucket per spec period.
   *
   * @param minCpu the CPU floor of the samples that count
   * @param periodUs the spec period
   * @param maxTasks task entries held at most before everything is sent on
   */
  public SpecInputCombiner(double minCpu, long periodUs, int maxTasks) {
    this(Signal.CPI, minCpu, periodUs, periodUs, maxTasks);
  }

  /**
   * @param signal the signal whose values are combined (a sample without it is left out)
   * @param minCpu the CPU floor of the samples that count
   * @param periodUs the spec period
   * @param bucketUs the buckets of event time, a divisor of the spec period
   * @param maxTasks task entries held at most before everything is sent on
   */
  public SpecInputCombiner(
      Signal signal, double minCpu, long periodUs, long bucketUs, int maxTasks) {
    if (periodUs <= 0 || bucketUs <= 0 || periodUs % bucketUs != 0 || maxTasks <= 0) {
      throw new IllegalArgumentException(
          "spec period, bucket (a divisor of the period) and task entries must be positive");
    }
    this.signal = signal;
    this.minCpu = minCpu;
    this.periodUs = periodUs;
    this.bucketUs = bucketUs;
    this.maxTasks = maxTasks;
  }

  @Override
  public void open() throws Exception {
    super.open();
    byJobPlatform = new JobPlatformMap<>();
    open = new ArrayList<>();
    firstCloseMs = Long.MAX_VALUE;
    emitted = getMetricGroup().counter("specInputsSent");
  }

  @Override
  public void processElement(StreamRecord<CpiSample> element) throws Exception {
    CpiSample s = element.getValue();
    Double cpi = signal.value(s);
    double cpu = s.getCpuUsage();
    if (!SpecMath.counts(signal, cpi, cpu, minCpu)) {
      return;
    }
    long t = s.getWindowStartUs();
    long bucketEnd = Math.floorDiv(t, bucketUs) * bucketUs + bucketUs;
    Open o = find(s.getJob(), s.getPlatform(), bucketEnd);
    o.moments.add(cpi, cpu);
    o.maxTimeUs = Math.max(o.maxTimeUs, t);
    double[] host = o.hosts.get(s.getHost()); // never more than the tasks: counted with them
    if (host == null) {
      o.hosts.put(s.getHost(), new double[] {1, cpi, cpi});
    } else {
      host[0]++;
      host[1] += cpi;
      host[2] = Math.max(host[2], cpi);
    }
    long[] task = o.tasks.get(s.getTask());
    if (task == null) {
      o.tasks.put(s.getTask(), new long[] {1, t});
      taskEntries++;
    } else {
      task[0]++;
      task[1] = Math.max(task[1], t);
    }
    if (taskEntries >= maxTasks) {
      sendAll();
    }
  }

  private Open find(String job, String platform, long bucketEnd) {
    List<Open> buckets = byJobPlatform.get(job, platform, null);
    if (buckets == null) {
      buckets = new ArrayList<>(2);
      byJobPlatform.put(job, platform, buckets);
    }
    for (int i = 0; i < buckets.size(); i++) {
      if (buckets.get(i).bucketEndUs == bucketEnd) {
        return buckets.get(i);
      }
    }
    long periodEnd = Math.floorDiv(bucketEnd - 1, periodUs) * periodUs + periodUs;
    Open o = new Open(SpecBuilderFunction.key(job, platform), periodEnd, bucketEnd);
    buckets.add(o);
    open.add(o);
    // The spec builder looks at the bucket (and folds a period that ends with it) when the
    // watermark reaches its end minus 1 ms.
    firstCloseMs = Math.min(firstCloseMs, bucketEnd / 1000 - 1);
    return o;
  }

  /** Sends everything held, in the order it was opened. */
  private void sendAll() {
    for (Open o : open) {
      SpecInput in = new SpecInput();
      in.key = o.key;
      in.periodEndUs = o.periodEndUs;
      in.bucketEndUs = o.bucketEndUs;
      in.count = o.moments.count;
      in.sum = o.moments.sum;
      in.sumSq = o.moments.sumSq;
      in.cpuSum = o.moments.cpuSum;
      int n = o.tasks.size();
      in.tasks = new String[n];
      in.taskSamples = new long[n];
      in.taskLastSeenUs = new long[n];
      int i = 0;
      for (Map.Entry<String, long[]> e : o.tasks.entrySet()) {
        in.tasks[i] = e.getKey();
        in.taskSamples[i] = e.getValue()[0];
        in.taskLastSeenUs[i] = e.getValue()[1];
        i++;
      }
      int h = o.hosts.size();
      in.hosts = new String[h];
      in.hostSamples = new long[h];
      in.hostSum = new double[h];
      in.hostMax = new double[h];
      i = 0;
      for (Map.Entry<String, double[]> e : o.hosts.entrySet()) {
        in.hosts[i] = e.getKey();
        in.hostSamples[i] = (long) e.getValue()[0];
        in.hostSum[i] = e.getValue()[1];
        in.hostMax[i] = e.getValue()[2];
        i++;
      }
      output.collect(new StreamRecord<>(in, o.maxTimeUs / 1000));
      emitted.inc();
    }
    open.clear();
    byJobPlatform.clear();
    taskEntries = 0;
    firstCloseMs = Long.MAX_VALUE;
  }

  @Override
  public void processWatermark(Watermark mark) throws Exception {
    if (mark.getTimestamp() >= firstCloseMs) {
      sendAll();
    }
    super.processWatermark(mark);
  }

  @Override
  public void processWatermarkStatus(WatermarkStatus status) throws Exception {
    if (status.isIdle()) {
      sendAll();
    }
    super.processWatermarkStatus(status);
  }

  @Override
  public void prepareSnapshotPreBarrier(long checkpointId) throws Exception {
    sendAll();
    super.prepareSnapshotPreBarrier(checkpointId);
  }

  @Override
  public void endInput() {
    sendAll();
  }

  @Override
  public void finish() throws Exception {
    sendAll();
    super.finish();
  }
}
