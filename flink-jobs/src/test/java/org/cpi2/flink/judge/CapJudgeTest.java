package org.cpi2.flink.judge;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.KeyedOneInputStreamOperatorTestHarness;
import org.apache.flink.streaming.util.ProcessFunctionTestHarnesses;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.correlate.CorrelatorFunction;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.detect.SpecVerdict;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.cpi2.schema.Verdict;
import org.junit.jupiter.api.Test;

/** The correlator's judging of caps (paper 7.2), through the correlator's own harness. */
class CapJudgeTest {
  private static KeyedOneInputStreamOperatorTestHarness<String, HostEvent, Incident> harness()
      throws Exception {
    return ProcessFunctionTestHarnesses.forKeyedProcessFunction(
        new CorrelatorFunction(Cpi2Options.defaults()), HostEvent::host, Types.STRING);
  }

  private static List<CapOutcome> outcomes(
      KeyedOneInputStreamOperatorTestHarness<String, HostEvent, Incident> h) {
    var q = h.getSideOutput(CorrelatorFunction.OUTCOMES);
    return q == null ? List.of() : q.stream().map(StreamRecord::getValue).toList();
  }

  private static ScoredSample victim(long t, double cpi, double cpu) {
    ScoredSample o = new ScoredSample();
    o.host = "h1";
    o.task = "web/0";
    o.job = "web";
    o.platform = "p1";
    o.taskClass = TaskClass.LATENCY_SENSITIVE;
    o.timeUs = t;
    o.cpi = cpi;
    o.cpu = cpu;
    o.spec = new SpecVerdict(false, 0, 0.25, 0);
    return o;
  }

  private static CapOutcome judge(double during) throws Exception {
    var h = harness();
    // Before the cap (applied at 20 min): CPI 2.0, 2.2, 1.8 ... ; one idle sample is ignored.
    double[] before = {2.0, 2.2, 1.8, 2.0};
    for (int i = 0; i < before.length; i++) {
      ScoredSample s = victim((16 + i) * MIN, before[i], 0.8);
      h.processElement(HostEvent.of(s), s.timeUs / 1000);
    }
    ScoredSample idle = victim(19 * MIN + 30_000_000L, 9.0, 0.05);
    h.processElement(HostEvent.of(idle), idle.timeUs / 1000);
    h.processElement(
        HostEvent.of(Fixtures.applied("a1", "h1", "video/7", "web/0", 20 * MIN, 25 * MIN)),
        20 * MIN / 1000);
    for (int i = 0; i < 5; i++) {
      ScoredSample s = victim((20 + i) * MIN, during, 0.8);
      h.processElement(HostEvent.of(s), s.timeUs / 1000);
    }
    h.processWatermark(25 * MIN / 1000 - 1);
    assertTrue(outcomes(h).isEmpty(), "judged when the cap has expired");
    h.processWatermark(25 * MIN / 1000);
    assertEquals(1, outcomes(h).size());
    CapOutcome o = outcomes(h).get(0);
    h.close();
    return o;
  }

  @Test
  void cpiDropIsATruePositive() throws Exception {
    CapOutcome o = judge(1.0);
    assertEquals(Verdict.TRUE_POSITIVE, o.getVerdict());
    assertEquals(2.0, o.getCpiBefore(), 1e-12);
    assertEquals(1.0, o.getCpiDuring(), 1e-12);
    assertEquals(0.5, o.getRelativeCpi(), 1e-12);
    assertEquals(4, o.getSamplesBefore());
    assertEquals(5, o.getSamplesDuring());
    assertEquals("video/7", o.getAntagonistTask());
    assertEquals("inc-a1", o.getIncidentId());
    assertEquals("a1", o.getActionId());
    assertEquals(0.25, o.getSpecStddev(), 0);
  }

  @Test
  void anActionArrivingAfterItsCapExpiredIsJudgedAtOnce() throws Exception {
    var h = harness();
    for (int i = 0; i < 10; i++) {
      ScoredSample s = victim((16 + i) * MIN, i < 4 ? 2.0 : 1.0, 0.8);
      h.processElement(HostEvent.of(s), s.timeUs / 1000);
    }
    h.processWatermark(30 * MIN / 1000);
    h.processElement(
        HostEvent.of(Fixtures.applied("late", "h1", "video/7", "web/0", 20 * MIN, 25 * MIN)),
        20 * MIN / 1000);
    assertEquals(1, outcomes(h).size());
    assertEquals(Verdict.TRUE_POSITIVE, outcomes(h).get(0).getVerdict());
    h.close();
  }

  /**
   * The end of the samples' input (watermark at its end: a bounded run, a drained stop) fires every
   * timer; a cap read after it is judged from the samples it covers, the same as on time.
   */
  @Test
  void anActionReadAfterTheSamplesEndedIsJudgedFromTheSamplesItCovers() throws Exception {
    List<CapOutcome> judged = new java.util.ArrayList<>();
    for (boolean actionFirst : new boolean[] {true, false}) {
      var h = harness();
      HostEvent cap =
          HostEvent.of(Fixtures.applied("a1", "h1", "video/7", "web/0", 20 * MIN, 25 * MIN));
      if (actionFirst) {
        h.processElement(cap, 20 * MIN / 1000);
      }
      for (int i = 0; i < 10; i++) {
        ScoredSample s = victim((16 + i) * MIN, i < 4 ? 2.0 : 1.0, 0.8);
        h.processElement(HostEvent.of(s), s.timeUs / 1000);
      }
      h.processWatermark(Long.MAX_VALUE);
      if (!actionFirst) {
        h.processElement(cap, 20 * MIN / 1000);
      }
      assertEquals(1, outcomes(h).size());
      judged.add(outcomes(h).get(0));
      h.close();
    }
    assertEquals(Verdict.TRUE_POSITIVE, judged.get(1).getVerdict(), judged.get(1).toString());
    assertEquals(judged.get(0), judged.get(1));
  }

  @Test
  void cpiRiseIsAFalsePositiveAndSmallChangeIsNoise() throws Exception {
    assertEquals(Verdict.FALSE_POSITIVE, judge(2.5).getVerdict());
    assertEquals(Verdict.NOISE, judge(1.9).getVerdict());
  }
}
