package org.cpi2.flink;

import org.cpi2.schema.ActionCause;
import org.cpi2.schema.ActionKind;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.TaskClass;

/** Records for tests. Times are in microseconds; MIN is one minute. */
public final class Fixtures {
  public static final long MIN = 60_000_000L;

  private Fixtures() {}

  public static CpiSample sample(
      String host, String task, TaskClass c, long tUs, Double cpi, double cpu) {
    return CpiSample.newBuilder()
        .setHost(host)
        .setTask(task)
        .setJob(task.replaceAll("/.*", ""))
        .setTaskId(task.replaceAll(".*/", ""))
        .setPlatform("p1")
        .setTaskClass(c)
        .setIsProtected(false)
        .setWindowStartUs(tUs)
        .setWindowUs(10_000_000L)
        .setCycles(1000)
        .setInstructions(1000)
        .setCounterSource(CounterSource.SIMULATED)
        .setTimeRunningRatio(1.0)
        .setCpuUsage(cpu)
        .setCpi(cpi)
        .build();
  }

  public static EnforcementAction applied(
      String id, String host, String task, String victim, long atUs, long expiresUs) {
    return EnforcementAction.newBuilder()
        .setActionId(id)
        .setHost(host)
        .setAtUs(atUs)
        .setKind(ActionKind.APPLIED)
        .setCause(ActionCause.INCIDENT)
        .setTask(task)
        .setIncidentId("inc-" + id)
        .setVictimTask(victim)
        .setVictimJob(victim.replaceAll("/.*", ""))
        .setCapCpu(0.01)
        .setExpiresAtUs(expiresUs)
        .build();
  }

  /** Options for tests: defaults with the given name/value pairs. */
  public static Cpi2Options options(String... nameValues) {
    Cpi2Options o = Cpi2Options.defaults();
    for (int i = 0; i < nameValues.length; i += 2) {
      o = o.with(nameValues[i], nameValues[i + 1]);
    }
    return o;
  }
}
