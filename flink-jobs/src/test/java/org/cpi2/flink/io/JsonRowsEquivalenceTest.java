package org.cpi2.flink.io;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import org.apache.avro.generic.IndexedRecord;
import org.cpi2.schema.ActionCause;
import org.cpi2.schema.ActionKind;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Decision;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.schema.Suspect;
import org.cpi2.schema.TaskClass;
import org.cpi2.schema.Verdict;
import org.junit.jupiter.api.Test;

/**
 * JsonRows (UTF-8 bytes) against the String rows the sink sent before (LegacyJsonRows, as UTF-8
 * the way HttpRequest.BodyPublishers.ofString encoded them): every record type, with strings full
 * of quotes, backslashes, control characters, non-ASCII and non-BMP characters and lone
 * surrogates, doubles of any bit pattern, NaN and infinities, null unions and bytes, must parse
 * to the same JSON values. The new bytes must also be valid UTF-8 and strict JSON.
 */
class JsonRowsEquivalenceTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String[] TRICKY = {
    "", "plain", "quote \" in", "back\\slash", "new\nline", "cr\r", "tab\t", "\u0000nul", "\u0001\u001f\u007f",
    "\b\f", "é, ß, ü", "日本語", "emoji \uD83D\uDE00 pair", "lone high \uD83D", "lone low \uDE00 here", "\uDE00\uD83D",
    "ends with high \uD83D", "\"\\\"", "{\"json\":[1]}", "\u2028\u2029", "\uFFFF\uFFFE", "mixed \u00e9\t\"\uD834\uDD1E\\"
  };

  private final SplittableRandom rnd = new SplittableRandom(2024);

  @Test
  void samplesWithTrickyValuesParseTheSame() throws Exception {
    for (int i = 0; i < 2000; i++) {
      CpiSample s =
          CpiSample.newBuilder()
              .setHost(str()).setTask(str()).setJob(str()).setTaskId(str()).setPlatform(str())
              .setTaskClass(TaskClass.values()[i % TaskClass.values().length]).setIsProtected(i % 2 == 0)
              .setWindowStartUs(rnd.nextLong()).setWindowUs(i % 3 == 0 ? Long.MIN_VALUE : Long.MAX_VALUE)
              .setCycles(rnd.nextLong(1L << 40)).setInstructions(-rnd.nextLong(1000))
              .setCounterSource(CounterSource.values()[i % CounterSource.values().length])
              .setTimeRunningRatio(dbl()).setCpuUsage(dbl()).setCpi(i % 4 == 0 ? null : dbl())
              .setLlcMisses(i % 5 == 0 ? null : rnd.nextLong()).setNumaScore(i % 3 == 0 ? null : dbl())
              .setThreads(i % 2 == 0 ? null : rnd.nextInt())
              .build();
      same(s, Set.of());
    }
  }

  @Test
  void specsActionsOutcomesParseTheSame() throws Exception {
    for (int i = 0; i < 500; i++) {
      same(CpiSpec.newBuilder().setJob(str()).setPlatform(str()).setPeriodEndUs(rnd.nextLong()).setNumSamples(rnd.nextLong())
          .setNumTasks(rnd.nextInt()).setEligibleTasks(rnd.nextInt()).setCpuUsageMean(dbl()).setCpiMean(dbl())
          .setCpiStddev(dbl()).setUsable(i % 2 == 0).setWeightedCount(dbl()).setWeightedSum(dbl())
          .setWeightedSumSq(dbl()).setWeightedCpuSum(dbl()).build(), Set.of());
      same(EnforcementAction.newBuilder().setActionId(str()).setHost(str()).setAtUs(rnd.nextLong())
          .setKind(ActionKind.values()[i % ActionKind.values().length])
          .setCause(ActionCause.values()[i % ActionCause.values().length]).setTask(str())
          .setIncidentId(i % 2 == 0 ? null : str()).setCommandId(i % 3 == 0 ? null : str())
          .setVictimTask(i % 2 == 0 ? str() : null).setVictimJob(null).setCapCpu(i % 2 == 0 ? dbl() : null)
          .setPeriodUs(i % 2 == 0 ? rnd.nextLong() : null).setExpiresAtUs(null).setPreviousLimit(i % 2 == 0 ? str() : null)
          .setReason(str()).build(), Set.of());
      same(CapOutcome.newBuilder().setActionId(str()).setIncidentId(i % 2 == 0 ? null : str()).setHost(str())
          .setJudgedAtUs(rnd.nextLong()).setVictimTask(str()).setVictimJob(str())
          .setVictimClass(TaskClass.values()[i % TaskClass.values().length]).setAntagonistTask(str())
          .setCorrelation(i % 2 == 0 ? null : dbl()).setCpiBefore(dbl()).setCpiDuring(dbl()).setRelativeCpi(dbl())
          .setSpecStddev(dbl()).setSamplesBefore(rnd.nextInt()).setSamplesDuring(rnd.nextInt())
          .setVerdict(Verdict.values()[i % Verdict.values().length]).build(), Set.of());
    }
  }

  @Test
  void incidentsAndTheirSuspectsParseTheSame() throws Exception {
    for (int i = 0; i < 500; i++) {
      List<Suspect> suspects = new ArrayList<>();
      for (int k = 0; k < i % 4; k++) {
        suspects.add(Suspect.newBuilder().setTask(str()).setJob(str()).setTaskClass(TaskClass.values()[k % TaskClass.values().length])
            .setCorrelation(dbl()).setCpuUsage(dbl()).setLift(k % 2 == 0 ? null : dbl()).build());
      }
      List<String> excluded = new ArrayList<>();
      for (int k = 0; k < i % 3; k++) {
        excluded.add(str());
      }
      Incident incident =
          Incident.newBuilder()
              .setIncidentId(str()).setHost(str()).setDetectedAtUs(rnd.nextLong()).setRound(rnd.nextInt())
              .setVictimTask(str()).setVictimJob(str()).setVictimPlatform(str())
              .setVictimClass(TaskClass.values()[i % TaskClass.values().length]).setVictimProtected(i % 2 == 0)
              .setVictimCpi(dbl()).setVictimCpuUsage(dbl()).setCpiThreshold(dbl()).setSpecMean(dbl()).setSpecStddev(dbl())
              .setWindowStartUs(rnd.nextLong()).setWindowEndUs(rnd.nextLong()).setSuspects(suspects).setExcludedTasks(excluded)
              .setDecision(Decision.values()[i % Decision.values().length]).setAntagonistTask(i % 2 == 0 ? null : str())
              .setAntagonistJob(i % 2 == 0 ? null : str()).setAntagonistClass(i % 2 == 0 ? null : TaskClass.BATCH)
              .setCorrelation(i % 2 == 0 ? null : dbl()).setCapCpu(i % 3 == 0 ? null : dbl())
              .setCapDurationS(i % 2 == 0 ? null : rnd.nextInt()).setMachineCpuUtilization(i % 2 == 0 ? null : dbl())
              .build();
      same(incident, Set.of("suspects"));
      same(incident, Set.of()); // the suspects as a nested array, as the legacy rows did
      List<String> legacy = LegacyJsonRows.suspects(incident);
      RowBatch batch = new RowBatch(64);
      JsonRows.suspects().encode(incident, batch);
      assertEquals(legacy.size(), batch.rows());
      List<JsonNode> rows = parseRows(batch);
      for (int k = 0; k < legacy.size(); k++) {
        sameJson(parseLegacy(legacy.get(k)), rows.get(k), legacy.get(k));
      }
    }
  }

  @Test
  void deadLettersWithBytesParseTheSame() throws Exception {
    for (int i = 0; i < 500; i++) {
      byte[] payload = new byte[rnd.nextInt(0, 64)];
      for (int k = 0; k < payload.length; k++) {
        payload[k] = (byte) rnd.nextInt();
      }
      ByteBuffer buf = ByteBuffer.wrap(payload);
      DeadLetter d = DeadLetter.newBuilder().setAtUs(rnd.nextLong()).setComponent(str()).setSourceTopic(str())
          .setPartition(rnd.nextInt()).setOffset(rnd.nextLong()).setReason(str()).setPayload(buf).build();
      same(d, Set.of());
      assertEquals(0, buf.position(), "the payload is left as it was");
    }
  }

  @Test
  void rowsAreAppendedOneAfterTheOtherInOneBatch() throws Exception {
    RowBatch batch = new RowBatch(16); // grows
    List<String> legacy = new ArrayList<>();
    RowEncoder<CpiSample> encoder = JsonRows.records(CpiSample.getClassSchema(), Set.of());
    for (int i = 0; i < 300; i++) {
      CpiSample s = org.cpi2.flink.Fixtures.sample(str(), "web/" + i, TaskClass.BATCH, i, i % 2 == 0 ? null : dbl(), dbl());
      encoder.encode(s, batch);
      legacy.add(LegacyJsonRows.row(s, Set.of()));
    }
    List<JsonNode> rows = parseRows(batch);
    assertEquals(300, rows.size());
    for (int i = 0; i < rows.size(); i++) {
      sameJson(parseLegacy(legacy.get(i)), rows.get(i), legacy.get(i));
    }
  }

  private void same(IndexedRecord r, Set<String> skip) throws Exception {
    String legacy = LegacyJsonRows.row((org.apache.avro.specific.SpecificRecord) r, skip);
    RowBatch batch = new RowBatch(64);
    JsonRows.records(r.getSchema(), skip).encode(r, batch);
    assertEquals(1, batch.rows());
    List<JsonNode> rows = parseRows(batch);
    sameJson(parseLegacy(legacy), rows.get(0), legacy);
  }

  /** The legacy row as ClickHouse received it: UTF-8 (a lone surrogate became '?'). */
  private static JsonNode parseLegacy(String row) throws Exception {
    return JSON.readTree(row.getBytes(StandardCharsets.UTF_8));
  }

  /** The batch's rows: strict UTF-8, one JSON object per line. */
  private static List<JsonNode> parseRows(RowBatch batch) throws Exception {
    String text;
    try {
      text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(batch.array(), 0, batch.length())).toString();
    } catch (CharacterCodingException e) {
      throw new AssertionError("not valid UTF-8: " + batch, e);
    }
    List<JsonNode> rows = new ArrayList<>();
    if (text.isEmpty()) {
      return rows;
    }
    assertTrue(text.endsWith("\n"), "every row ends with a newline");
    for (String line : text.substring(0, text.length() - 1).split("\n", -1)) {
      rows.add(JSON.readTree(line));
    }
    assertEquals(batch.rows(), rows.size());
    return rows;
  }

  /** Same JSON values: numbers compared by value (integers exactly, others as doubles). */
  private static void sameJson(JsonNode expected, JsonNode actual, String context) {
    if (expected.isNumber() && actual.isNumber()) {
      boolean same = expected.isIntegralNumber() && actual.isIntegralNumber()
          ? expected.bigIntegerValue().equals(actual.bigIntegerValue())
          : Double.doubleToLongBits(expected.doubleValue()) == Double.doubleToLongBits(actual.doubleValue());
      if (!same) {
        fail("number " + expected + " written as " + actual + " in " + context);
      }
      return;
    }
    assertEquals(expected.getNodeType(), actual.getNodeType(), context);
    if (expected.isObject()) {
      List<String> names = new ArrayList<>();
      expected.fieldNames().forEachRemaining(names::add);
      List<String> actualNames = new ArrayList<>();
      actual.fieldNames().forEachRemaining(actualNames::add);
      assertEquals(names, actualNames, context);
      Iterator<Map.Entry<String, JsonNode>> it = expected.fields();
      while (it.hasNext()) {
        Map.Entry<String, JsonNode> e = it.next();
        sameJson(e.getValue(), actual.get(e.getKey()), context);
      }
    } else if (expected.isArray()) {
      assertEquals(expected.size(), actual.size(), context);
      for (int i = 0; i < expected.size(); i++) {
        sameJson(expected.get(i), actual.get(i), context);
      }
    } else {
      assertEquals(expected, actual, context);
    }
  }

  /** A tricky string, a random mix of tricky pieces, or random UTF-16 units (surrogates too). */
  private String str() {
    switch (rnd.nextInt(4)) {
      case 0:
        return TRICKY[rnd.nextInt(TRICKY.length)];
      case 1: {
        StringBuilder sb = new StringBuilder();
        for (int k = rnd.nextInt(5); k >= 0; k--) {
          sb.append(TRICKY[rnd.nextInt(TRICKY.length)]);
        }
        return sb.toString();
      }
      case 2: {
        char[] c = new char[rnd.nextInt(0, 40)];
        for (int k = 0; k < c.length; k++) {
          c[k] = (char) rnd.nextInt(0x10000);
        }
        return new String(c);
      }
      default: {
        char[] c = new char[rnd.nextInt(0, 40)];
        for (int k = 0; k < c.length; k++) {
          c[k] = (char) rnd.nextInt(0x80);
        }
        return new String(c);
      }
    }
  }

  /** Doubles of every kind: random bits (NaN and infinities included), CPI-like, short decimals. */
  private double dbl() {
    return switch (rnd.nextInt(6)) {
      case 0 -> Double.longBitsToDouble(rnd.nextLong());
      case 1 -> 1 + 3 * rnd.nextDouble();
      case 2 -> rnd.nextInt(-1000, 1000) / 100.0;
      case 3 -> new double[] {Double.NaN, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, -0.0, 0.0,
          Double.MIN_VALUE, Double.MAX_VALUE, 1e-5, 1e7, 1e21}[rnd.nextInt(10)];
      case 4 -> rnd.nextDouble();
      default -> rnd.nextDouble() * Math.pow(10, rnd.nextInt(-20, 25));
    };
  }
}
