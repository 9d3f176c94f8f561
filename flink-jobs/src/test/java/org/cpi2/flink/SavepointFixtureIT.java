package org.cpi2.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.Decision;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.wire.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every release's savepoint fixture (src/test/resources/savepoints/NAME, {@link SavepointFixture})
 * restores into the current build, and detection carries on: the fixture holds {@link Cpi2JobIT}'s
 * first 30 minutes, the rest of that input follows, and the incident of minute 35 needs the
 * restored specs and series. The same input without the savepoint finds nothing.
 */
class SavepointFixtureIT {
  @RegisterExtension static final MiniClusterExtension CLUSTER = GraphRun.miniCluster();

  static final Path FIXTURES = Path.of("src/test/resources/savepoints");

  static List<Path> savepoints() throws Exception {
    try (Stream<Path> all = Files.walk(FIXTURES)) {
      return all.filter(p -> p.getFileName().toString().equals("_metadata"))
          .map(Path::getParent)
          .sorted()
          .toList();
    }
  }

  static GraphRun carryOn(String savepoint) throws Exception {
    long t0 = GraphRun.T0;
    long min = Fixtures.MIN;
    EnforcementAction cap =
        Fixtures.applied("a1", "h0", "video/0", "web/0", t0 + 36 * min, t0 + 41 * min);
    List<RawRecord> actions =
        List.of(
            RawRecord.of("cpi2.actions", 0, 0, null, Wire.of(EnforcementAction.class).encode(cap)));
    return GraphRun.run(
        GraphRun.OPTIONS,
        Cpi2JobIT.samples(SavepointFixture.SAVEPOINT_MINUTE + 1, 45),
        actions,
        List.of(RawRecord.of("cpi2.specs", 0, 0, null, new byte[] {(byte) 0xC3, 1})),
        savepoint);
  }

  @Test
  @Timeout(value = 5, unit = TimeUnit.MINUTES) // a savepoint it cannot restore restarts the job
  void everyFixtureRestoresAndDetectionCarriesOn() throws Exception {
    List<Path> fixtures = savepoints();
    assertFalse(fixtures.isEmpty(), "no savepoint fixture under " + FIXTURES.toAbsolutePath());
    for (Path fixture : fixtures) {
      GraphRun run = carryOn(fixture.toUri().toString());
      String where = fixture.toString();
      List<Incident> got = run.incidents;
      assertEquals(1, got.size(), where + ": incidents " + got);
      Incident inc = got.get(0);
      assertEquals("web/0", inc.getVictimTask(), where);
      assertEquals(GraphRun.T0 + 35 * Fixtures.MIN, inc.getDetectedAtUs(), where);
      assertEquals(Decision.THROTTLE, inc.getDecision(), where + ": " + inc);
      assertEquals("video/0", inc.getAntagonistTask(), where);
      // The spec of minutes 20 to 29 is made of the savepoint's samples alone: 10 of 5 tasks.
      CpiSpec open =
          run.specs.stream()
              .filter(s -> s.getJob().equals("web"))
              .filter(s -> s.getPeriodEndUs() == GraphRun.T0 + 30 * Fixtures.MIN)
              .findFirst()
              .orElseThrow(() -> new AssertionError(where + ": no spec of the open period"));
      assertEquals(50, open.getNumSamples(), where);
      assertTrue(open.getUsable(), where);
      assertEquals(1, run.outcomes.size(), where + ": the cap judged");
    }
  }

  @Test
  void withoutTheSavepointTheSameInputFindsNothing() throws Exception {
    GraphRun run = carryOn(null);
    assertEquals(List.of(), run.incidents);
  }
}
