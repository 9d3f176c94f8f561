package org.cpi2.flink.signal;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.GraphRun;
import org.cpi2.flink.correlate.Analyzer;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.Decision;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.cpi2.schema.Verdict;
import org.cpi2.wire.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Detection on CPU pressure, the whole graph on a MiniCluster, on a fleet without CPI. Five hosts
 * each run a task of the latency-sensitive job "web" (a little CPU, a little queueing delay); host
 * h0 also runs a batch "hog" task and a batch "mr" task of constant usage; job "nopsi" (one task
 * per host) reports no pressure at all. From minute 31 to 35 hog/0 bursts on odd minutes and
 * web/0's CPU pressure jumps with it; the enforcer caps hog/0 at minute 36 and web/0 recovers.
 */
class SignalDetectionIT {
  @RegisterExtension static final MiniClusterExtension CLUSTER = GraphRun.miniCluster();

  static final long T0 = GraphRun.T0;

  static final Cpi2Options OPTIONS = GraphRun.OPTIONS;

  static CpiSample sample(
      String host, String task, TaskClass c, long t, Double pressure, double u) {
    CpiSample s = Fixtures.sample(host, task, c, t, null, u);
    s.setCpuPressure(pressure);
    return s;
  }

  /** The fleet, minute by minute ({@code step} apart, from 1 to {@code steps}). */
  static List<CpiSample> fleet(long t0, long step, int steps, int burstFrom, int burstTo) {
    List<CpiSample> out = new ArrayList<>();
    for (int i = 1; i <= steps; i++) {
      long t = t0 + i * step;
      boolean burst = i >= burstFrom && i <= burstTo && (i - burstFrom) % 2 == 0;
      for (int k = 0; k < 5; k++) {
        Double p = 0.01 + 0.005 * ((i + k) % 3);
        if (k == 1 && i % 4 == 0) {
          p = null; // not measured: never a 0 in the spec
        }
        if (k == 0 && burst) {
          p = 0.4;
        }
        out.add(sample("h" + k, "web/" + k, TaskClass.LATENCY_SENSITIVE, t, p, 0.06));
        out.add(sample("h" + k, "nopsi/" + k, TaskClass.LATENCY_SENSITIVE, t, null, 0.5));
      }
      double hog = i < burstFrom ? 0.2 : i <= burstTo ? (burst ? 1.0 : 0.05) : 0.01; // capped after
      out.add(sample("h0", "hog/0", TaskClass.BATCH, t, 0.0, hog));
      out.add(sample("h0", "mr/0", TaskClass.BATCH, t, 0.0, 0.5));
    }
    return out;
  }

  /** Runs the detection job's graph over {@code samples} and {@code actions}. */
  static GraphRun run(Cpi2Options options, List<CpiSample> samples, List<EnforcementAction> actions)
      throws Exception {
    Wire<CpiSample> wire = Wire.of(CpiSample.class);
    List<RawRecord> raw = new ArrayList<>();
    for (CpiSample s : samples) {
      raw.add(RawRecord.of("cpi2.samples", 0, raw.size(), null, wire.encode(s)));
    }
    Wire<EnforcementAction> actionWire = Wire.of(EnforcementAction.class);
    List<RawRecord> rawActions = new ArrayList<>();
    for (EnforcementAction a : actions) {
      rawActions.add(
          RawRecord.of("cpi2.actions", 0, rawActions.size(), null, actionWire.encode(a)));
    }
    if (rawActions.isEmpty()) {
      rawActions.add(RawRecord.of("cpi2.actions", 0, 0, null, new byte[0]));
    }
    return GraphRun.run(
        options, raw, rawActions, List.of(RawRecord.of("cpi2.specs", 0, 0, null, new byte[0])));
  }

