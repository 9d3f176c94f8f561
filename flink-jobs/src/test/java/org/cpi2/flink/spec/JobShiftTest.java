package org.cpi2.flink.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;
import org.cpi2.flink.records.BucketHosts;
import org.cpi2.schema.CpiSpec;
import org.junit.jupiter.api.Test;

class JobShiftTest {
  private final JobShift shift = new JobShift(2.0, 0, 0.5, 5);

  static CpiSpec spec(double mean, double sd) {
    return CpiSpec.newBuilder()
        .setJob("web")
        .setPlatform("p1")
        .setPeriodEndUs(3_600_000_000L)
        .setNumSamples(1000)
        .setNumTasks(40)
        .setEligibleTasks(40)
        .setCpuUsageMean(1)
        .setCpiMean(mean)
        .setCpiStddev(sd)
        .setUsable(true)
        .setWeightedCount(1000)
        .setWeightedSum(1000 * mean)
        .setWeightedSumSq(1000 * (sd * sd + mean * mean))
        .setWeightedCpuSum(1000)
        .build();
  }

  /** One sample a host, each host's value from {@code values}. */
  static BucketHosts bucket(double... values) {
    BucketHosts b = new BucketHosts();
    for (int i = 0; i < values.length; i++) {
      b.addHosts(
          new String[] {"h" + i},
          new long[] {1},
          new double[] {values[i]},
          new double[] {values[i]});
    }
    return b;
  }

  static double[] fleet(Random rnd, int hosts, double mean, double sd) {
    double[] v = new double[hosts];
    for (int i = 0; i < hosts; i++) {
      v[i] = mean + sd * rnd.nextGaussian();
    }
    return v;
  }

  @Test
  void aReleaseOfTheWholeJobIsAShiftWithItsRatio() {
    // 40 hosts, CPI 1.5 times the spec's mean 1.2 (sd 0.15): every host above 1.5.
    JobShift.Shift s = shift.find(spec(1.2, 0.15), bucket(fleet(new Random(1), 40, 1.8, 0.2)));
    assertNotNull(s);
    assertEquals(1.5, s.ratio(), 0.1); // the median of 40 hosts: 1.41 with this seed
    assertTrue(s.share() > 0.8, "share " + s.share());
  }

  @Test
  void interferenceOnAFewHostsIsNoShift() {
    Random rnd = new Random(2);
    double[] v = fleet(rnd, 40, 1.2, 0.15);
    for (int i = 0; i < 6; i++) {
      v[i] = 3.0; // six victims of antagonists
    }
    assertNull(shift.find(spec(1.2, 0.15), bucket(v)));
  }

  @Test
  void aSteadyJobShowsNoShiftBucketAfterBucket() {
    Random rnd = new Random(3);
    CpiSpec spec = spec(1.2, 0.15);
    for (int k = 0; k < 500; k++) {
      assertNull(shift.find(spec, bucket(fleet(rnd, 10 + k % 40, 1.2, 0.15))), "bucket " + k);
    }
  }

  @Test
  void aRollBackIsAShiftDown() {
    JobShift.Shift s = shift.find(spec(1.8, 0.2), bucket(fleet(new Random(4), 30, 1.2, 0.15)));
    assertNotNull(s);
    assertEquals(1.2 / 1.8, s.ratio(), 0.04);
  }

  @Test
  void smallJobsNeedMoreOfTheirHosts() {
    // The binomial tail at the 2-sigma outlier rate (twice the normal tail, 4.55%): 1e-6 asks all
    // of 5 hosts, 7 of 10, and from 20 hosts on the share, half.
    CpiSpec spec = spec(1.0, 0.1);
    assertNull(shift.find(spec, bucket(2, 2, 2, 2, 1)), "4 of 5");
    assertNotNull(shift.find(spec, bucket(2, 2, 2, 2, 2)), "5 of 5");
    assertNull(shift.find(spec, bucket(2, 2, 2, 2, 2, 2, 1, 1, 1, 1)), "6 of 10");
    assertNotNull(shift.find(spec, bucket(2, 2, 2, 2, 2, 2, 2, 1, 1, 1)), "7 of 10");
    double[] twenty = new double[20];
    java.util.Arrays.fill(twenty, 1);
    java.util.Arrays.fill(twenty, 0, 9, 2);
    assertNull(shift.find(spec, bucket(twenty)), "9 of 20");
    twenty[9] = 2;
    assertNotNull(shift.find(spec, bucket(twenty)), "10 of 20");
    assertEquals(1.6e-3, JobShift.binomialTail(10, 5, 0.1), 1e-4);
    assertEquals(1, JobShift.binomialTail(10, 0, 0.1), 0);
    assertEquals(0.0228, JobShift.normalTail(2), 1e-4);
  }

  @Test
  void offUnusableOrSingularSpecsFindNothing() {
    double[] released = fleet(new Random(5), 40, 1.8, 0.2);
    assertNull(new JobShift(2.0, 0, 0, 5).find(spec(1.2, 0.15), bucket(released)), "turned off");
    assertNull(
        shift.find(CpiSpec.newBuilder(spec(1.2, 0.15)).setUsable(false).build(), bucket(released)));
    assertNull(shift.find(spec(1.2, 0), bucket(released)), "no spread");
    assertNull(shift.find(null, bucket(released)));
  }

  @Test
  void aSignalsFloorHoldsItsOutliersBack() {
    // cpu_pressure: a job idle at 0.02 whose pressure doubles stays under the floor of 0.25.
    JobShift pressure = new JobShift(2.0, 0.25, 0.5, 5);
    assertNull(pressure.find(spec(0.02, 0.005), bucket(fleet(new Random(6), 40, 0.05, 0.005))));
  }

  @Test
  void rescaleKeepsTheRelativeSpread() {
    CpiSpec s = JobShift.rescale(spec(1.2, 0.15), 1.5);
    assertEquals(1.8, s.getCpiMean(), 1e-12);
    assertEquals(0.225, s.getCpiStddev(), 1e-12);
    assertEquals(1800, s.getWeightedSum(), 1e-9);
    double mean = s.getWeightedSum() / s.getWeightedCount();
    double sd = Math.sqrt(s.getWeightedSumSq() / s.getWeightedCount() - mean * mean);
    assertEquals(0.225, sd, 1e-9, "the moments agree with the mean and sd");
  }
}
