package org.cpi2.flink.records;

import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.cpi2.flink.types.SerializerTypeInfo;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.EnforcementAction;

/**
 * One event of a host, for the host-keyed part of the job (detector, then correlator and judge,
 * chained in one thread): a sample as decoded, a sample as the detector judged it, or an
 * enforcer's action. Exactly one field is set. Samples and actions travel in one stream so that
 * the correlator has a single input and can be chained to the detector without another shuffle.
 * Travels with its own serializer ({@link org.cpi2.flink.types.HostEventSerializer}); never in
 * state.
 */
@TypeInfo(SerializerTypeInfo.HostEventFactory.class)
public final class HostEvent {
  public CpiSample sample;
  public ScoredSample scored;
  public EnforcementAction action;

  public HostEvent() {}

  public static HostEvent of(CpiSample s) {
    HostEvent e = new HostEvent();
    e.sample = s;
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
      return sample.getHost();
    }
    return scored != null ? scored.host : action.getHost();
  }

  @Override
  public String toString() {
    return "HostEvent" + (sample != null ? "(sample " + sample + ")" : scored != null ? "(scored)" : "(action " + action + ")");
  }
}
