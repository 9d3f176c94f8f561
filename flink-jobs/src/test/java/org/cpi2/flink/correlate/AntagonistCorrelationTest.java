package org.cpi2.flink.correlate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class AntagonistCorrelationTest {
  private static final long[] T = {60, 120, 180, 240};

  private static double corr(double[] cpi, double threshold, long[] ts, double[] cpu) {
    return AntagonistCorrelation.measure(T, cpi, T.length, threshold, ts, cpu, ts.length)
        .correlation();
  }

  @Test
  void handComputedExample() {
    // c_t = 2; terms: c=1 -> 1/2-1 = -0.5, c=2 -> 0, c=4 -> 1-2/4 = 0.5 (twice).
    // u = 1,1,4,4 normalised to 0.1,0.1,0.4,0.4: -0.05 + 0 + 0.2 + 0.2 = 0.35.
    assertEquals(0.35, corr(new double[] {1, 2, 4, 4}, 2, T, new double[] {1, 1, 4, 4}), 1e-12);
  }

  @Test
  void allUsageEqualIsTheMeanTerm() {
    // u = 0.25 each: 0.25 * (-0.5 + 0 + 0.5 + 0.5) = 0.125, whatever the usage level.
    assertEquals(
        0.125, corr(new double[] {1, 2, 4, 4}, 2, T, new double[] {0.7, 0.7, 0.7, 0.7}), 1e-12);
  }

  @Test
  void victimBelowThresholdThroughoutIsNegative() {
    assertEquals(-0.5, corr(new double[] {1, 1, 1, 1}, 2, T, new double[] {0.1, 3, 0.5, 2}), 1e-12);
  }

  @Test
  void suspectWithZeroUsageCorrelatesZero() {
    assertEquals(0.0, corr(new double[] {4, 4, 4, 4}, 2, T, new double[] {0, 0, 0, 0}), 0);
  }

  @Test
  void onlyTimeAlignedPairsCount() {
    // The suspect has samples at 120 and 240 (c = 2 -> 0 and c = 4 -> 0.5) and at 300 (no victim).
    long[] ts = {120, 240, 300};
    double c = corr(new double[] {1, 2, 4, 4}, 2, ts, new double[] {1, 3, 5});
    assertEquals(0.375, c, 1e-12); // (1*0 + 3*0.5) / (1 + 3)
    assertEquals(
        0.0, corr(new double[] {1, 2, 4, 4}, 2, new long[] {1, 2}, new double[] {1, 1}), 0);
  }

  @Test
  void staysWithinMinusOneAndOne() {
    double high = corr(new double[] {1e9, 1e9, 1e9, 1e9}, 1, T, new double[] {1, 2, 3, 4});
    double low = corr(new double[] {1e-9, 1e-9, 1e-9, 1e-9}, 1, T, new double[] {1, 2, 3, 4});
    assertEquals(1.0, high, 1e-6);
    assertEquals(-1.0, low, 1e-6);
  }

  private static AntagonistCorrelation.Measure measure(
      double[] cpi, double threshold, double[] cpu) {
    long[] t = new long[cpi.length];
    for (int i = 0; i < t.length; i++) {
      t[i] = (i + 1) * 60_000_000L;
    }
    return AntagonistCorrelation.measure(t, cpi, t.length, threshold, t, cpu, t.length);
  }

  @Test
  void liftIsTheCorrelationAboveAConstantBystanders() {
    // Terms -0.5, 0, 0.5, 0.5: mean 0.125. Usage 1,1,4,4 correlates 0.35: lift 0.225.
    AntagonistCorrelation.Measure m =
        measure(new double[] {1, 2, 4, 4}, 2, new double[] {1, 1, 4, 4});
    assertEquals(0.35, m.correlation(), 1e-12);
    assertEquals(0.225, m.lift(), 1e-12);
    assertEquals(
        0.0,
        measure(new double[] {1, 2, 4, 4}, 2, new double[] {0.7, 0.7, 0.7, 0.7}).lift(),
        1e-12);
    // Usage against the victim's CPI: lift below 0.
    assertEquals(
        -0.1 - 0.125,
        measure(new double[] {1, 2, 4, 4}, 2, new double[] {4, 4, 1, 1}).lift(),
        1e-12);
  }

  @Test
  void victimAboveThresholdThroughoutLeavesOnlyTheLiftToTell() {
    // Terms 0.5, 0.25, 0.5, 0.25 (CPI 4 and 8/3 over threshold 2): a bystander correlates 0.375
    // with lift 0; the task whose usage follows the CPI correlates 0.4773, lift 0.1023.
    double[] cpi = {4, 8.0 / 3, 4, 8.0 / 3};
    AntagonistCorrelation.Measure bystander = measure(cpi, 2, new double[] {1, 1, 1, 1});
    AntagonistCorrelation.Measure antagonist = measure(cpi, 2, new double[] {1, 0.1, 1, 0.1});
    assertEquals(0.375, bystander.correlation(), 1e-12);
    assertEquals(0.0, bystander.lift(), 1e-12);
    assertEquals((2 * 0.5 + 0.2 * 0.25) / 2.2, antagonist.correlation(), 1e-12);
    assertEquals((2 * 0.5 + 0.2 * 0.25) / 2.2 - 0.375, antagonist.lift(), 1e-12);
  }

  @Test
  void idleSamplesCountForTheLift() {
    // An idle suspect (usage 0) while the victim is fine is evidence: terms -0.5, 0 at usage 0.
    AntagonistCorrelation.Measure m =
        measure(new double[] {1, 2, 4, 4}, 2, new double[] {0, 0, 2, 2});
    assertEquals(0.5, m.correlation(), 1e-12);
    assertEquals(0.5 - 0.125, m.lift(), 1e-12);
  }

  @Test
  void aSignalInSmallUnitsMovesAsTheSameSignalInLargeOnes() {
    // A latency in seconds (variance about 1e-13 s^2) rises with the usage as the same series in
    // microseconds does: the same co-moving CPU, Pearson's r and chance (not "does not vary").
    double[] cpi = {1.5, 1.6, 3.0, 1.5, 3.1, 1.6, 3.0};
    double[] usage = {0.2, 0.2, 1.0, 0.05, 1.0, 0.05, 1.0};
    double[] seconds = new double[cpi.length];
    for (int i = 0; i < cpi.length; i++) {
      seconds[i] = cpi[i] * 1e-6;
    }
    AntagonistCorrelation.Measure large = measure(cpi, 2, usage);
    AntagonistCorrelation.Measure small = measure(seconds, 2e-6, usage);
    assertTrue(large.comovingCpu() > 0.3, "moves: " + large);
    assertEquals(large.comovingCpu(), small.comovingCpu(), 1e-9);
    assertEquals(large.pearson(), small.pearson(), 1e-9);
    assertEquals(large.pearsonP(), small.pearsonP(), 1e-9);
    assertEquals(
        0.0, measure(new double[] {2e-6, 2e-6, 2e-6, 2e-6, 2e-6}, 1e-6, usage).comovingCpu());
  }

  @Test
  void coMovingCpuIsTheUsageThatMovesWithTheCpiInCpus() {
    // CPI 1, 2, 3, 4, 5 against usage 2, 4, 6, 8, 10: r = 1, usage sd = sqrt(8): all of it moves.
    double[] cpi = {1, 2, 3, 4, 5};
    assertEquals(Math.sqrt(8), measure(cpi, 2, new double[] {2, 4, 6, 8, 10}).comovingCpu(), 1e-9);
    // The same shape at a tenth of the size: a tenth of the CPU, the same correlation and lift.
    AntagonistCorrelation.Measure big = measure(cpi, 2, new double[] {2, 4, 6, 8, 10});
    AntagonistCorrelation.Measure small = measure(cpi, 2, new double[] {0.2, 0.4, 0.6, 0.8, 1.0});
    assertEquals(big.comovingCpu() / 10, small.comovingCpu(), 1e-9);
    assertEquals(big.correlation(), small.correlation(), 1e-12);
    assertEquals(big.lift(), small.lift(), 1e-12);
    // Against the CPI: negative. Constant usage, or a constant CPI: 0.
    assertEquals(-Math.sqrt(8), measure(cpi, 2, new double[] {10, 8, 6, 4, 2}).comovingCpu(), 1e-9);
    assertEquals(0.0, measure(cpi, 2, new double[] {3, 3, 3, 3, 3}).comovingCpu(), 1e-9);
    assertEquals(
        0.0,
        measure(new double[] {3, 3, 3, 3, 3}, 2, new double[] {1, 2, 3, 4, 5}).comovingCpu(),
        1e-9);
    // Four aligned samples are too few to say.
    assertEquals(
        0.0, measure(new double[] {1, 2, 3, 4}, 2, new double[] {2, 4, 6, 8}).comovingCpu(), 0);
  }

  @Test
  void whatASuspectExplainsBeyondTheVictimsOwnUsage() {
    long[] t = {1, 2, 3, 4, 5, 6};
    double[] cpi = {4, 1, 4, 1, 4, 1};
    double[] own = {0.4, 2, 0.4, 2, 0.4, 2};
    // Usage that mirrors the victim's own: nothing beyond it.
    double[] mirror = {3, 0.3, 3, 0.3, 3, 0.3};
    assertEquals(0, beyond(t, cpi, own, 6, mirror), 0);
    assertEquals(-1, AntagonistCorrelation.ownUsageR(own, cpi, 6), 1e-12);
    // A victim of steady usage: the partial correlation is the plain one.
    double[] steady = {1, 1.1, 1, 1.1, 1, 1.05};
    double[] bursts = {2, 0.1, 2.2, 0.1, 1.9, 0.2};
    double plain = AntagonistCorrelation.ownUsageR(bursts, cpi, 6);
    double partial = beyond(t, cpi, steady, 6, bursts);
    assertEquals(true, partial > 0.5 && plain > 0.9, partial + " " + plain);
    // Too few pairs, or a victim whose usage does not vary: not known.
    assertEquals(true, Double.isNaN(beyond(t, cpi, own, 4, mirror)));
    assertEquals(true, Double.isNaN(beyond(t, cpi, new double[] {1, 1, 1, 1, 1, 1}, 6, bursts)));
  }

  private static double beyond(long[] t, double[] cpi, double[] own, int n, double[] usage) {
    return AntagonistCorrelation.measure(t, cpi, own, n, 2.0, t, usage, n).beyondOwnUsage();
  }
}
