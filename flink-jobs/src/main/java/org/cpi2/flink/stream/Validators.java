package org.cpi2.flink.stream;

import org.cpi2.flink.signal.Signal;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.EnforcementAction;

/**
 * Checks that decoded records make sense before they reach state; each returns a reason or null.
 */
public final class Validators {
  private Validators() {}

  public static String sample(CpiSample s) {
    if (s.getHost().isEmpty() || s.getTask().isEmpty() || s.getJob().isEmpty()) {
      return "CpiSample without host, task or job";
    }
    if (s.getPlatform().isEmpty()) {
      return "CpiSample without platform";
    }
    if (!Double.isFinite(s.getCpuUsage()) || s.getCpuUsage() < 0) {
      return "CpiSample with invalid cpu_usage " + s.getCpuUsage();
    }
    if (s.getWindowStartUs() <= 0 || s.getWindowUs() <= 0) {
      return "CpiSample with invalid window " + s.getWindowStartUs() + "+" + s.getWindowUs();
    }
    if (s.getCpi() != null && !(s.getCpi() > 0 && Double.isFinite(s.getCpi()))) {
      return "CpiSample with invalid cpi " + s.getCpi();
    }
    for (Signal signal : Signal.values()) {
      Double v = signal.value(s);
      if (signal != Signal.CPI && v != null && !signal.valid(v)) {
        return "CpiSample with invalid " + signal.wireName() + " " + v;
      }
    }
    return null;
  }

  public static String action(EnforcementAction a) {
    if (a.getHost().isEmpty() || a.getTask().isEmpty()) {
      return "EnforcementAction without host or task";
    }
    return null;
  }
}
