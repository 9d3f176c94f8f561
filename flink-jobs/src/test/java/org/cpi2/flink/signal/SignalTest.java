package org.cpi2.flink.signal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.correlate.Analyzer;
import org.cpi2.flink.detect.OutlierRule;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.spec.SpecMath;
import org.cpi2.flink.stream.Validators;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class SignalTest {
  static CpiSample sample() {
    return Fixtures.sample("h", "web/0", TaskClass.BATCH, 1_000_000L, 1.5, 0.5);
  }

  @Test
  void eachSignalReadsItsFieldAndNullStaysNull() {
    CpiSample s = sample();
    s.setCpuPressure(0.3);
    s.setLlcMpki(4.0);
    assertEquals(1.5, Signal.CPI.value(s));
    assertEquals(0.3, Signal.CPU_PRESSURE.value(s));
    assertNull(Signal.MEMORY_PRESSURE.value(s));
    assertEquals(4.0, Signal.LLC_MPKI.value(s));
    assertEquals(0.3, ScoredSample.of(s, Signal.CPU_PRESSURE).cpi);
    assertTrue(Double.isNaN(ScoredSample.of(s, Signal.MEMORY_PRESSURE).cpi));
    assertNull(Signal.CPU_PER_OP.value(s));
    assertNull(Signal.LATENCY.value(s));
    s.setCpuPerOp(2e-5);
    s.setLatency(0.0015);
    assertEquals(2e-5, Signal.CPU_PER_OP.value(s));
    assertEquals(0.0015, Signal.LATENCY.value(s));
    assertEquals(2e-5, ScoredSample.of(s, Signal.CPU_PER_OP).cpi);
  }

  @Test
  void aNullNeverCountsAMeasuredZeroDoesExceptForCpi() {
    assertFalse(SpecMath.counts(Signal.CPU_PRESSURE, null, 1.0, 0.01));
    assertTrue(SpecMath.counts(Signal.CPU_PRESSURE, 0.0, 1.0, 0.01));
    assertFalse(SpecMath.counts(Signal.CPU_PRESSURE, 0.5, 0.001, 0.01), "below the CPU floor");
    assertFalse(SpecMath.counts(Signal.CPI, 0.0, 1.0, 0.25));
    assertFalse(SpecMath.counts(Signal.CPU_PRESSURE, Double.NaN, 1.0, 0.01));
  }

  @Test
  void validatorsRefuseASignalOutOfItsRange() {
    CpiSample s = sample();
    s.setCpuPressure(1.5);
    assertEquals("CpiSample with invalid cpu_pressure 1.5", Validators.sample(s));
    s.setCpuPressure(Double.NaN);
    assertTrue(Validators.sample(s).contains("cpu_pressure"));
    s.setCpuPressure(1.0);
    s.setMemoryPressure(-0.1);
    assertTrue(Validators.sample(s).contains("memory_pressure"));
    s.setMemoryPressure(null);
    s.setLlcMpki(Double.POSITIVE_INFINITY);
    assertTrue(Validators.sample(s).contains("llc_mpki"));
    s.setLlcMpki(12.0);
    assertNull(Validators.sample(s));
    s.setCpuPerOp(-1e-6);
    assertTrue(Validators.sample(s).contains("cpu_per_op"));
    s.setCpuPerOp(0.0);
    s.setLatency(Double.NaN);
    assertTrue(Validators.sample(s).contains("latency"));
    s.setLatency(3e6); // a latency in the service's unit (microseconds, say): no upper bound
    assertNull(Validators.sample(s));
  }

  @Test
  void theSelfInflictedRuleIsForPerInstructionRatesNotForPressures() {
    Cpi2Options o = Cpi2Options.defaults();
    double r = o.getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R);
    assertTrue(r > 0, "on by default");
    assertEquals(r, o.forSignal(Signal.CPI).getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R));
    assertEquals(
        r, o.forSignal(Signal.LLC_MPKI).getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R));
    // a starved task's usage falls as its pressure rises: that is the starvation, not case 3
    assertEquals(
        0.0, o.forSignal(Signal.CPU_PRESSURE).getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R));
    assertEquals(
        0.0,
        o.forSignal(Signal.MEMORY_PRESSURE).getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R));
    // CPU per unit of work is a rate like CPI (fixed costs weigh more per request at low load);
    // latency rises as a starved server's usage falls, like a pressure
    assertEquals(
        r, o.forSignal(Signal.CPU_PER_OP).getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R));
    assertEquals(
        0.0, o.forSignal(Signal.LATENCY).getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R));
  }

  @Test
  void theFloorGatesOutliersAndTheThresholdStaysTheSpecsAndCpiKeepsThePapersRule() {
    OutlierRule pressure = new OutlierRule(2.0, 0.01, 0.25);
    // An always-idle job's spec: the threshold is its own (the correlation's), the floor gates.
    assertEquals(0.0, pressure.threshold(0.0, 0.0));
    assertFalse(pressure.isOutlier(0.2, 0.5, pressure.threshold(0.0, 0.0)), "under the floor");
    assertTrue(pressure.isOutlier(0.3, 0.5, pressure.threshold(0.0, 0.0)), "over both");
    assertEquals(0.5, pressure.threshold(0.1, 0.2), 1e-12, "mean + 2 sigma");
    assertFalse(pressure.isOutlier(0.45, 0.5, 0.5), "over the floor, under the spec's threshold");
    assertFalse(pressure.isOutlier(0.9, 0.005, 0.5), "under the CPU floor");
    OutlierRule cpi = new OutlierRule(2.0, 0.25);
    assertEquals(1.4, cpi.threshold(1.0, 0.2), 1e-12);
    assertTrue(cpi.isOutlier(1.41, 0.5, 1.4, 1.0), "no ratio gate for CPI");
  }

  @Test
  void theMinimumRatioGatesOutliersOfAVerySteadyJob() {
    // A service whose CPU per request hardly varies: mean 20 us, sigma 0.1 us; a 2% rise is
    // over mean + 2 sigma but not an outlier under the ratio 1.2; a 30% rise is.
    OutlierRule perOp = new OutlierRule(2.0, 0.005, 0, 1.2);
    double t = perOp.threshold(20e-6, 0.1e-6);
    assertEquals(20.2e-6, t, 1e-12);
    assertFalse(perOp.isOutlier(20.4e-6, 0.05, t, 20e-6), "2% over: not 1.2 times the mean");
    assertTrue(perOp.isOutlier(26e-6, 0.05, t, 20e-6), "30% over");
    assertFalse(perOp.isOutlier(26e-6, 0.001, t, 20e-6), "under its CPU floor");
    // a noisy job: the spec's own threshold is the higher one
    double noisy = perOp.threshold(20e-6, 10e-6);
    assertFalse(perOp.isOutlier(30e-6, 0.05, noisy, 20e-6), "1.5 times, under mean + 2 sigma");
    Cpi2Options o = Cpi2Options.defaults();
    assertEquals(0.0, o.forSignal(Signal.CPI).getDouble(Cpi2Options.OUTLIER_MIN_RATIO));
    // a pressure twice the task's own: a short-request server an antagonist hurts waits 0.1-0.2
    // of each window, a few times its usual share, far under a quarter
    assertEquals(2.0, o.forSignal(Signal.CPU_PRESSURE).getDouble(Cpi2Options.OUTLIER_MIN_RATIO));
    assertEquals(0.05, o.forSignal(Signal.CPU_PRESSURE).getDouble(Cpi2Options.OUTLIER_FLOOR));
    // ... and a quarter of the window is enough, however much the task usually waits
    assertEquals(
        0.25, o.forSignal(Signal.CPU_PRESSURE).getDouble(Cpi2Options.OUTLIER_MIN_RATIO_CAP));
    assertEquals(0.0, o.forSignal(Signal.CPU_PER_OP).getDouble(Cpi2Options.OUTLIER_MIN_RATIO_CAP));
    OutlierRule pressure = new OutlierRule(2.0, 0.01, 0.05, 2, 0.25);
    double quiet = pressure.threshold(0.03, 0.01);
    assertTrue(
        pressure.isOutlier(0.11, 0.05, quiet, 0.03), "a short-request server, 3.7 x its share");
    assertFalse(
        pressure.isOutlier(0.055, 0.05, quiet, 0.03), "over mean + 2 sigma, under twice it");
    double busy = pressure.threshold(0.2, 0.02);
    assertTrue(
        pressure.isOutlier(0.3, 0.5, busy, 0.2), "a task that usually waits: over a quarter");
    assertFalse(pressure.isOutlier(0.22, 0.5, busy, 0.2), "under its spec's threshold");
    assertEquals(1.2, o.forSignal(Signal.CPU_PER_OP).getDouble(Cpi2Options.OUTLIER_MIN_RATIO));
    assertEquals(1.5, o.forSignal(Signal.LATENCY).getDouble(Cpi2Options.OUTLIER_MIN_RATIO));
    assertEquals(0.005, o.forSignal(Signal.LATENCY).getDouble(Cpi2Options.MIN_CPU_USAGE));
  }

  @Test
  void optionsPerSignal() throws Exception {
    Cpi2Options o =
        Cpi2Options.fromArgs(
            new String[] {
              "--signals", "cpu_pressure, cpi", "--signal.cpu_pressure.outlier-floor", "0.1"
            });
    assertEquals(List.of(Signal.CPI, Signal.CPU_PRESSURE), o.signals(), "CPI first");
    Cpi2Options p = o.forSignal(Signal.CPU_PRESSURE);
    assertEquals(0.1, p.getDouble(Cpi2Options.OUTLIER_FLOOR));
    assertEquals(0.01, p.getDouble(Cpi2Options.MIN_CPU_USAGE));
    assertEquals(0.25, o.forSignal(Signal.CPI).getDouble(Cpi2Options.MIN_CPU_USAGE));
    assertEquals(0.0, o.forSignal(Signal.CPI).getDouble(Cpi2Options.OUTLIER_FLOOR));
    assertEquals(
        List.of(Signal.CPI, Signal.CPU_PRESSURE, Signal.MEMORY_PRESSURE, Signal.LLC_MPKI),
        Cpi2Options.defaults().signals(),
        "the service signals are asked for");
    assertEquals(
        List.of(Signal.CPI, Signal.CPU_PER_OP, Signal.LATENCY),
        Cpi2Options.fromArgs(new String[] {"--signals", "latency,cpu_per_op,cpi"}).signals());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Cpi2Options.fromArgs(new String[] {"--signals", "cpi,iowait"}));
    assertTrue(e.getMessage().contains("cpu_per_op, latency"), e.getMessage());
    assertEquals(
        1.3,
        Cpi2Options.fromArgs(new String[] {"--signal.latency.outlier-min-ratio", "1.3"})
            .forSignal(Signal.LATENCY)
            .getDouble(Cpi2Options.OUTLIER_MIN_RATIO));
    Cpi2Options loader =
        Cpi2Options.fromArgs(new String[] {"--job.name", "l"}, Cpi2Options.loaderDefaults());
    assertEquals("l", loader.get(Cpi2Options.JOB_NAME), "the loader has no signals");
  }

  @Test
  void incidentIdsNameTheirSignalCpisAreAsBefore() {
    String cpi = Analyzer.incidentId("h", "web/0", 60_000_000L, 1);
    assertEquals(cpi, Analyzer.incidentId(Signal.CPI, "h", "web/0", 60_000_000L, 1));
    assertEquals(36, cpi.length());
    assertEquals(Signal.CPI, Signal.ofIncident(cpi));
    String p = Analyzer.incidentId(Signal.CPU_PRESSURE, "h", "web/0", 60_000_000L, 1);
    assertTrue(p.startsWith("cpu_pressure:"));
    assertFalse(p.endsWith(cpi), "another key");
    assertEquals(Signal.CPU_PRESSURE, Signal.ofIncident(p));
    assertEquals(Signal.CPI, Signal.ofIncident("inc-a1"));
    assertEquals(Signal.CPI, Signal.ofIncident("nosuch:x"));
    assertEquals(Signal.CPI, Signal.ofIncident(null));
  }
}
