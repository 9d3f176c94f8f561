package org.cpi2.flink.bench;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.cpi2.loader.clickhouse.ContractColumns;
import org.cpi2.loader.clickhouse.JsonRows;
import org.cpi2.loader.clickhouse.LegacyJsonRows;
import org.cpi2.loader.clickhouse.RowBatch;
import org.cpi2.loader.clickhouse.RowBinaryRows;
import org.cpi2.loader.clickhouse.RowEncoder;
import org.cpi2.loader.clickhouse.RowShape;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Cost of turning CpiSample records into the body of a ClickHouse insert, one thread, per row (a
 * batch of {@value #ROWS} rows per call). {@code legacy} is what the sink did on the task thread
 * before: a String per row (LegacyJsonRows), appended to a StringBuilder, the batch made a String
 * and then UTF-8 bytes (HttpRequest.BodyPublishers.ofString). {@code json} is JsonRows writing
 * UTF-8 into a reused RowBatch (the JSONEachRow fallback); {@code rowBinary} is RowBinaryRows,
 * compiled for the columns of cpi2.samples (ContractColumns: what the migrations give;
 * LowCardinality would not change the bytes), into a reused RowBatch. The samples look like
 * fleetsim's: 70-char platform, full-precision CPU usage and CPI, 11-digit counters.
 *
 * <p>Run: {@code make -C flink-jobs bench-json} (JMH, wall time, then {@link #main}: CPU time of
 * this thread per row, alternating the three, which a busy shared machine disturbs less).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class JsonRowsBenchmark {
  static final int ROWS = 1000;

  private CpiSample[] samples;
  private RowEncoder<CpiSample> json;
  private RowEncoder<CpiSample> rowBinary;
  private RowBatch batch;
  private StringBuilder buffer;

  @Setup
  public void setUp() {
    Random rnd = new Random(42);
    samples = new CpiSample[ROWS];
    for (int i = 0; i < ROWS; i++) {
      String job = "batch-tenant-" + (i % 25);
      samples[i] =
          CpiSample.newBuilder()
              .setHost("host-" + (i % 4000))
              .setTask("jobs/" + job + "/" + i)
              .setJob(job)
              .setTaskId(Integer.toString(i))
              .setPlatform("GenuineIntel/6/44/Intel(R) Xeon(R) CPU X5650 @ 2.67GHz (simulated)")
              .setTaskClass(i % 3 == 0 ? TaskClass.LATENCY_SENSITIVE : TaskClass.BATCH)
              .setIsProtected(false)
              .setWindowStartUs(1_795_389_455_000_000L + i * 60_000_000L)
              .setWindowUs(10_000_000L)
              .setCycles(17_000_000_000L + rnd.nextInt(1 << 30))
              .setInstructions(13_000_000_000L + rnd.nextInt(1 << 30))
              .setCounterSource(CounterSource.SIMULATED)
              .setTimeRunningRatio(1.0)
              .setCpuUsage(rnd.nextDouble())
              .setCpi(1 + rnd.nextDouble())
              .setLlcMisses(14_000_000L + rnd.nextInt(1 << 20))
              .setNumaScore(null)
              .setThreads(8)
              .build();
    }
    RowShape<CpiSample> shape = RowShape.records(CpiSample.getClassSchema(), Set.of());
    json = JsonRows.of(shape);
    try {
      rowBinary = RowBinaryRows.compile(shape, ContractColumns.of(shape, false)).encoder();
    } catch (RowBinaryRows.Unsupported e) {
      throw new IllegalStateException(e);
    }
    batch = new RowBatch();
    buffer = new StringBuilder();
  }

  @Benchmark
  @OperationsPerInvocation(ROWS)
  public byte[] legacy() {
    buffer.setLength(0);
    for (CpiSample s : samples) {
      buffer.append(LegacyJsonRows.row(s, Set.of())).append('\n');
    }
    return buffer.toString().getBytes(StandardCharsets.UTF_8);
  }

  @Benchmark
  @OperationsPerInvocation(ROWS)
  public int json() {
    return encode(json);
  }

  @Benchmark
  @OperationsPerInvocation(ROWS)
  public int rowBinary() {
    return encode(rowBinary);
  }

  private int encode(RowEncoder<CpiSample> encoder) {
    batch.clear();
    for (CpiSample s : samples) {
      encoder.encode(s, batch);
    }
    return batch.length();
  }

  /**
   * CPU time per row of this thread (ThreadMXBean), legacy, json and rowBinary alternating, 20
   * rounds of 200 batches after 10 of warm-up; prints the median and the best round of each, and
   * the bytes per row.
   */
  public static void main(String[] args) {
    JsonRowsBenchmark b = new JsonRowsBenchmark();
    b.setUp();
    java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
    int rounds = 30;
    int warmUp = 10;
    int batches = 200;
    String[] names = {"legacy", "json", "rowBinary"};
    double[][] ns = new double[names.length][rounds - warmUp];
    long[] bytes = new long[names.length];
    long sink = 0;
    for (int r = 0; r < rounds; r++) {
      for (int which = 0; which < names.length; which++) {
        long t0 = mx.getCurrentThreadCpuTime();
        for (int i = 0; i < batches; i++) {
          bytes[which] = which == 0 ? b.legacy().length : which == 1 ? b.json() : b.rowBinary();
          sink += bytes[which];
        }
        if (r >= warmUp) {
          ns[which][r - warmUp] = (mx.getCurrentThreadCpuTime() - t0) / (double) (batches * ROWS);
        }
      }
    }
    for (int which = 0; which < names.length; which++) {
      java.util.Arrays.sort(ns[which]);
      System.out.printf(
          "%-9s %6.0f ns CPU per row (median of %d rounds, best %.0f): %,.0f rows/s per core; %d bytes per row%n",
          names[which],
          ns[which][ns[which].length / 2],
          ns[which].length,
          ns[which][0],
          1e9 / ns[which][ns[which].length / 2],
          bytes[which] / ROWS);
    }
    System.out.printf(
        "json / legacy: %.1fx faster; rowBinary / json: %.1fx faster%n",
        ns[0][ns[0].length / 2] / ns[1][ns[1].length / 2],
        ns[1][ns[1].length / 2] / ns[2][ns[2].length / 2]);
    if (sink == 42) {
      System.out.println();
    }
  }
}
