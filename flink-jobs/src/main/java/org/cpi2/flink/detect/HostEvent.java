package org.cpi2.flink.detect;

import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.types.SerializerTypeInfo;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.EnforcementAction;

/**
 * One event of a host, for the host-keyed part of the job (detector, then correlator and judge,
 * chained in one thread): a sample as decoded, a sample as the detector judged it, or an enforcer's
 * action. Exactly one field is set. A sample as decoded carries only what the detector and the
 * correlator read ({@link ScoredSample#of}), not the whole CpiSample: every sample crosses the
 * shuffle to the detector, and the counters, the task id and the optional fields would be a large
 * part of its bytes and of the detector thread's CPU to read back. Samples and actions travel in
 * one stream so that the correlator has a single input and can be chained to the detector without
 * another shuffle. Travels with its own serializer ({@link
 * org.cpi2.flink.types.HostEventSerializer}); never in state.
 */
@TypeInfo(SerializerTypeInfo.HostEventFactory.class)
public final class HostEvent {
  /** A sample not judged yet: {@link ScoredSample#of}, the judgement fields unset. */
  public ScoredSample sample;

  /** A sample as the detector judged it. */
  public ScoredSample scored;

  public EnforcementAction action;

  public HostEvent() {}

  /** The sample, to be judged: its fields the detector reads. */
  public static HostEvent of(CpiSample s) {
    return of(s, Signal.CPI);
  }

  /** The sample, to be judged on {@code signal}. */
  public static HostEvent of(CpiSample s, Signal signal) {
    HostEvent e = new HostEvent();
    e.sample = ScoredSample.of(s, signal);
    return e;
  }

  public static HostEvent of(ScoredSample s) {
    HostEvent e = new HostEvent();
    e.scored = s;
    return e;
  }

  public static HostEvent of(EnforcementAction a) {
    HostEvent e = new HostEvent();
    e.action = a;
    return e;
  }

  /** The host the event belongs to: the key of the host-keyed operators. */
  public String host() {
    if (sample != null) {
      return sample.host;
    }
    return scored != null ? scored.host : action.getHost();
  }

  @Override
  public String toString() {
    return "HostEvent"
        + (sample != null
            ? "(sample " + sample.task + " at " + sample.timeUs + ")"
            : scored != null ? "(scored)" : "(action " + action + ")");
  }
}
