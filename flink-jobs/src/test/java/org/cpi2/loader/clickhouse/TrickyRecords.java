package org.cpi2.loader.clickhouse;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
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

/**
 * Records of every type the job writes to ClickHouse, with tricky values: strings full of quotes,
 * backslashes, control characters, non-ASCII and non-BMP characters and lone surrogates; doubles of
 * any bit pattern, NaN and infinities; extreme ints and longs; nulls in every nullable field;
 * random bytes. Two flavours: {@link #anything} for the encoders alone, {@link #forTables} for rows
 * that go into the real tables, where the values of the partition key (a timestamp) stay within one
 * day of 2100-01-01 (ClickHouse refuses an insert into more than 100 partitions, and would expire
 * rows of the past by TTL), each row's is unique, and the doubles of non-Nullable columns are
 * finite (JSON writes a non-finite double as null, which servers store as NaN or 0; RowBinary keeps
 * it: tested apart).
 */
final class TrickyRecords {
  static final String[] TRICKY = {
    "",
    "plain",
    "quote \" in",
    "back\\slash",
    "new\nline",
    "cr\r",
    "tab\t",
    "\u0000nul",
    "\u0001\u001f\u007f",
    "\b\f",
    "é, ß, ü",
    "日本語",
    "emoji \uD83D\uDE00 pair",
    "lone high \uD83D",
    "lone low \uDE00 here",
    "\uDE00\uD83D",
    "ends with high \uD83D",
    "\"\\\"",
    "{\"json\":[1]}",
    "\u2028\u2029",
    "\uFFFF\uFFFE",
    "mixed \u00e9\t\"\uD834\uDD1E\\"
  };
  private static final long Y2100_US = 4_102_444_800_000_000L;

  private final SplittableRandom rnd;
  private final boolean forTables;
  private long rows;

  private TrickyRecords(long seed, boolean forTables) {
    this.rnd = new SplittableRandom(seed);
    this.forTables = forTables;
  }

  static TrickyRecords anything(long seed) {
    return new TrickyRecords(seed, false);
  }

  static TrickyRecords forTables(long seed) {
    return new TrickyRecords(seed, true);
  }

  CpiSample sample(int i) {
    return CpiSample.newBuilder()
        .setHost(str())
        .setTask(str())
        .setJob(str())
        .setTaskId(str())
        .setPlatform(str())
        .setTaskClass(TaskClass.values()[i % TaskClass.values().length])
        .setIsProtected(i % 2 == 0)
        .setWindowStartUs(time())
        .setWindowUs(i % 3 == 0 ? Long.MIN_VALUE : Long.MAX_VALUE)
        .setCycles(rnd.nextLong(1L << 40))
        .setInstructions(-rnd.nextLong(1000))
        .setCounterSource(CounterSource.values()[i % CounterSource.values().length])
        .setTimeRunningRatio(dbl())
        .setCpuUsage(dbl())
        .setCpi(i % 4 == 0 ? null : anyDbl())
        .setLlcMisses(i % 5 == 0 ? null : rnd.nextLong())
        .setNumaScore(i % 3 == 0 ? null : anyDbl())
        .setThreads(i % 2 == 0 ? null : integer())
        .setCpuPressure(i % 3 == 1 ? null : anyDbl())
        .setMemoryPressure(i % 2 == 1 ? null : anyDbl())
        .setMemoryPressureFull(i % 5 == 1 ? null : anyDbl())
        .setLlcOccupancyBytes(i % 3 == 2 ? null : rnd.nextLong())
        .setMemoryBandwidthBytesPerS(i % 4 == 1 ? null : anyDbl())
        .setLlcMpki(i % 2 == 0 ? null : anyDbl())
        .setHostCpus(i % 3 == 0 ? null : integer())
        .setCpuPerOp(i % 4 == 2 ? null : anyDbl())
        .setLatency(i % 5 == 3 ? null : anyDbl())
        .build();
  }

