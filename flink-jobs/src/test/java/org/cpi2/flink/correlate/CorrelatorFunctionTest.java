package org.cpi2.flink.correlate;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.Decision;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class CorrelatorFunctionTest {
  private static final double THRESHOLD = 2.0; // spec 1.5 + 2 * 0.25

  private static KeyedOneInputStreamOperatorTestHarness<String, HostEvent, Incident> harness()
      throws Exception {
    return ProcessFunctionTestHarnesses.forKeyedProcessFunction(
        new CorrelatorFunction(Cpi2Options.defaults()), HostEvent::host, Types.STRING);
  }

  /** A scored sample as the detector emits it. */
  private static ScoredSample s(
      String task, String cls, long t, double cpi, double cpu, boolean anomalous) {
    ScoredSample o = new ScoredSample();
    o.host = "h1";
    o.task = task;
    o.job = task.replaceAll("/.*", "");
    o.platform = "p1";
    o.taskClass = TaskClass.valueOf(cls);
    o.timeUs = t;
    o.cpi = cpi;
    o.cpu = cpu;
    o.spec = new SpecVerdict(true, 1.5, 0.25, THRESHOLD);
    o.outlier = cpu >= 0.25 && cpi > THRESHOLD;
    o.anomalous = anomalous && o.outlier;
    return o;
  }

  private static void feed(
      KeyedOneInputStreamOperatorTestHarness<String, HostEvent, Incident> h, ScoredSample... ss)
      throws Exception {
    for (ScoredSample x : ss) {
      h.processElement(HostEvent.of(x), x.timeUs / 1000);
    }
  }

  @Test
  void anAnomalyOfTheJobsShiftIsReportedAsSuchWithoutACap() throws Exception {
    var h = harness();
    for (int i = 1; i <= 5; i++) {
      long t = i * MIN;
      boolean high = i % 2 == 1;
      ScoredSample victim = s("web/0", "LATENCY_SENSITIVE", t, high ? 4 : 1, 0.8, false);
      if (i == 5) { // its job shifted: not an outlier of the re-baselined spec, but anomalous
        victim.outlier = false;
        victim.shifted = true;
        victim.anomalous = true;
      }
      feed(h, victim, s("video/7", "BEST_EFFORT", t, 1, high ? 1.0 : 0.0, false));
    }
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    assertEquals(Decision.JOB_WIDE_SHIFT, out.get(0).getDecision());
    assertEquals(null, out.get(0).getAntagonistTask());
    assertEquals(null, out.get(0).getCapCpu());
    assertEquals("video/7", out.get(0).getSuspects().get(0).getTask(), "ranked for the record");
    h.close();
  }

  @Test
  void analysesOnceTheHostsPeriodIsCompleteAndThrottlesTheBatchAntagonist() throws Exception {
    var h = harness();
    for (int i = 1; i <= 5; i++) {
      long t = i * MIN;
      boolean high = i % 2 == 1;
      feed(h, s("web/0", "LATENCY_SENSITIVE", t, high ? 4 : 1, 0.8, i == 5));
      feed(h, s("video/7", "BEST_EFFORT", t, 1, high ? 1.0 : 0.0, false));
      if (i == 5) {
        assertEquals(List.of(), h.extractOutputValues(), "mr/1's sample of minute 5 is not in yet");
      }
      feed(h, s("mr/1", "BATCH", t, 1, high ? 0.9 : 0.1, false));
    }
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    Incident inc = out.get(0);
    // video/7: (1*0.5*3) / 3 = 0.5; mr/1: (0.9*0.5*3 - 0.1*0.5*2) / 2.9 = 1.25 / 2.9.
    assertEquals("video/7", inc.getSuspects().get(0).getTask());
    assertEquals(0.5, inc.getSuspects().get(0).getCorrelation(), 1e-12);
    assertEquals(1.25 / 2.9, inc.getSuspects().get(1).getCorrelation(), 1e-12);
    assertEquals(Decision.THROTTLE, inc.getDecision());
    assertEquals("video/7", inc.getAntagonistTask());
    assertEquals(0.01, inc.getCapCpu(), 0);
    assertEquals(1, inc.getRound());
    assertEquals(5 * MIN, inc.getDetectedAtUs());

    // The enforcer caps video/7 for five minutes; the victim stays bad (CPI 4 from minute 6 on).
    h.processElement(
        HostEvent.of(
            Fixtures.applied(
                "a1", "h1", "video/7", "web/0", 5 * MIN + 30_000_000L, 10 * MIN + 30_000_000L)),
        0);
    for (int i = 6; i <= 8; i++) {
      long t = i * MIN;
      feed(
          h,
          s("web/0", "LATENCY_SENSITIVE", t, 4, 0.8, true),
          s("video/7", "BEST_EFFORT", t, 1, 0.01, false),
          s("mr/1", "BATCH", t, 1, 0.9, false));
      h.processWatermark(t / 1000);
    }
    out = h.extractOutputValues();
    assertEquals(2, out.size(), "one new analysis after three new outliers: " + out);
    Incident round2 = out.get(1);
    assertEquals(2, round2.getRound());
    assertEquals(8 * MIN, round2.getDetectedAtUs());
    assertEquals(List.of("video/7"), round2.getExcludedTasks());
    assertEquals(1, round2.getSuspects().size());
    // mr/1 over minutes 1..8: usage .9,.1,.9,.1,.9,.9,.9,.9 against terms +-0.5: 2.6 / 5.6.
    assertEquals(2.6 / 5.6, round2.getCorrelation(), 1e-12);
    assertEquals("mr/1", round2.getAntagonistTask());
    assertEquals(0.1, round2.getCapCpu(), 0);
    assertNotEquals(inc.getIncidentId(), round2.getIncidentId());
    h.close();
  }

  @Test
  void aTenantThatFellSilentHoldsTheAnalysisOnlyUntilTheWatermark() throws Exception {
    var h = harness();
    for (int i = 1; i <= 3; i++) {
      long t = i * MIN;
      feed(
          h,
          s("web/0", "LATENCY_SENSITIVE", t, i == 3 ? 4 : 1, 0.8, i == 3),
          s("mr/1", "BATCH", t, 1, i == 3 ? 0.9 : 0.1, false));
      if (i < 3) {
        feed(h, s("gone/2", "BATCH", t, 1, 0.5, false)); // no sample of minute 3
      }
    }
    assertEquals(List.of(), h.extractOutputValues(), "gone/2 has not reported minute 3");
    h.processWatermark(3 * MIN / 1000);
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    assertEquals(3 * MIN, out.get(0).getDetectedAtUs());
    assertEquals("mr/1", out.get(0).getSuspects().get(0).getTask());
    h.close();
  }

  @Test
  void aVictimAloneOnItsHostSoFarWaitsUntilAnotherTaskCompletesThePeriod() throws Exception {
    var h = harness();
    for (int i = 1; i <= 3; i++) {
      feed(h, s("web/0", "LATENCY_SENSITIVE", i * MIN, i == 3 ? 4 : 1, 0.8, i == 3));
    }
    assertEquals(
        List.of(), h.extractOutputValues(), "no other task known: the period may not be complete");
    for (int i = 1; i <= 2; i++) {
      feed(h, s("mr/1", "BATCH", i * MIN, 1, 0.1, false));
    }
    assertEquals(List.of(), h.extractOutputValues(), "mr/1 reported minute 2, not yet minute 3");
    feed(h, s("mr/1", "BATCH", 3 * MIN, 1, 0.9, false));
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    assertEquals("mr/1", out.get(0).getSuspects().get(0).getTask());
    h.close();
  }

  @Test
  void victimsOfAPeriodAreAnalysedAtOnceInPriorityOrderNotStateOrder() throws Exception {
    var h = harness();
    for (int i = 1; i <= 3; i++) {
      long t = i * MIN;
      boolean last = i == 3;
      feed(
          h,
          s("mr/2", "BATCH", t, last ? 9 : 1, 0.8, last), // queued first, the most severe
          s("web/1", "LATENCY_SENSITIVE", t, last ? 3 : 1, 0.8, last),
          s("web/0", "LATENCY_SENSITIVE", t, last ? 5 : 1, 0.8, last),
          s("video/7", "BEST_EFFORT", t, 1, last ? 0.9 : 0.0, false));
    }
    // No watermark: the period is complete, and the three take slots 3:00, 3:01 and 3:02.
    List<Incident> out = h.extractOutputValues();
    assertEquals(
        List.of("web/0", "web/1", "mr/2"),
        out.stream().map(Incident::getVictimTask).toList(),
        "latency-sensitive first, then by how far above the threshold");
    for (Incident inc : out) {
      assertEquals(3 * MIN, inc.getDetectedAtUs());
    }
    // Three samples are too few for video/7's rise to be told from chance (Significance): the
    // stand-out gate abstains.
    assertEquals(Decision.NO_SUSPECT_STANDS_OUT, out.get(0).getDecision());
    h.close();
  }

  @Test
  void aHostGetsOneAnalysisPerSecondOfEventTimeAndNoVictimStarves() throws Exception {
    var h = harness();
    int victims = 62; // two more than the seconds of a one-minute period
    for (int i = 1; i <= 4; i++) {
      long t = i * MIN;
      for (int v = 0; v < victims; v++) {
        feed(h, s("web/" + v, "LATENCY_SENSITIVE", t, i == 3 ? 3 + v / 100.0 : 1, 0.8, i == 3));
      }
      feed(h, s("mr/1", "BATCH", t, 1, 0.9, false));
      if (i == 3) {
        List<Incident> out = h.extractOutputValues();
        assertEquals(60, out.size(), "slots 3:00 to 3:59");
        // The most severe first: web/61 down to web/2; web/1 and web/0 wait for the clock.
        assertEquals("web/61", out.get(0).getVictimTask());
        assertEquals("web/2", out.get(59).getVictimTask());
      }
    }
    // The first sample of minute 4 moved the host's clock: the last two took 4:00 and 4:01.
    List<Incident> out = h.extractOutputValues();
    assertEquals(victims, out.size());
    assertEquals(
        List.of("web/1", "web/0"),
        out.subList(60, 62).stream().map(Incident::getVictimTask).toList());
    assertEquals(
        victims, out.stream().map(Incident::getVictimTask).distinct().count(), "each once");
    // Each incident says when it ran in the host's event time: the sixty at 3:00, when the period
    // was complete, and the two that waited at 4:00, about the sample of 3:00 all the same.
    for (int k = 0; k < victims; k++) {
      assertEquals(3 * MIN, out.get(k).getDetectedAtUs());
      assertEquals(k < 60 ? 3 * MIN : 4 * MIN, out.get(k).getAnalysedAtUs(), "incident " + k);
    }
    h.close();
  }

  @Test
  void withOneSecondSamplesTheHostStillGetsOneAnalysisPerSecond() throws Exception {
    var h = harness();
    long sec = 1_000_000L;
    for (int i = 1; i <= 5; i++) {
      long t = i * sec;
      for (int v = 0; v < 3; v++) {
        feed(h, s("web/" + v, "LATENCY_SENSITIVE", t, i >= 3 ? 4 : 1, 0.8, i == 3));
      }
      feed(h, s("mr/1", "BATCH", t, 1, 0.9, false));
      assertEquals(
          i < 3 ? 0 : Math.min(3, i - 2),
          h.extractOutputValues().size(),
          "analyses after second " + i);
    }
    h.close();
  }

  @Test
  void aVictimQueuedAgainBeforeItsAnalysisIsAnalysedOnceAtItsNewestAnomaly() throws Exception {
    var h = harness();
    for (int i = 1; i <= 4; i++) {
      long t = i * MIN;
      feed(h, s("web/0", "LATENCY_SENSITIVE", t, i >= 2 ? 4 : 1, 0.8, i >= 3));
      if (i < 3) {
        feed(h, s("mr/1", "BATCH", t, 1, 0.9, false));
      }
    }
    // mr/1 is silent from minute 3: the victim waits, queued at 3:00, then again at 4:00.
    assertEquals(List.of(), h.extractOutputValues());
    h.processWatermark(4 * MIN / 1000);
    List<Incident> out = h.extractOutputValues();
    assertEquals(1, out.size());
    assertEquals(4 * MIN, out.get(0).getDetectedAtUs());
    h.close();
  }

  /** An antagonist's onset 3 minutes before the anomaly, after 7 quiet minutes of the window. */
  private static List<Incident> onset(Cpi2Options options) throws Exception {
    var h =
        ProcessFunctionTestHarnesses.forKeyedProcessFunction(
            new CorrelatorFunction(options), HostEvent::host, Types.STRING);
    for (int i = 1; i <= 10; i++) {
      long t = i * MIN;
      boolean on = i >= 8;
      feed(
          h,
          s("web/0", "LATENCY_SENSITIVE", t, on ? 4 : 1, 0.8, i == 10),
          s("mr/1", "BATCH", t, 1, on ? 3.0 : 0.7, false),
          s("tenant/2", "BATCH", t, 1, 0.5, false));
    }
    List<Incident> out = h.extractOutputValues();
    h.close();
    return out;
  }

  @Test
  void anEpisodesFirstAnalysisLooksAgainAtTheAnomalysOwnMinutes() throws Exception {
    // Over 10 minutes mr/1: (3 * 3.0 * 0.5 - 7 * 0.7 * 0.5) / 13.9 = 0.147, under 0.35 times the
    // window's ceiling (CPI 4 over 2: 0.5), 0.175.
    List<Incident> off =
        onset(Cpi2Options.defaults().with(Cpi2Options.CORRELATION_EARLY_WINDOW_S, "0"));
    assertEquals(1, off.size());
    assertEquals(Decision.NO_SUSPECT_ABOVE_THRESHOLD, off.get(0).getDecision());
    assertEquals(2.05 / 13.9, off.get(0).getSuspects().get(0).getCorrelation(), 1e-12);
    // Over the 5 minutes of the anomaly: (4.5 - 2 * 0.7 * 0.5) / 10.4 = 0.37, and it leads.
    List<Incident> early = onset(Cpi2Options.defaults());
    assertEquals(1, early.size());
    Incident inc = early.get(0);
    assertEquals(Decision.THROTTLE, inc.getDecision());
    assertEquals("mr/1", inc.getAntagonistTask());
    assertEquals(3.8 / 10.4, inc.getCorrelation(), 1e-12);
    assertEquals(10 * MIN - 300_000_000L, inc.getWindowStartUs());
    // The paper's policy has no early analysis.
    assertEquals(
        Decision.NO_SUSPECT_ABOVE_THRESHOLD,
        onset(Cpi2Options.defaults().with(Cpi2Options.CORRELATION_POLICY, "paper"))
            .get(0)
            .getDecision());
  }

  /**
   * A victim above its threshold from minute 1 (anomalous from minute 3) beside mr/1, which runs at
   * 3 CPUs but for the minutes in {@code dips} (0.2 CPU, and the victim's CPI falls to 1), and a
   * steady tenant. The detected times of its incidents, and the decisions.
   */
  private static List<Incident> steadyThenDips(int minutes, int... dips) throws Exception {
    var h = harness();
    for (int i = 1; i <= minutes; i++) {
      long t = i * MIN;
      int minute = i;
      boolean dip = java.util.Arrays.stream(dips).anyMatch(d -> d == minute);
      feed(
          h,
          s("web/0", "LATENCY_SENSITIVE", t, dip ? 1 : 4, 0.8, i >= 3),
          s("mr/1", "BATCH", t, 1, dip ? 0.2 : 3.0, false),
          s("tenant/2", "BATCH", t, 1, 0.5, false));
    }
    List<Incident> out = h.extractOutputValues();
    h.close();
    return out;
  }

  @Test
  void anInconclusiveAnalysisOfAYoungEpisodeIsRepeatedAtTheNextOutlier() throws Exception {
    // Minutes 1-3 give mr/1 no lift (its usage never moved): nobody stands out at 3:00. Its dip
    // at minute 4 is what names it, and the victim's next outlier, at 5:00, brings it in: the
    // analysis runs then, not after three new outliers (7:00).
    List<Incident> out = steadyThenDips(7, 4);
    assertEquals(List.of(3 * MIN, 5 * MIN), out.stream().map(Incident::getDetectedAtUs).toList());
    assertEquals(Decision.NO_SUSPECT_STANDS_OUT, out.get(0).getDecision());
    assertEquals(Decision.THROTTLE, out.get(1).getDecision());
    assertEquals("mr/1", out.get(1).getAntagonistTask());
  }

  @Test
  void anEpisodeThatStaysInconclusiveIsAnalysedAtEachOutlierForOneWindowOnly() throws Exception {
    // Nothing ever moves: each outlier of the episode's first window (3:00 to 12:00) is analysed,
    // then every third new outlier as before (15:00, 18:00).
    List<Incident> out = steadyThenDips(19);
    assertEquals(
        List.of(3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 15, 18),
        out.stream().map(i -> (int) (i.getDetectedAtUs() / MIN)).toList());
    for (Incident i : out) {
      assertEquals(Decision.NO_SUSPECT_STANDS_OUT, i.getDecision());
    }
  }
}
