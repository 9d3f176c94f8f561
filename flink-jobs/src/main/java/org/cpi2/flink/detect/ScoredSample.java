package org.cpi2.flink.detect;

import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.types.SerializerTypeInfo;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;

/**
 * A sample judged against its job's spec by the anomaly detector: whether it is an outlier and
 * whether it made its task anomalous, with the spec it was judged against. {@code cpi} is the value
 * of the signal its detector runs on (CPI, or another signal: org.cpi2.flink.signal.Signal). Flat
 * so that the correlator and the judge keep only what they need. CPI is NaN when the sample had
 * none. Travels with its own serializer ({@link org.cpi2.flink.types.ScoredSampleSerializer});
 * never in state.
 */
@TypeInfo(SerializerTypeInfo.ScoredSampleFactory.class)
public class ScoredSample {
  public String host;
  public String task;
  public String job;
  public String platform;
  public TaskClass taskClass;
  public boolean isProtected;
  public long timeUs;
  public double cpi;
  public double cpu;
  public boolean outlier;
  public boolean anomalous;

  /**
   * Not an outlier against its spec, a re-baselined one (CpiSpec.shift_ratio), but one against the
   * spec before that re-baseline: its job as a whole moved. With {@link #anomalous}: the task would
   * have been anomalous but for its job's shift (its analysis says JOB_WIDE_SHIFT, once a shift).
   */
  public boolean shifted;

  /** The spec it was judged against; null when none was known. */
  public SpecVerdict spec;

  public ScoredSample() {}

  /** The sample's fields with its CPI; the judgement fields are left unset. */
  public static ScoredSample of(CpiSample s) {
    return of(s, Signal.CPI);
  }

  /**
   * The sample's fields, with {@code signal}'s value in {@link #cpi} (NaN where the sample has
   * none); the judgement fields are left unset.
   */
  public static ScoredSample of(CpiSample s, Signal signal) {
    ScoredSample o = new ScoredSample();
    o.host = s.getHost();
    o.task = s.getTask();
    o.job = s.getJob();
    o.platform = s.getPlatform();
    o.taskClass = s.getTaskClass();
    o.isProtected = s.getIsProtected();
    o.timeUs = s.getWindowStartUs();
    Double v = signal.value(s);
    o.cpi = v == null ? Double.NaN : v;
    o.cpu = s.getCpuUsage();
    return o;
  }
}