  CpiSpec spec(int i) {
    return CpiSpec.newBuilder()
        .setJob(str())
        .setPlatform(str())
        .setPeriodEndUs(time())
        .setNumSamples(rnd.nextLong())
        .setNumTasks(integer())
        .setEligibleTasks(rnd.nextInt())
        .setCpuUsageMean(dbl())
        .setCpiMean(dbl())
        .setCpiStddev(dbl())
        .setUsable(i % 2 == 0)
        .setWeightedCount(dbl())
        .setWeightedSum(dbl())
        .setWeightedSumSq(dbl())
        .setWeightedCpuSum(dbl())
        .setSignal(i % 3 == 0 ? "cpi" : str())
        .build();
  }

  EnforcementAction action(int i) {
    return EnforcementAction.newBuilder()
        .setActionId(str())
        .setHost(str())
        .setAtUs(time())
        .setKind(ActionKind.values()[i % ActionKind.values().length])
        .setCause(ActionCause.values()[i % ActionCause.values().length])
        .setTask(str())
        .setIncidentId(i % 2 == 0 ? null : str())
        .setCommandId(i % 3 == 0 ? null : str())
        .setVictimTask(i % 2 == 0 ? str() : null)
        .setVictimJob(i % 5 == 0 ? str() : null)
        .setCapCpu(i % 2 == 0 ? anyDbl() : null)
        .setPeriodUs(i % 2 == 0 ? rnd.nextLong() : null)
        .setExpiresAtUs(i % 4 == 1 ? Long.MIN_VALUE : null)
        .setPreviousLimit(i % 2 == 0 ? str() : null)
        .setReason(str())
        .build();
  }

  CapOutcome outcome(int i) {
    return CapOutcome.newBuilder()
        .setActionId(str())
        .setIncidentId(i % 2 == 0 ? null : str())
        .setHost(str())
        .setJudgedAtUs(time())
        .setVictimTask(str())
        .setVictimJob(str())
        .setVictimClass(TaskClass.values()[i % TaskClass.values().length])
        .setAntagonistTask(str())
        .setCorrelation(i % 2 == 0 ? null : anyDbl())
        .setCpiBefore(dbl())
        .setCpiDuring(dbl())
        .setRelativeCpi(dbl())
        .setSpecStddev(dbl())
        .setSamplesBefore(integer())
        .setSamplesDuring(rnd.nextInt())
        .setVerdict(Verdict.values()[i % Verdict.values().length])
        .build();
  }

  Incident incident(int i) {
    List<Suspect> suspects = new ArrayList<>();
    for (int k = 0; k < i % 4; k++) {
      suspects.add(
          Suspect.newBuilder()
              .setTask(str())
              .setJob(str())
              .setTaskClass(TaskClass.values()[k % TaskClass.values().length])
              .setCorrelation(dbl())
              .setCpuUsage(dbl())
              .setLift(k % 2 == 0 ? null : anyDbl())
              .build());
    }
    List<String> excluded = new ArrayList<>();
    for (int k = 0; k < i % 3; k++) {
      excluded.add(str());
    }
    return Incident.newBuilder()
        .setIncidentId(str())
        .setHost(str())
        .setDetectedAtUs(time())
        .setRound(integer())
        .setVictimTask(str())
        .setVictimJob(str())
        .setVictimPlatform(str())
        .setVictimClass(TaskClass.values()[i % TaskClass.values().length])
        .setVictimProtected(i % 2 == 0)
        .setVictimCpi(dbl())
        .setVictimCpuUsage(dbl())
        .setCpiThreshold(dbl())
        .setSpecMean(dbl())
        .setSpecStddev(dbl())
        .setWindowStartUs(rnd.nextLong())
        .setWindowEndUs(rnd.nextLong())
        .setSuspects(suspects)
        .setExcludedTasks(excluded)
        .setDecision(Decision.values()[i % Decision.values().length])
        .setAntagonistTask(i % 2 == 0 ? null : str())
        .setAntagonistJob(i % 2 == 0 ? null : str())
        .setAntagonistClass(i % 2 == 0 ? null : TaskClass.BATCH)
        .setCorrelation(i % 2 == 0 ? null : anyDbl())
        .setCapCpu(i % 3 == 0 ? null : anyDbl())
        .setCapDurationS(i % 2 == 0 ? null : integer())
        .setMachineCpuUtilization(i % 2 == 0 ? null : anyDbl())
        .setSignal(i % 3 == 0 ? "cpu_pressure" : str())
        .build();
  }

