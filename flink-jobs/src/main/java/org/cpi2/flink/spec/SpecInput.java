package org.cpi2.flink.spec;

import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.cpi2.flink.types.SerializerTypeInfo;

/**
 * What the spec builder gets: the samples of one (job, platform) and one bucket of event time
 * ({@code shift.bucket-s}, the sampling period; spec periods end where buckets end) that count
 * towards the spec, combined before the shuffle by {@link org.cpi2.flink.spec.SpecInputCombiner}:
 * their CPI moments, per task how many samples it contributed and when it was last seen, and per
 * host how many, their sum and their largest (what tells a change of the whole job from one of a
 * few hosts). One sample is a SpecInput with count 1. Travels with its own serializer ({@link
 * org.cpi2.flink.types.SpecInputSerializer}); never in state.
 */
@TypeInfo(SerializerTypeInfo.SpecInputFactory.class)
public final class SpecInput {
  private static final String[] NO_TASKS = new String[0];
  private static final long[] NO_LONGS = new long[0];
  private static final double[] NO_DOUBLES = new double[0];

  /** The spec's key, {@code job|platform}. */
  public String key;

  /** The end (exclusive, µs) of the spec period of every sample here. */
  public long periodEndUs;

  /** The end (exclusive, µs) of the bucket of every sample here; at or before periodEndUs. */
  public long bucketEndUs;

  public long count;
  public double sum;
  public double sumSq;
  public double cpuSum;

  /** Parallel arrays, one entry per task. */
  public String[] tasks = NO_TASKS;

  public long[] taskSamples = NO_LONGS;
  public long[] taskLastSeenUs = NO_LONGS;

  /** Parallel arrays, one entry per host: its samples, their values' sum and largest value. */
  public String[] hosts = NO_TASKS;

  public long[] hostSamples = NO_LONGS;
  public double[] hostSum = NO_DOUBLES;
  public double[] hostMax = NO_DOUBLES;

  public SpecInput() {}

  /**
   * The input of one sample of host {@code "h"} in the bucket that ends with the spec period:
   * {@code cpi} and {@code cpu} must count towards the spec.
   */
  public static SpecInput ofSample(
      String key, long periodEndUs, String task, long timeUs, double cpi, double cpu) {
    return ofSample(key, periodEndUs, periodEndUs, "h", task, timeUs, cpi, cpu);
  }

  /** The input of one sample: {@code cpi} and {@code cpu} must count towards the spec. */
  public static SpecInput ofSample(
      String key,
      long periodEndUs,
      long bucketEndUs,
      String host,
      String task,
      long timeUs,
      double cpi,
      double cpu) {
    SpecInput s = new SpecInput();
    s.key = key;
    s.periodEndUs = periodEndUs;
    s.bucketEndUs = bucketEndUs;
    s.hosts = new String[] {host};
    s.hostSamples = new long[] {1};
    s.hostSum = new double[] {cpi};
    s.hostMax = new double[] {cpi};
    s.count = 1;
    s.sum = cpi;
    s.sumSq = cpi * cpi;
    s.cpuSum = cpu;
    s.tasks = new String[] {task};
    s.taskSamples = new long[] {1};
    s.taskLastSeenUs = new long[] {timeUs};
    return s;
  }
}