  @Test
  void pressureSpikesCorrelatedWithOneNeighbourNameItAndTheSignal() throws Exception {
    String incidentId = Analyzer.incidentId(Signal.CPU_PRESSURE, "h0", "web/0", T0 + 35 * MIN, 1);
    EnforcementAction cap =
        Fixtures.applied("a1", "h0", "hog/0", "web/0", T0 + 36 * MIN, T0 + 41 * MIN);
    cap.setIncidentId(incidentId);
    GraphRun out = run(OPTIONS, fleet(T0, MIN, 45, 31, 35), List.of(cap));

    assertEquals(1, out.incidents.size(), "incidents: " + out.incidents);
    Incident inc = out.incidents.get(0);
    assertEquals("cpu_pressure", inc.getSignal());
    assertEquals(incidentId, inc.getIncidentId());
    assertTrue(inc.getIncidentId().startsWith("cpu_pressure:"), inc.getIncidentId());
    assertEquals("h0", inc.getHost());
    assertEquals("web/0", inc.getVictimTask());
    assertEquals(T0 + 35 * MIN, inc.getDetectedAtUs(), "third outlier in five minutes");
    assertEquals(Decision.THROTTLE, inc.getDecision(), inc.toString());
    assertEquals("hog/0", inc.getAntagonistTask());
    assertEquals(0.1, inc.getCapCpu(), 0, "a batch antagonist");
    assertEquals(
        List.of("hog/0", "mr/0"), inc.getSuspects().stream().map(s -> s.getTask()).toList());
    assertTrue(inc.getCorrelation() >= 0.35, "correlation " + inc.getCorrelation());
    assertTrue(inc.getSuspects().get(1).getCorrelation() < 0.35, inc.toString());
    assertEquals(
        inc.getSpecMean() + 2 * inc.getSpecStddev(),
        inc.getCpiThreshold(),
        1e-9,
        "the spec's own threshold: the floor gates outliers, not the correlation");

    // Specs: only of the pressure, never of a job without it, never counting a null as 0.
    assertTrue(out.specs.stream().allMatch(s -> s.getSignal().equals("cpu_pressure")), "specs");
    assertTrue(
        out.specs.stream().noneMatch(s -> s.getJob().equals("nopsi")), "nopsi has no pressure");
    CpiSpec first =
        out.specs.stream()
            .filter(s -> s.getJob().equals("web") && s.getPeriodEndUs() == T0 + 10 * MIN)
            .findFirst()
            .orElseThrow();
    assertEquals(9 * 5 - 2, first.getNumSamples(), "web/1's two null pressures left out");
    assertEquals(0.015, first.getCpiMean(), 0.002);
    assertTrue(first.getUsable());
    CpiSpec hog =
        out.specs.stream().filter(s -> s.getJob().equals("hog")).findFirst().orElseThrow();
    assertEquals(0.0, hog.getCpiMean(), 0, "a measured 0 counts");

    // The cap is judged once, by the pressure's correlator, on the pressure.
    assertEquals(1, out.outcomes.size(), "outcomes: " + out.outcomes);
    CapOutcome o = out.outcomes.get(0);
    assertEquals(incidentId, o.getIncidentId());
    assertEquals(Verdict.TRUE_POSITIVE, o.getVerdict(), o.toString());
    assertTrue(o.getRelativeCpi() < 0.5, "relative pressure " + o.getRelativeCpi());
  }

  /**
   * The 1-second profile (profiles/lab-1s.properties): 1 s windows, the same episode at second 120
   * is an incident on the third outlier, within five windows of its onset.
   */
  @Test
  void theOneSecondProfileCapsWithinAFewWindows() throws Exception {
    Cpi2Options options = labProfile();
    assertEquals(60, options.getLong(Cpi2Options.SPEC_PERIOD_S));
    assertEquals(5, options.getLong(Cpi2Options.ANOMALY_WINDOW_S));
    long second = 1_000_000L;
    List<CpiSample> fleet = fleet(T0, second, 150, 120, 124);
    for (CpiSample s : fleet) {
      s.setWindowUs(second);
    }
    GraphRun out = run(options, fleet, List.of());

    assertEquals(1, out.incidents.size(), "incidents: " + out.incidents);
    Incident inc = out.incidents.get(0);
    assertEquals("cpu_pressure", inc.getSignal());
    assertEquals("web/0", inc.getVictimTask());
    assertEquals("hog/0", inc.getAntagonistTask());
    assertEquals(Decision.THROTTLE, inc.getDecision(), inc.toString());
    long onset = T0 + 120 * second;
    assertEquals(onset + 4 * second, inc.getDetectedAtUs(), "the third outlier, 5th window");
    assertEquals(30, inc.getCapDurationS());
    assertEquals(inc.getDetectedAtUs() - 10 * second, inc.getWindowStartUs(), "10 s window");
    assertTrue(
        out.specs.stream().anyMatch(s -> s.getPeriodEndUs() == T0 + 60 * second && s.getUsable()),
        "a usable spec after the first minute: " + out.specs);
  }

