package org.cpi2.flink;

import static org.cpi2.flink.Fixtures.MIN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Decision;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.cpi2.schema.Verdict;
import org.cpi2.wire.Wire;
import org.cpi2.wire.WireFormatException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The whole graph on a MiniCluster, from Kafka-shaped bytes to incidents, specs, outcomes and dead
 * letters. Five hosts each run a task of the latency-sensitive job "web"; host h0 also runs a
 * best-effort "video" task and a batch "mr" task. From minute 31 to 35 video/0 bursts on odd
 * minutes and web/0's CPI triples with it; the enforcer caps video/0 at minute 36 and web/0
 * recovers.
 */
class Cpi2JobIT {
  @RegisterExtension static final MiniClusterExtension CLUSTER = GraphRun.miniCluster();

  static final long T0 = GraphRun.T0;

  static final Cpi2Options OPTIONS = GraphRun.OPTIONS;

  static List<RawRecord> samples() {
    return samples(1, 45);
  }

  /** The samples of minutes {@code from} to {@code to}, at the offsets of the whole input. */
  static List<RawRecord> samples(int from, int to) {
    Wire<CpiSample> wire = Wire.of(CpiSample.class);
    List<RawRecord> out = new ArrayList<>();
    long offset = 0;
    for (int i = 1; i <= to; i++) {
      if (i == from) {
        out.clear();
      }
      long t = T0 + i * MIN;
      boolean burst = i >= 31 && i <= 35 && i % 2 == 1;
      for (int k = 0; k < 5; k++) {
        double cpi = 1.0 + 0.05 * ((i + k) % 3 - 1);
        if (k == 0 && burst) {
          cpi = 3.0;
        }
        CpiSample s =
            Fixtures.sample("h" + k, "web/" + k, TaskClass.LATENCY_SENSITIVE, t, cpi, 0.8);
        out.add(RawRecord.of("cpi2.samples", 0, offset++, null, wire.encode(s)));
      }
      double video = i <= 30 ? 0.2 : i <= 35 ? (burst ? 1.0 : 0.05) : 0.01;
      out.add(
          raw(
              wire,
              Fixtures.sample("h0", "video/0", TaskClass.BEST_EFFORT, t, 1.5, video),
              offset++));
      out.add(raw(wire, Fixtures.sample("h0", "mr/0", TaskClass.BATCH, t, 1.2, 0.5), offset++));
      if (i == 20) {
        out.add(RawRecord.of("cpi2.samples", 0, offset++, null, new byte[] {1, 2, 3}));
        out.add(RawRecord.of("cpi2.samples", 0, offset++, null, "{\"json\": true}".getBytes()));
      }
    }
    return out;
  }

  static RawRecord raw(Wire<CpiSample> wire, CpiSample s, long offset) {
    return RawRecord.of("cpi2.samples", 0, offset, null, wire.encode(s));
  }

  /** The enforcer's cap of video/0 at minute 36, for 5 minutes, and a record that is not one. */
  static List<RawRecord> actions() {
    EnforcementAction cap =
        Fixtures.applied("a1", "h0", "video/0", "web/0", T0 + 36 * MIN, T0 + 41 * MIN);
    return List.of(
        RawRecord.of("cpi2.actions", 0, 0, null, Wire.of(EnforcementAction.class).encode(cap)),
        RawRecord.of("cpi2.actions", 0, 1, null, new byte[0]));
  }

  /** A spec seed that is not one. */
  static List<RawRecord> seeds() {
    return List.of(RawRecord.of("cpi2.specs", 0, 0, null, new byte[] {(byte) 0xC3, 1}));
  }

  @Test
  void bytesInIncidentsSpecsOutcomesAndDeadLettersOut() throws Exception {
    GraphRun run = GraphRun.run(OPTIONS, samples(), actions(), seeds());

    List<Incident> got = run.incidents;
    assertEquals(1, got.size(), "incidents: " + got);
    Incident inc = got.get(0);
    assertEquals("h0", inc.getHost());
    assertEquals("web/0", inc.getVictimTask());
    assertEquals(T0 + 35 * MIN, inc.getDetectedAtUs(), "third outlier in five minutes");
    assertEquals(Decision.THROTTLE, inc.getDecision(), inc.toString());
    assertEquals("video/0", inc.getAntagonistTask());
    assertEquals(TaskClass.BEST_EFFORT, inc.getAntagonistClass());
    assertEquals(0.01, inc.getCapCpu(), 0);
    assertEquals(
        List.of("video/0", "mr/0"), inc.getSuspects().stream().map(s -> s.getTask()).toList());
    assertTrue(inc.getCorrelation() >= 0.35, "correlation " + inc.getCorrelation());

    List<CpiSpec> webSpecs = run.specs.stream().filter(s -> s.getJob().equals("web")).toList();
    assertEquals(5, webSpecs.size(), "periods ending at 10, 20, 30, 40, 50 minutes: " + webSpecs);
    CpiSpec first =
        webSpecs.stream()
            .filter(s -> s.getPeriodEndUs() == T0 + 10 * MIN)
            .findFirst()
            .orElseThrow();
    assertTrue(first.getUsable());
    assertEquals(5, first.getNumTasks());
    assertEquals(1.0, first.getCpiMean(), 0.01);
    assertTrue(
        run.specs.stream().filter(s -> s.getJob().equals("video")).noneMatch(CpiSpec::getUsable),
        "one task only");

    List<CapOutcome> judged = run.outcomes;
    assertEquals(1, judged.size(), "outcomes: " + judged);
    assertEquals(Verdict.TRUE_POSITIVE, judged.get(0).getVerdict());
    assertTrue(
        judged.get(0).getRelativeCpi() < 0.8, "relative CPI " + judged.get(0).getRelativeCpi());

    List<DeadLetter> letters = run.deadLetters;
    assertEquals(4, letters.size(), "dead letters: " + letters);
    assertEquals(
        2, letters.stream().filter(d -> d.getSourceTopic().equals("cpi2.samples")).count());
    assertEquals(
        1, letters.stream().filter(d -> d.getSourceTopic().equals("cpi2.actions")).count());
    assertEquals(1, letters.stream().filter(d -> d.getSourceTopic().equals("cpi2.specs")).count());
  }

