package org.cpi2.flink.correlate;

import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.TaskClass;

/** Builds {@link TaskSeries} for tests: samples every 60 s starting at 60 s. */
final class Series {
  static final long MIN = 60_000_000L;

  private Series() {}

  static TaskSeries of(String task, String taskClass, double[] cpi, double[] cpu) {
    TaskSeries s = new TaskSeries();
    s.task = task;
    s.job = task.replaceAll("/.*", "");
    s.platform = "p1";
    s.taskClass = TaskClass.valueOf(taskClass);
    for (int i = 0; i < cpu.length; i++) {
      s.add((i + 1) * MIN, cpi == null ? Double.NaN : cpi[i], cpu[i], false);
    }
    return s;
  }

  static TaskSeries victim(String task, double[] cpi, double[] cpu, double mean, double sd) {
    TaskSeries s = of(task, "LATENCY_SENSITIVE", cpi, cpu);
    s.spec = new SpecVerdict(true, mean, sd, mean + 2 * sd);
    return s;
  }

  static double[] alternate(double a, double b, int n) {
    double[] out = new double[n];
    for (int i = 0; i < n; i++) {
      out[i] = i % 2 == 0 ? a : b;
    }
    return out;
  }

  static double[] constant(double a, int n) {
    return alternate(a, a, n);
  }
}
