package org.cpi2.flink.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.logic.PeriodMoments;
import org.cpi2.schema.CpiSpec;
import org.junit.jupiter.api.Test;

/** The age weight is per day (paper 3.1: the previous day's data times 0.9), per spec period. */
class AgeWeightTest {
  private static final long HOUR_US = 3_600_000_000L;

  /** How much a period's data weighs {@code periods} periods later, through the spec's folds. */
  private static double remembered(double ageWeight, int periods) {
    SpecMath math = new SpecMath(ageWeight, 0.25, 5, 100);
    PeriodMoments first = new PeriodMoments();
    for (int i = 0; i < 1000; i++) {
      first.add(2.0, 1.0);
    }
    CpiSpec spec = math.fold(null, "j", "p", HOUR_US, first, 5, 5);
    for (int k = 1; k <= periods; k++) {
      spec = math.fold(spec, "j", "p", (k + 1) * HOUR_US, new PeriodMoments(), 0, 5);
    }
    return spec.getWeightedCount() / 1000;
  }

  @Test
  void hourlyPeriodsRememberTenDaysAtAboutAThird() {
    Cpi2Options o = Cpi2Options.defaults();
    assertEquals(3600, o.getLong(Cpi2Options.SPEC_PERIOD_S));
    double w = o.specAgeWeight();
    assertEquals(Math.pow(0.9, 1 / 24.0), w, 1e-15);
    // Ten days of hourly periods: 10 days ago weighs 0.9^10 of today's.
    double tenDays = remembered(w, 240);
    assertEquals(Math.pow(0.9, 10), tenDays, 1e-9);
    assertTrue(tenDays > 0.34 && tenDays < 0.36, "10 days ago weighs " + tenDays);
    assertEquals(0.9, remembered(w, 24), 1e-9); // a day ago: the paper's 0.9
  }

  @Test
  void theDailyWeightIsConvertedToAnyPeriod() {
    Cpi2Options minute = Cpi2Options.defaults().with(Cpi2Options.SPEC_PERIOD_S, "60");
    assertEquals(0.9, Math.pow(minute.specAgeWeight(), 1440), 1e-9);
    Cpi2Options daily =
        Cpi2Options.defaults()
            .with(Cpi2Options.SPEC_PERIOD_S, "86400")
            .with(Cpi2Options.SPEC_AGE_WEIGHT_PER_DAY, "0.8");
    assertEquals(0.8, daily.specAgeWeight(), 1e-15);
    assertThrows(
        IllegalArgumentException.class,
        () ->
            Cpi2Options.defaults()
                .with(Cpi2Options.SPEC_AGE_WEIGHT_PER_DAY, "1.1")
                .specAgeWeight());
  }

  @Test
  void anExplicitPerPeriodWeightStillWins() throws Exception {
    Cpi2Options o = Cpi2Options.fromArgs(new String[] {"--spec.age-weight", "0.9"});
    assertTrue(o.explicitAgeWeight());
    assertEquals(0.9, o.specAgeWeight(), 0);
    // 0.9 per hourly period: ten hours back already weighs what ten days do per day.
    assertEquals(Math.pow(0.9, 10), remembered(o.specAgeWeight(), 10), 1e-9);
    assertTrue(remembered(o.specAgeWeight(), 240) < 1e-10);
  }
}
