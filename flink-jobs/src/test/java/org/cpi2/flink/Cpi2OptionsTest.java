package org.cpi2.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class Cpi2OptionsTest {
  @Test
  void defaultsAreThePapersParameters() {
    Cpi2Options o = Cpi2Options.defaults();
    assertEquals(0.9, o.getDouble(Cpi2Options.SPEC_AGE_WEIGHT_PER_DAY));
    assertEquals(0.25, o.getDouble(Cpi2Options.MIN_CPU_USAGE));
    assertEquals(0.35, o.getDouble(Cpi2Options.CORRELATION_THRESHOLD));
    assertEquals(300, o.getInt(Cpi2Options.CAP_DURATION_S));
    assertEquals(0.01, o.getDouble(Cpi2Options.CAP_BEST_EFFORT));
  }

  @Test
  void argumentsOverrideTheFileWhichOverridesDefaults(@TempDir Path dir) throws Exception {
    Path file = dir.resolve("job.properties");
    Files.writeString(file, "spec.period-s=600\ncorrelation.threshold=0.5\n");
    Cpi2Options o =
        Cpi2Options.fromArgs(
            new String[] {"--config", file.toString(), "--correlation.threshold", "0.4"});
    assertEquals(600, o.getLong(Cpi2Options.SPEC_PERIOD_S));
    assertEquals(0.4, o.getDouble(Cpi2Options.CORRELATION_THRESHOLD));
    assertEquals(5, o.getInt(Cpi2Options.SPEC_MIN_TASKS));
  }

  @Test
  void typosAndDanglingNamesAreRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Cpi2Options.fromArgs(new String[] {"--spec.perod-s", "1"}));
    assertTrue(e.getMessage().contains("unknown option spec.perod-s"), e.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> Cpi2Options.fromArgs(new String[] {"--spec.period-s"}));
  }

  @Test
  void theEnvironmentRefusesKryoAndCheckpoints() {
    var env = Cpi2Job.environment(Cpi2Options.defaults());
    assertTrue(env.getConfig().getSerializerConfig().hasGenericTypesDisabled());
    assertTrue(env.getCheckpointConfig().isCheckpointingEnabled());
    assertEquals(30_000, env.getCheckpointConfig().getCheckpointInterval());
    assertEquals(Cpi2Job.MAX_PARALLELISM, env.getMaxParallelism());
  }
}