  /**
   * A short-request server (shaped like the real-service lab's redis: 5 replicas on one host, a few
   * us of work per request) waits a few hundredths of each 1 s window; a CPU hog beside it hurts it
   * badly (bench-report/lab-calibration.md) while it still waits well under a quarter of each
   * window. With the 1-second profile's defaults it is named and capped within five windows of the
   * hog's start, on every replica's pressure.
   */
  @Test
  void aShortRequestServerHurtSevenfoldIsCaughtThoughItWaitsUnderAQuarter() throws Exception {
    long second = 1_000_000L;
    Cpi2Options options = labProfile();
    GraphRun out = run(options, shortRequests(T0, second, 130, List.of(100)), List.of());

    List<Incident> named =
        out.incidents.stream()
            .filter(
                i -> i.getDecision() == Decision.THROTTLE && "hog/0".equals(i.getAntagonistTask()))
            .toList();
    assertTrue(!named.isEmpty(), "incidents: " + out.incidents);
    Incident first = named.get(0);
    assertEquals("cpu_pressure", first.getSignal());
    assertTrue(first.getVictimTask().startsWith("redis/"), first.toString());
    long onset = T0 + 100 * second;
    assertTrue(
        first.getDetectedAtUs() <= onset + 4 * second,
        "within five windows of the onset: " + (first.getDetectedAtUs() - onset) / 1e6 + " s");
    assertTrue(
        out.incidents.stream().noneMatch(i -> "mr/0".equals(i.getAntagonistTask())),
        "the steady bystander is never named: " + out.incidents);
  }

  /**
   * A second on-phase is caught as fast as the first: the first, which nobody capped (20 windows of
   * the hog in the spec period ending at second 120), is folded into the spec and raises its mean
   * and sigma; the second (second 160, judged against that spec) is still named within five
   * windows, as the replicas wait several times their usual share.
   */
  @Test
  void aSecondOnPhaseIsCaughtAsFastAsTheFirst() throws Exception {
    long second = 1_000_000L;
    GraphRun out = run(labProfile(), shortRequests(T0, second, 200, List.of(100, 160)), List.of());
    for (int onset : List.of(100, 160)) {
      long t0 = T0 + onset * second;
      List<Incident> named =
          out.incidents.stream()
              .filter(
                  i ->
                      i.getDecision() == Decision.THROTTLE
                          && "hog/0".equals(i.getAntagonistTask())
                          && i.getDetectedAtUs() >= t0
                          && i.getDetectedAtUs() < t0 + 20 * second)
              .toList();
      assertTrue(!named.isEmpty(), "on-phase at " + onset + " s: incidents " + out.incidents);
      assertTrue(
          named.get(0).getDetectedAtUs() <= t0 + 4 * second,
          "on-phase at " + onset + " s named after " + (named.get(0).getDetectedAtUs() - t0) / 1e6);
    }
  }

  static Cpi2Options labProfile() throws Exception {
    Path profile = Path.of(System.getProperty("user.dir"), "profiles", "lab-1s.properties");
    return Cpi2Options.fromArgs(
        new String[] {"--config", profile.toString()}, Cpi2Options.defaults());
  }

  /**
   * Host h0 of the real-service lab, second by second ({@code step} apart, from 1 to {@code
   * steps}): five replicas of "redis" (0.04 CPU each, pressure 0.025-0.035: their share of a
   * machine with other work on it), a steady batch bystander "mr/0" and, for 20 windows from each
   * of {@code onsets}, a batch "hog/0" at 0.86 CPU while the replicas wait 0.11-0.13 of each
   * window.
   */
  static List<CpiSample> shortRequests(long t0, long step, int steps, List<Integer> onsets) {
    List<CpiSample> out = new ArrayList<>();
    for (int i = 1; i <= steps; i++) {
      long t = t0 + i * step;
      int at = i;
      boolean on = onsets.stream().anyMatch(o -> at >= o && at < o + 20);
      for (int k = 0; k < 5; k++) {
        double p = on ? 0.11 + 0.01 * ((i + k) % 3) : 0.025 + 0.005 * ((i + k) % 3);
        CpiSample s = sample("h0", "redis/" + k, TaskClass.LATENCY_SENSITIVE, t, p, 0.04);
        s.setWindowUs(step);
        out.add(s);
      }
      CpiSample mr = sample("h0", "mr/0", TaskClass.BATCH, t, 0.0, 0.3 + 0.01 * (i % 2));
      mr.setWindowUs(step);
      out.add(mr);
      CpiSample hog = sample("h0", "hog/0", TaskClass.BATCH, t, 0.0, on ? 0.86 : 0.0);
      hog.setWindowUs(step);
      out.add(hog);
    }
    return out;
  }

  @Test
  void signalsChosenByOptionOnlyCpi() throws Exception {
    GraphRun out =
        run(OPTIONS.with(Cpi2Options.SIGNALS, "cpi"), fleet(T0, MIN, 45, 31, 35), List.of());
    assertEquals(List.of(), out.incidents, "no CPI in this fleet, pressure not asked for");
    assertEquals(List.of(), out.specs);
  }
}
