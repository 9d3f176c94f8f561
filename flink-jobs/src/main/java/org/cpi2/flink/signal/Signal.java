package org.cpi2.flink.signal;

import java.util.ArrayList;
import java.util.List;
import org.cpi2.schema.CpiSample;

/**
 * What a spec is learned of and an outlier is judged on (ARCHITECTURE.md "Signals"): CPI, the
 * paper's signal, or one of CpiSample's signals measured without a PMU. Each runs the same spec /
 * outlier / anomaly / correlation machinery in operators of its own, keyed per job x platform
 * (specs) and host (detector, correlator) like CPI's. A sample without the signal (null) never
 * enters its spec nor its detector. The name is the CpiSample field, and the value of
 * Incident.signal and CpiSpec.signal.
 */
public enum Signal {
  CPI("cpi", 0.0),
  CPU_PRESSURE("cpu_pressure", 1.0),
  MEMORY_PRESSURE("memory_pressure", 1.0),
  LLC_MPKI("llc_mpki", Double.MAX_VALUE),
  CPU_PER_OP("cpu_per_op", Double.MAX_VALUE),
  LATENCY("latency", Double.MAX_VALUE);

  private final String wireName;
  private final double max;

  Signal(String wireName, double max) {
    this.wireName = wireName;
    this.max = max;
  }

  /** The name on the wire and in options: the CpiSample field's. */
  public String wireName() {
    return wireName;
  }

  /** The signal's value in {@code s}; null where the sample does not carry it. */
  public Double value(CpiSample s) {
    switch (this) {
      case CPU_PRESSURE:
        return s.getCpuPressure();
      case MEMORY_PRESSURE:
        return s.getMemoryPressure();
      case LLC_MPKI:
        return s.getLlcMpki();
      case CPU_PER_OP:
        return s.getCpuPerOp();
      case LATENCY:
        return s.getLatency();
      default:
        return s.getCpi();
    }
  }

  /**
   * Whether {@code v} is a value the signal can take: CPI finite and positive, a pressure a share
   * in [0, 1], MPKI, CPU per unit of work and latency finite and at least 0.
   */
  public boolean valid(Double v) {
    if (v == null || !Double.isFinite(v)) {
      return false;
    }
    return this == CPI ? v > 0 : v >= 0 && v <= max;
  }

  /**
   * Whether a victim's value rising as its own CPU usage falls can mean self-inflicted spikes
   * (paper 6.1, case 3; the correlator's self-inflicted rule): for CPI and MPKI, rates per
   * instruction that are noisy when a task runs little, and CPU per unit of work, whose fixed costs
   * (timers, the exporter's scrapes) weigh more per request when the service has fewer requests.
   * Not for a pressure, the share of the window the task waited: a task kept waiting is kept from
   * running, so an antagonist that raises its pressure lowers its usage; the rule would clear every
   * antagonist of starving it. Nor for latency, which a starved server shows in the same way.
   */
  public boolean selfInflictedByOwnUsage() {
    return this == CPI || this == LLC_MPKI || this == CPU_PER_OP;
  }

  /**
   * Whether the signal is measured for some tasks of a host only: CPU per unit of work and latency
   * come from a task's own metrics endpoint, which its neighbours (the suspects: batch tasks) do
   * not have. Every sample of the fleet then reaches the signal's detector and correlator, for the
   * neighbours' CPU usage (which costs the correlator a series of every task, hence such signals
   * are asked for with --signals, not on by default). The machine's signals (CPI, PSI, resctrl, the
   * PMU) are measured for all of a host's tasks or for none, so their operators take only the
   * samples that carry them.
   */
  public boolean perTask() {
    return this == CPU_PER_OP || this == LATENCY;
  }

  /**
   * The id prefix of the incidents this signal's analyses issue: none for CPI (its ids are as they
   * always were), {@code name:} for the others, so that each correlator judges only the caps of its
   * own incidents (an enforcer's action names its incident).
   */
  public String incidentPrefix() {
    return this == CPI ? "" : wireName + ":";
  }

  /** The signal whose analysis issued the incident {@code incidentId}. */
  public static Signal ofIncident(String incidentId) {
    if (incidentId != null) {
      int colon = incidentId.indexOf(':');
      if (colon > 0) {
        Signal s = byName(incidentId.substring(0, colon));
        if (s != null) {
          return s;
        }
      }
    }
    return CPI;
  }

  /** The signal named {@code name} (its wire name), or null. */
  public static Signal byName(String name) {
    for (Signal s : values()) {
      if (s.wireName.equals(name)) {
        return s;
      }
    }
    return null;
  }

  /** The signals a comma-separated list names, in the order of this enum (CPI first). */
  public static List<Signal> parseList(String list) {
    List<Signal> named = new ArrayList<>();
    for (String part : list.split(",")) {
      String name = part.trim();
      if (name.isEmpty()) {
        continue;
      }
      Signal s = byName(name);
      if (s == null) {
        List<String> known = new ArrayList<>();
        for (Signal k : values()) {
          known.add(k.wireName);
        }
        throw new IllegalArgumentException(
            "unknown signal " + name + "; known: " + String.join(", ", known));
      }
      named.add(s);
    }
    List<Signal> out = new ArrayList<>();
    for (Signal s : values()) {
      if (named.contains(s)) {
        out.add(s);
      }
    }
    return out;
  }
}
