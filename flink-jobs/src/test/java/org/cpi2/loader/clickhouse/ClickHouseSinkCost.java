package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;

/**
 * ClickHouse server CPU per sample row inserted through the real sink writer (its encoder, the
 * sender thread, ClickHouseTable), by batch size: utime + stime of the clickhouse-server process
 * (/proc/PID/stat) over the inserts and {@value #SETTLE_MS} ms after (the merges they cause), minus
 * what the server used meanwhile without us (its rate over {@value #IDLE_MS} ms just before: the
 * server is shared). Rows go to a throw-away database with cpi2.samples' table and its materialized
 * view (cloned from {@code cpi2} with SHOW CREATE), dropped at the end. The batch sizes alternate
 * within each repeat.
 *
 * <p>Usage: {@code ClickHouseSinkCost [ROWS [REPEATS [ROWS_PER_BATCH ...]]]}, default 500000 rows,
 * 2 repeats, batches of 100000 rows (the default; 32 MiB bounds them too, as in the job). Run:
 * {@code make -C flink-jobs bench-clickhouse}. Not a test: it loads the shared machine.
 */
public final class ClickHouseSinkCost {
  static final long IDLE_MS = 3_000;
  static final long SETTLE_MS = 5_000;
  static final long BATCH_BYTES = 32L << 20;
  static final String SOURCE_DB = System.getenv().getOrDefault("CLICKHOUSE_SOURCE_DB", "cpi2");
  static final String DB = "cpi2_sink_cost_" + ProcessHandle.current().pid();

  private ClickHouseSinkCost() {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 500_000;
    int repeats = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    List<Integer> batches = new ArrayList<>();
    for (int i = 2; i < args.length; i++) {
      batches.add(Integer.parseInt(args[i]));
    }
    if (batches.isEmpty()) {
      batches = List.of(100_000);
    }
    long pid = serverPid();
    long tick = clockTick();
    List<CpiSample> samples = samples(rows);
    LocalClickHouse.query("CREATE DATABASE IF NOT EXISTS " + DB);
    try {
      createTables();
      List<TableColumn> columns;
      try (ClickHouseTable t = new ClickHouseTable(LocalClickHouse.URL, DB, "samples", 1, 10)) {
        columns = t.columns();
      }
      InsertPlan<CpiSample> plan =
          InsertPlan.forTable(ClickHouseSinks.SAMPLES, DB + ".samples", columns);
      System.out.printf(
          "clickhouse-server pid %d; %d sample rows per run; RowBinary bytes per row: %s%n",
          pid, rows, averageRowBytes(samples, plan));
      for (int r = 1; r <= repeats; r++) {
        for (int batchRows : batches) {
          run(pid, tick, samples, plan, batchRows, r);
        }
      }
    } finally {
      LocalClickHouse.query("DROP DATABASE IF EXISTS " + DB);
    }
  }

  private static void run(
      long pid,
      long tick,
      List<CpiSample> samples,
      InsertPlan<CpiSample> plan,
      int batchRows,
      int repeat)
      throws Exception {
    createTables();
    long idleCpu0 = cpuMs(pid, tick);
    long idle0 = System.nanoTime();
    Thread.sleep(IDLE_MS);
    double idleRate = (cpuMs(pid, tick) - idleCpu0) / ((System.nanoTime() - idle0) / 1e6);

    AtomicInteger inserts = new AtomicInteger();
    ClickHouseTable table = new ClickHouseTable(LocalClickHouse.URL, DB, "samples", 6, 200);
    BatchSender.Insert counting =
        new BatchSender.Insert() {
          @Override
          public void insert(byte[] body, int length, int n)
              throws IOException, InterruptedException {
            inserts.incrementAndGet();
            table.insert(plan.columns(), body, length, n);
          }

          @Override
          public void close() {
            table.close();
          }
        };
    ClickHouseSink.Writer<CpiSample> w =
        new ClickHouseSink.Writer<>(
            plan.encoder(),
            new ClickHouseSink.Batching(batchRows, BATCH_BYTES, 3_600_000),
            counting,
            DB + ".samples",
            0,
            null);
    long cpu0 = cpuMs(pid, tick);
    long t0 = System.nanoTime();
    for (CpiSample s : samples) {
      w.write(s);
    }
    w.flush();
    long insertMs = (System.nanoTime() - t0) / 1_000_000;
    w.close();
    Thread.sleep(SETTLE_MS);
    long cpu = cpuMs(pid, tick) - cpu0;
    long wallMs = (System.nanoTime() - t0) / 1_000_000;
    double ours = cpu - idleRate * wallMs;
    String count = LocalClickHouse.query("SELECT count() FROM " + DB + ".samples").strip();
    if (!count.equals(Integer.toString(samples.size()))) {
      throw new IllegalStateException("expected " + samples.size() + " rows, found " + count);
    }
    System.out.printf(
        "batch-rows %6d (run %d): %3d inserts of %6d rows; server CPU %5.2f us/row (%d ms over %d ms, less %.0f ms"
            + " the server used at its idle rate); inserts took %d ms (%.0f rows/s)%n",
        batchRows,
        repeat,
        inserts.get(),
        samples.size() / inserts.get(),
        ours * 1000 / samples.size(),
        cpu,
        wallMs,
        idleRate * wallMs,
        insertMs,
        samples.size() * 1000.0 / insertMs);
  }