  /**
   * The job decides on event time only: the same records in orders a Kafka cluster may deliver them
   * (the hosts' samples of a minute interleaved differently; the actions' topic read before the
   * samples' or after all of them) give the same incidents, specs, outcomes and dead letters.
   */
  @Test
  void everyOrderOfDeliveryGivesTheSameOutput() throws Exception {
    List<String> reference = outputs(GraphRun.run(OPTIONS, samples(), actions(), seeds()));
    assertTrue(reference.stream().anyMatch(o -> o.contains("TRUE_POSITIVE")), "" + reference);
    for (GraphRun.ActionsAt at :
        List.of(GraphRun.ActionsAt.AFTER_SAMPLES, GraphRun.ActionsAt.BEFORE_SAMPLES)) {
      GraphRun run = GraphRun.run(OPTIONS, samples(), actions(), seeds(), null, at);
      assertSameOutputs(reference, outputs(run), "actions " + at);
    }
    for (long seed : new long[] {1, 2}) {
      GraphRun run =
          GraphRun.run(OPTIONS, shuffledWithinMinutes(samples(), seed), actions(), seeds());
      assertSameOutputs(reference, outputs(run), "samples of each minute shuffled, seed " + seed);
    }
  }

  /** Fails naming the records only one of the two has. */
  static void assertSameOutputs(List<String> expected, List<String> got, String what) {
    List<String> missing = new ArrayList<>(expected);
    missing.removeAll(got);
    List<String> extra = new ArrayList<>(got);
    extra.removeAll(expected);
    assertTrue(
        expected.equals(got), what + ": only in the reference " + missing + "; only here " + extra);
  }

  /**
   * {@code records} with each minute's records (the samples of one window start, and the records
   * that are not samples among them) in a random order; the minutes keep theirs.
   */
  static List<RawRecord> shuffledWithinMinutes(List<RawRecord> records, long seed) {
    Wire<CpiSample> wire = Wire.of(CpiSample.class);
    Random random = new Random(seed);
    List<RawRecord> out = new ArrayList<>();
    List<RawRecord> minute = new ArrayList<>();
    long time = Long.MIN_VALUE;
    for (RawRecord r : records) {
      long t = time;
      try {
        t = wire.decode(r.value).getWindowStartUs();
      } catch (WireFormatException | RuntimeException notASample) {
        // stays in the minute it was given in
      }
      if (t != time) {
        Collections.shuffle(minute, random);
        out.addAll(minute);
        minute.clear();
        time = t;
      }
      minute.add(r);
    }
    Collections.shuffle(minute, random);
    out.addAll(minute);
    return out;
  }

  /**
   * Everything a run wrote, one line per record, sorted, without the dead letters' wall-clock
   * times; numbers to 6 decimal places. A spec's moments are sums whose order of addition follows
   * the checkpoints, so they differ in their last bits from run to run, and the standard deviation
   * of a constant series, the square root of a difference of such sums, is 0 or about 1.5e-8 (the
   * root of a double's precision).
   */
  static List<String> outputs(GraphRun run) {
    return Stream.of(run.incidents, run.specs, run.outcomes, run.deadLetters)
        .flatMap(List::stream)
        .map(r -> canonical((SpecificRecord) r))
        .sorted(Comparator.naturalOrder())
        .toList();
  }

  static String canonical(SpecificRecord r) {
    String text = r.getClass().getSimpleName() + " " + r;
    text = text.replaceAll("\"at_us\": \\d+", "\"at_us\": _");
    StringBuilder out = new StringBuilder();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("-?\\d+\\.\\d+(E-?\\d+)?").matcher(text);
    while (m.find()) {
      String rounded = String.format(java.util.Locale.ROOT, "%.6f", Double.parseDouble(m.group()));
      m.appendReplacement(out, rounded.equals("-0.000000") ? "0.000000" : rounded);
    }
    m.appendTail(out);
    return out.toString();
  }
}
