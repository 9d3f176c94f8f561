package org.cpi2.flink.signal;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.GraphRun;
import org.cpi2.flink.correlate.Analyzer;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.Decision;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.cpi2.schema.Verdict;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Detection on the service's own signals (CpiSample v4), the whole graph on a MiniCluster, on a
 * fleet without CPI where the interference does not show as CPU pressure (a batch task thrashing
 * the cache from another core): five hosts each run a task of the latency-sensitive job "cache" (20
 * us of CPU per request, 1.5 us latency, a few percent of jitter, pressure flat at 0.01); host h0
 * also runs a batch "hog" task and a batch "mr" task of constant usage; job "plain" reports no
 * service signals. From minute 31 to 35 hog/0 bursts on odd minutes and cache/0's CPU per request
 * rises 1.6 times and its latency 2 times with it, its pressure unmoved; the enforcer caps hog/0 at
 * minute 36 and cache/0 recovers.
 */
class ServiceSignalDetectionIT {
  @RegisterExtension static final MiniClusterExtension CLUSTER = GraphRun.miniCluster();

  static final long T0 = GraphRun.T0;

  static CpiSample sample(
      String host, String task, TaskClass c, long t, double u, Double perOp, Double latency) {
    CpiSample s = Fixtures.sample(host, task, c, t, null, u);
    s.setCpuPressure(0.01);
    s.setCpuPerOp(perOp);
    s.setLatency(latency);
    return s;
  }

  static List<CpiSample> fleet() {
    List<CpiSample> out = new ArrayList<>();
    for (int i = 1; i <= 45; i++) {
      long t = T0 + i * MIN;
      boolean burst = i >= 31 && i <= 35 && (i - 31) % 2 == 0;
      for (int k = 0; k < 5; k++) {
        double jitter = 1 + 0.02 * ((i + k) % 3);
        double perOp = 20e-6 * jitter, latency = 1.5e-6 * jitter;
        if (k == 0 && burst) {
          perOp *= 1.6;
          latency *= 2;
        }
        Double maybe = k == 2 && i % 5 == 0 ? null : perOp; // a failed scrape: null, never 0
        out.add(
            sample("h" + k, "cache/" + k, TaskClass.LATENCY_SENSITIVE, t, 0.06, maybe, latency));
        out.add(sample("h" + k, "plain/" + k, TaskClass.LATENCY_SENSITIVE, t, 0.5, null, null));
      }
      double hog = i < 31 ? 0.2 : i <= 35 ? (burst ? 1.0 : 0.05) : 0.01; // capped after
      out.add(sample("h0", "hog/0", TaskClass.BATCH, t, hog, null, null));
      out.add(sample("h0", "mr/0", TaskClass.BATCH, t, 0.5, null, null));
    }
    return out;
  }

  @Test
  void cpuPerRequestAndLatencyNameTheAntagonistThatPressureDoesNotSee() throws Exception {
    String perOpId = Analyzer.incidentId(Signal.CPU_PER_OP, "h0", "cache/0", T0 + 35 * MIN, 1);
    EnforcementAction cap =
        Fixtures.applied("a1", "h0", "hog/0", "cache/0", T0 + 36 * MIN, T0 + 41 * MIN);
    cap.setIncidentId(perOpId);
    Cpi2Options options =
        GraphRun.OPTIONS
            .with(Cpi2Options.SIGNALS, "cpi,cpu_pressure,cpu_per_op,latency")
            // the hog reaches 0.25 of the paper's correlation: named under the window's ceiling
            .with(Cpi2Options.CORRELATION_SCALE_BY_CEILING, "true");
    GraphRun out = SignalDetectionIT.run(options, fleet(), List.of(cap));

    Map<String, Incident> bySignal = new TreeMap<>();
    for (Incident inc : out.incidents) {
      bySignal.put(inc.getSignal(), inc);
    }
    assertEquals(List.of("cpu_per_op", "latency"), List.copyOf(bySignal.keySet()), "incidents");
    assertEquals(2, out.incidents.size(), "one each: " + out.incidents);
    for (Incident inc : out.incidents) {
      assertEquals("cache/0", inc.getVictimTask(), inc.toString());
      assertEquals(Decision.THROTTLE, inc.getDecision(), inc.toString());
      assertEquals("hog/0", inc.getAntagonistTask(), inc.toString());
      assertEquals(T0 + 35 * MIN, inc.getDetectedAtUs(), "third outlier in five minutes");
      assertTrue(inc.getIncidentId().startsWith(inc.getSignal() + ":"), inc.getIncidentId());
      assertEquals("hog/0", inc.getSuspects().get(0).getTask(), "ranked first");
      assertTrue(
          inc.getSuspects().stream().map(x -> x.getTask()).toList().contains("mr/0"),
          "every task of the host is a suspect, the ones without the signal too: " + inc);
    }
    Incident perOp = bySignal.get("cpu_per_op");
    assertEquals(perOpId, perOp.getIncidentId());
    assertEquals(20.4e-6, perOp.getSpecMean(), 0.5e-6, "the spec of CPU per request, seconds");
    assertTrue(perOp.getVictimCpi() > perOp.getSpecMean(), perOp.toString());
    assertEquals(1.5e-6 * 1.02, bySignal.get("latency").getSpecMean(), 0.05e-6);

    // Specs of the service signals only where they are measured; a null never counted.
    assertTrue(
        out.specs.stream()
            .filter(s -> s.getSignal().equals("cpu_per_op") || s.getSignal().equals("latency"))
            .allMatch(s -> s.getJob().equals("cache")),
        "only cache reports them");
    assertEquals(
        9 * 5 - 1,
        out.specs.stream()
            .filter(s -> s.getSignal().equals("cpu_per_op") && s.getPeriodEndUs() == T0 + 10 * MIN)
            .findFirst()
            .orElseThrow()
            .getNumSamples(),
        "cache/2's null at minute 5 left out");

    // The cap is judged once, by cpu_per_op's correlator, on CPU per request.
    assertEquals(1, out.outcomes.size(), "outcomes: " + out.outcomes);
    CapOutcome o = out.outcomes.get(0);
    assertEquals(perOpId, o.getIncidentId());
    assertEquals(Verdict.TRUE_POSITIVE, o.getVerdict(), o.toString());
  }

  @Test
  void aRiseUnderTheMinimumRatioIsNoOutlier() throws Exception {
    // the same episode at 1.15 times: over mean + 2 sigma of this steady job, under 1.2 times
    List<CpiSample> mild = fleet();
    for (CpiSample s : mild) {
      if (s.getTask().equals("cache/0") && s.getCpuPerOp() != null && s.getCpuPerOp() > 25e-6) {
        s.setCpuPerOp(s.getCpuPerOp() / 1.6 * 1.15);
      }
    }
    Cpi2Options options = GraphRun.OPTIONS.with(Cpi2Options.SIGNALS, "cpu_per_op");
    assertEquals(List.of(), SignalDetectionIT.run(options, mild, List.of()).incidents);
    GraphRun off =
        SignalDetectionIT.run(
            options.with("signal.cpu_per_op.outlier-min-ratio", "0"), mild, List.of());
    assertEquals(1, off.incidents.size(), "without the gate the 1.15x episode is an incident");
  }
}