  private static void createTables() throws Exception {
    for (String t : List.of("samples_1m_mv", "samples_1m", "samples")) {
      LocalClickHouse.query("DROP TABLE IF EXISTS " + DB + "." + t);
    }
    for (String t : List.of("samples", "samples_1m", "samples_1m_mv")) {
      String ddl =
          LocalClickHouse.query(
              "SHOW CREATE TABLE " + SOURCE_DB + "." + t + " FORMAT TabSeparatedRaw");
      LocalClickHouse.query(ddl.strip().replace(SOURCE_DB + ".", DB + "."));
    }
  }

  /** Like fleetsim's: 4000 hosts x 25 tasks, one sample a minute each, over the last half hour. */
  static List<CpiSample> samples(int n) {
    Random rnd = new Random(42);
    String[] platforms = {
      "GenuineIntel/6/44/Intel(R) Xeon(R) CPU X5650 @ 2.67GHz (simulated)",
      "GenuineIntel/6/85/Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz (simulated)",
      "AuthenticAMD/23/49/AMD EPYC 7502 32-Core Processor (simulated)"
    };
    long start = (System.currentTimeMillis() / 60_000 - 30) * 60_000_000L;
    List<CpiSample> out = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      int host = i % 4000;
      int task = (i / 4000) % 25;
      int minute = i / 100_000;
      String job = "tenant-" + ((host * 25 + task) % 200);
      out.add(
          CpiSample.newBuilder()
              .setHost("host-" + host)
              .setTask("jobs/" + job + "/" + task)
              .setJob(job)
              .setTaskId(Integer.toString(task))
              .setPlatform(platforms[host % 3])
              .setTaskClass(task % 4 == 0 ? TaskClass.LATENCY_SENSITIVE : TaskClass.BATCH)
              .setIsProtected(false)
              .setWindowStartUs(start + minute * 60_000_000L)
              .setWindowUs(10_000_000L)
              .setCycles(17_000_000_000L + rnd.nextInt(1 << 30))
              .setInstructions(13_000_000_000L + rnd.nextInt(1 << 30))
              .setCounterSource(CounterSource.SIMULATED)
              .setTimeRunningRatio(1.0)
              .setCpuUsage(rnd.nextDouble())
              .setCpi(1 + rnd.nextDouble())
              .setLlcMisses(14_000_000L + rnd.nextInt(1 << 20))
              .setThreads(8)
              .build());
    }
    return out;
  }

  private static long averageRowBytes(List<CpiSample> samples, InsertPlan<CpiSample> plan) {
    RowBatch b = new RowBatch();
    for (CpiSample s : samples.subList(0, Math.min(10_000, samples.size()))) {
      plan.encoder().encode(s, b);
    }
    return b.length() / b.rows();
  }

  /** utime + stime of the process, ms. */
  static long cpuMs(long pid, long tickHz) throws IOException {
    String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
    // f[0] is field 3 (state): utime and stime are fields 14 and 15.
    return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * 1000 / tickHz;
  }

  static long serverPid() throws IOException {
    String given = System.getenv("CLICKHOUSE_PID");
    if (given != null) {
      return Long.parseLong(given);
    }
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      return procs
          .filter(p -> p.getFileName().toString().matches("\\d+"))
          .filter(
              p -> {
                try {
                  return Files.readString(p.resolve("cmdline"))
                          .startsWith("/usr/sbin/clickhouse-server")
                      || Files.readString(p.resolve("comm")).strip().startsWith("clickhouse-serv");
                } catch (IOException e) {
                  return false;
                }
              })
          .mapToLong(p -> Long.parseLong(p.getFileName().toString()))
          .findFirst()
          .orElseThrow(
              () -> new IllegalStateException("no clickhouse-server process; set CLICKHOUSE_PID"));
    }
  }

  static long clockTick() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").start();
      return Long.parseLong(new String(p.getInputStream().readAllBytes()).strip());
    } catch (IOException | RuntimeException e) {
      return 100;
    }
  }
}
