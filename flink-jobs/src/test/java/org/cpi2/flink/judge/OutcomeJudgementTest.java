package org.cpi2.flink.judge;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.cpi2.schema.Verdict;
import org.junit.jupiter.api.Test;

class OutcomeJudgementTest {
  private static final double[] BEFORE = {2.0, 2.2, 1.8}; // mean 2.0

  @Test
  void dropByMoreThanSigmaIsTruePositive() {
    OutcomeJudgement.Result r = OutcomeJudgement.judge(BEFORE, new double[] {1.0, 1.2}, 0.5);
    assertEquals(Verdict.TRUE_POSITIVE, r.verdict());
    assertEquals(2.0, r.cpiBefore(), 1e-12);
    assertEquals(1.1, r.cpiDuring(), 1e-12);
    assertEquals(0.55, r.relative(), 1e-12);
    assertEquals(3, r.before());
    assertEquals(2, r.during());
  }

  @Test
  void riseByMoreThanSigmaIsFalsePositive() {
    assertEquals(
        Verdict.FALSE_POSITIVE, OutcomeJudgement.judge(BEFORE, new double[] {2.6}, 0.5).verdict());
  }

  @Test
  void changeWithinSigmaIsNoise() {
    assertEquals(Verdict.NOISE, OutcomeJudgement.judge(BEFORE, new double[] {1.6}, 0.5).verdict());
    assertEquals(Verdict.NOISE, OutcomeJudgement.judge(BEFORE, new double[] {2.4}, 0.5).verdict());
  }

  @Test
  void noSamplesIsInconclusive() {
    assertEquals(
        Verdict.INCONCLUSIVE, OutcomeJudgement.judge(BEFORE, new double[0], 0.5).verdict());
    assertEquals(
        Verdict.INCONCLUSIVE,
        OutcomeJudgement.judge(new double[0], new double[] {1}, 0.5).verdict());
  }
}