  DeadLetter deadLetter(int i) {
    byte[] payload = new byte[rnd.nextInt(0, 64)];
    for (int k = 0; k < payload.length; k++) {
      payload[k] = (byte) rnd.nextInt();
    }
    return DeadLetter.newBuilder()
        .setAtUs(time())
        .setComponent(str())
        .setSourceTopic(str())
        .setPartition(integer())
        .setOffset(i % 7 == 0 ? Long.MAX_VALUE - i : rnd.nextLong())
        .setReason(str())
        .setPayload(ByteBuffer.wrap(payload))
        .build();
  }

  /** A timestamp: any long, or (forTables) unique and within a day of 2100-01-01. */
  long time() {
    return forTables ? Y2100_US + 1_000 * ++rows + rnd.nextInt(1_000) : rnd.nextLong();
  }

  /** Any int, often the extremes. */
  int integer() {
    return switch (rnd.nextInt(4)) {
      case 0 -> Integer.MIN_VALUE;
      case 1 -> Integer.MAX_VALUE;
      default -> rnd.nextInt();
    };
  }

  /** A tricky string, a random mix of tricky pieces, or random UTF-16 units (surrogates too). */
  String str() {
    switch (rnd.nextInt(4)) {
      case 0:
        return TRICKY[rnd.nextInt(TRICKY.length)];
      case 1:
        {
          StringBuilder sb = new StringBuilder();
          for (int k = rnd.nextInt(5); k >= 0; k--) {
            sb.append(TRICKY[rnd.nextInt(TRICKY.length)]);
          }
          return sb.toString();
        }
      case 2:
        {
          char[] c = new char[rnd.nextInt(0, 40)];
          for (int k = 0; k < c.length; k++) {
            c[k] = (char) rnd.nextInt(0x10000);
          }
          return new String(c);
        }
      default:
        {
          char[] c = new char[rnd.nextInt(0, 40)];
          for (int k = 0; k < c.length; k++) {
            c[k] = (char) rnd.nextInt(0x80);
          }
          return new String(c);
        }
    }
  }

  /** A double for a field whose column is not Nullable: finite when the rows go into tables. */
  double dbl() {
    double d = anyDbl();
    while (forTables && !Double.isFinite(d)) {
      d = anyDbl();
    }
    return d;
  }

  /** Doubles of every kind: random bits (NaN and infinities included), CPI-like, short decimals. */
  double anyDbl() {
    return switch (rnd.nextInt(6)) {
      case 0 -> Double.longBitsToDouble(rnd.nextLong());
      case 1 -> 1 + 3 * rnd.nextDouble();
      case 2 -> rnd.nextInt(-1000, 1000) / 100.0;
      case 3 ->
          new double[] {
                Double.NaN,
                Double.POSITIVE_INFINITY,
                Double.NEGATIVE_INFINITY,
                -0.0,
                0.0,
                Double.MIN_VALUE,
                Double.MAX_VALUE,
                1e-5,
                1e7,
                1e21
              }
              [rnd.nextInt(10)];
      case 4 -> rnd.nextDouble();
      default -> rnd.nextDouble() * Math.pow(10, rnd.nextInt(-20, 25));
    };
  }
}
