package org.cpi2.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.schema.Decision;
import org.cpi2.schema.Incident;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The job's own counters, as a metric reporter (Flink's Prometheus reporter in the images and the
 * local stack) sees them: records decoded and dead letters of the three inputs, analyses, and
 * incidents by decision (a {@code decision} label), against what the sinks received in the run of
 * {@link Cpi2JobIT}'s input.
 */
class JobMetricsIT {
  static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(2)
              .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
              .build());

  /** Every counter's total over the job's subtasks, by name (and decision, for incidents). */
  static Map<String, Long> counters() {
    Map<String, Long> out = new TreeMap<>();
    for (Map.Entry<MetricGroup, Map<String, Metric>> g : REPORTER.getMetricsByGroup().entrySet()) {
      String decision = g.getKey().getAllVariables().get("<decision>");
      for (Map.Entry<String, Metric> m : g.getValue().entrySet()) {
        if (m.getValue() instanceof Counter c) {
          String name = decision == null ? m.getKey() : m.getKey() + "{" + decision + "}";
          out.merge(name, c.getCount(), Long::sum);
        }
      }
    }
    return out;
  }

  @Test
  void theJobCountsWhatItDecodedRefusedAnalysedAndDecided() throws Exception {
    GraphRun run =
        GraphRun.run(GraphRun.OPTIONS, Cpi2JobIT.samples(), Cpi2JobIT.actions(), Cpi2JobIT.seeds());
    Map<String, Long> got = counters();
    // 45 minutes of 7 samples and the one valid action; 2 samples, an action and a seed refused
    assertEquals(45 * 7 + 1, got.get("recordsDecoded"), got.toString());
    assertEquals(run.deadLetters.size(), got.get("deadLetters"), got.toString());
    assertEquals(run.incidents.size(), got.get("analyses"), got.toString());
    for (Decision d : Decision.values()) {
      long want = run.incidents.stream().map(Incident::getDecision).filter(d::equals).count();
      assertEquals(want, got.get("incidents{" + d.name() + "}"), d + ": " + got);
    }
    assertTrue(run.incidents.size() >= 1, "the input has an incident");
    assertEquals(0L, got.get("lateSamples"), "the spec builder's late samples: none in order");
  }
}
