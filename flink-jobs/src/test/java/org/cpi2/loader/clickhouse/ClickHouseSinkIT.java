package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.connector.source.lib.NumberSequenceSource;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.correlate.Analyzer;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Decision;
import org.cpi2.schema.Incident;
import org.cpi2.schema.Suspect;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ClickHouse sink against the local ClickHouse (18.16 here): rows land, replays are invisible
 * to FINAL queries on ReplacingMergeTree tables, bad tables fail at once with ClickHouse's message,
 * an unreachable server fails after the retries. Tables are created in a throw-away database with
 * the column contract agreed with clickhouse/.
 */
class ClickHouseSinkIT {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(1)
              .build());

  static final String DB = "cpi2_sink_test_" + ProcessHandle.current().pid();

  @BeforeAll
  static void createTables() throws Exception {
    String missing = LocalClickHouse.ensureUp();
    Assumptions.assumeTrue(missing == null, missing);
    LocalClickHouse.query("CREATE DATABASE IF NOT EXISTS " + DB);
    LocalClickHouse.query(
        "CREATE TABLE "
            + DB
            + ".samples (host String, task String, job String, task_id String, platform String,"
            + " task_class String, is_protected UInt8, window_start_us Int64, window_us Int64, cycles Int64,"
            + " instructions Int64, counter_source String, time_running_ratio Float64, cpu_usage Float64,"
            + " cpi Nullable(Float64), llc_misses Nullable(Int64), numa_score Nullable(Float64), threads Nullable(Int32))"
            + " ENGINE = ReplacingMergeTree() ORDER BY (host, task, window_start_us)");
    LocalClickHouse.query(
        "CREATE TABLE "
            + DB
            + ".incidents (incident_id String, host String, detected_at_us Int64, round Int32,"
            + " victim_task String, victim_protected UInt8, decision String, antagonist_task Nullable(String),"
            + " correlation Nullable(Float64), excluded_tasks Array(String))"
            + " ENGINE = ReplacingMergeTree() ORDER BY (host, incident_id)");
    LocalClickHouse.query(
        "CREATE TABLE "
            + DB
            + ".incident_suspects (incident_id String, host String, detected_at_us Int64, rank Int32,"
            + " task String, job String, task_class String, correlation Float64, cpu_usage Float64)"
            + " ENGINE = ReplacingMergeTree() ORDER BY (host, incident_id, rank)");
    LocalClickHouse.query(
        "CREATE TABLE "
            + DB
            + ".dead_letters (at_us Int64, component String, source_topic String, partition Int32,"
            + " offset Int64, reason String, payload String)"
            + " ENGINE = ReplacingMergeTree() ORDER BY (source_topic, partition, offset)");
  }

  @AfterAll
  static void dropDatabase() throws Exception {
    if (LocalClickHouse.answers()) {
      LocalClickHouse.query("DROP DATABASE IF EXISTS " + DB);
    }
  }

  static Incident incident(String victim) {
    List<Suspect> suspects = new ArrayList<>();
    suspects.add(
        Suspect.newBuilder()
            .setTask("video/7")
            .setJob("video")
            .setTaskClass(TaskClass.BEST_EFFORT)
            .setCorrelation(0.5)
            .setCpuUsage(1e-5)
            .build());
    suspects.add(
        Suspect.newBuilder()
            .setTask("mr \"quoted\"/1")
            .setJob("mr")
            .setTaskClass(TaskClass.BATCH)
            .setCorrelation(-0.25)
            .setCpuUsage(0.5)
            .build());
    return Incident.newBuilder()
        .setIncidentId(Analyzer.incidentId("h1", victim, 600_000_000L, 1))
        .setHost("h1")
        .setDetectedAtUs(600_000_000L)
        .setVictimTask(victim)
        .setVictimJob("web")
        .setVictimPlatform("p1")
        .setVictimClass(TaskClass.LATENCY_SENSITIVE)
        .setVictimCpi(2.5)
        .setVictimCpuUsage(0.8)
        .setCpiThreshold(2)
        .setSpecMean(1.5)
        .setSpecStddev(0.25)
        .setWindowStartUs(0)
        .setWindowEndUs(600_000_000L)
        .setSuspects(suspects)
        .setExcludedTasks(List.of("old/1"))
        .setDecision(Decision.THROTTLE)
        .setAntagonistTask("video/7")
        .setAntagonistJob("video")
        .setAntagonistClass(TaskClass.BEST_EFFORT)
        .setCorrelation(0.5)
        .setCapCpu(0.01)
        .setCapDurationS(300)
        .build();
  }

  @Test
  void rowsLandAndReplaysAreIdempotentUnderFinal() throws Exception {
    ClickHouseSinks sinks =
        new ClickHouseSinks(
            LocalClickHouse.URL, DB, new ClickHouseSink.Batching(100, 1 << 20, 60_000));
    List<Incident> incidents = List.of(incident("web/0"), incident("web/1"));
    // The second run replays the same records, as after a restore; its CPU usage differs only so
    // that the test can see that its rows landed and replaced the first run's.
    for (double cpu : new double[] {0.8, 0.9}) {
      List<CpiSample> samples = new ArrayList<>();
      for (int i = 1; i <= 250; i++) {
        samples.add(
            Fixtures.sample(
                "h1",
                "web/" + (i % 5),
                TaskClass.LATENCY_SENSITIVE,
                i * 60_000_000L,
                i % 7 == 0 ? null : 1.0 + i / 1000.0,
                cpu));
      }
      StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
      env.setParallelism(1);
      sinks.samples(env.fromData(samples, RecordTypes.SAMPLE_STREAM));
      sinks.incidents(env.fromData(incidents, RecordTypes.INCIDENT));
      env.execute("clickhouse-sink-it");
    }
    assertEquals(
        "250\t250\n",
        LocalClickHouse.query(
            "SELECT count(), countIf(cpu_usage = 0.9) FROM "
                + DB
                + ".samples FINAL WHERE host = 'h1'"));
    assertEquals(
        "35\n",
        LocalClickHouse.query(
            "SELECT countIf(cpi IS NULL) FROM " + DB + ".samples FINAL WHERE host = 'h1'"));
    assertEquals("2\n", LocalClickHouse.query("SELECT count() FROM " + DB + ".incidents FINAL"));
    assertEquals(
        "4\n", LocalClickHouse.query("SELECT count() FROM " + DB + ".incident_suspects FINAL"));
    assertEquals(
        "web/0\tTHROTTLE\tvideo/7\t0.5\t['old/1']\n",
        LocalClickHouse.query(
            "SELECT victim_task, decision, antagonist_task, correlation, excluded_tasks FROM "
                + DB
                + ".incidents FINAL WHERE victim_task = 'web/0'"));
    assertEquals(
        "1\tvideo/7\tBEST_EFFORT\t0.00001\n2\tmr \"quoted\"/1\tBATCH\t0.5\n",
        LocalClickHouse.query(
            "SELECT rank, task, task_class, cpu_usage FROM "
                + DB
                + ".incident_suspects FINAL WHERE incident_id = '"
                + incidents.get(0).getIncidentId()
                + "' ORDER BY rank"));
  }

  @Test
  void deadLetterPayloadIsBase64() throws Exception {
    int offset = 42;
    {
      ClickHouseSink.Writer<DeadLetter> w =
          new ClickHouseSink<>(
                  LocalClickHouse.URL,
                  DB,
                  "dead_letters",
                  new ClickHouseSink.Batching(10, 1 << 20, 60_000),
                  RowShape.<DeadLetter>records(DeadLetter.getClassSchema(), Set.of()))
              .createWriter(0, null);
      w.write(
          DeadLetter.newBuilder()
              .setAtUs(1)
              .setComponent("flink-jobs/decode-samples")
              .setSourceTopic("cpi2.samples")
              .setPartition(3)
              .setOffset(++offset)
              .setReason("not Avro\nsingle-object")
              .setPayload(ByteBuffer.wrap(new byte[] {(byte) 0xC3, 1, 0}))
              .build());
      w.flush();
      w.close();
      assertEquals(
          "wwEA\tnot Avro\\nsingle-object\n",
          LocalClickHouse.query(
              "SELECT payload, reason FROM "
                  + DB
                  + ".dead_letters FINAL WHERE offset = "
                  + offset));
    }
  }

  private static CpiSample sample(String host, int i) {
    return Fixtures.sample(host, "web/" + (i % 50), TaskClass.BATCH, i * 10_000_000L, 1.5, 0.5);
  }

  private static String count(String host) throws Exception {
    return LocalClickHouse.query(
            "SELECT count() FROM " + DB + ".samples WHERE host = '" + host + "'")
        .strip();
  }

  @Test
  void flushReturnsOnlyOnceTheRowsAreInClickHouse() throws Exception {
    // Batches of 1,000 go out on the sender thread as the rows come; flush hands over the last,
    // partial one and returns only when all of them are in: no waiting here before the query.
    ClickHouseSink.Writer<CpiSample> w =
        new ClickHouseSink<>(
                LocalClickHouse.URL,
                DB,
                "samples",
                new ClickHouseSink.Batching(1_000, 1 << 25, 3_600_000),
                RowShape.<CpiSample>records(CpiSample.getClassSchema(), Set.of()))
            .createWriter(0, null);
    try {
      for (int i = 0; i < 4_500; i++) {
        w.write(sample("flush-host", i));
      }
      w.flush();
      assertEquals("4500", count("flush-host"));
    } finally {
      w.close();
    }
  }

  /** The writers read the table's columns, then the table is dropped: ClickHouse refuses. */
  @Test
  void aRefusedInsertFailsTheFlushAndEveryWriteAfter() throws Exception {
    LocalClickHouse.query("CREATE TABLE " + DB + ".dropped AS " + DB + ".samples");
    ClickHouseSink<CpiSample> sink =
        new ClickHouseSink<>(
            LocalClickHouse.URL,
            DB,
            "dropped",
            new ClickHouseSink.Batching(1, 1 << 20, 3_600_000),
            RowShape.records(CpiSample.getClassSchema(), Set.of()));
    ClickHouseSink.Writer<CpiSample> w = sink.createWriter(0, null);
    ClickHouseSink.Writer<CpiSample> flushed =
        new ClickHouseSink<>(
                LocalClickHouse.URL,
                DB,
                "dropped",
                new ClickHouseSink.Batching(100, 1 << 20, 3_600_000),
                RowShape.<CpiSample>records(CpiSample.getClassSchema(), Set.of()))
            .createWriter(0, null);
    LocalClickHouse.query("DROP TABLE " + DB + ".dropped");
    try {
      w.write(sample("refused-host", 1)); // a batch: handed over, refused by ClickHouse
      IOException e = assertThrows(IOException.class, () -> w.flush());
      assertTrue(e.getMessage().contains("dropped"), e.getMessage());
      assertThrows(IOException.class, () -> w.write(sample("refused-host", 2)));
    } finally {
      w.close();
    }
    try {
      flushed.write(sample("refused-host", 1));
      IOException e = assertThrows(IOException.class, () -> flushed.flush());
      assertTrue(e.getMessage().contains("dropped"), e.getMessage());
    } finally {
      flushed.close();
    }
  }

  /**
   * RowBinary: the writer reads the table's columns when it is created, so a missing table fails
   * it.
   */
  @Test
  void aRowBinaryWriterOfAMissingTableFailsAtOnce() {
    ClickHouseSink<CpiSample> sink =
        new ClickHouseSink<>(
            LocalClickHouse.URL,
            DB,
            "no_such_table",
            new ClickHouseSink.Batching(1, 1 << 20, 3_600_000),
            RowShape.records(CpiSample.getClassSchema(), Set.of()));
    IOException e = assertThrows(IOException.class, () -> sink.createWriter(0, null));
    assertTrue(e.getMessage().contains(DB + ".no_such_table"), e.getMessage());
  }

  /**
   * In a running job (Flink's own processing-time service), rows reach ClickHouse max-delay after
   * they came although the source then stays silent: no further record, no checkpoint, no end of
   * input.
   */
  @Test
  void theMaxDelayTimerInsertsWithoutFurtherRecords() throws Exception {
    JobClient job = silentJob("timer-host", 500, 0);
    try {
      awaitCount("timer-host", "300");
      assertEquals(
          JobStatus.RUNNING,
          job.getJobStatus().get(),
          "the job still runs: the timer, not the end of input, inserted");
    } finally {
      job.cancel().get();
    }
  }

  /**
   * With a max delay of an hour, only checkpoints insert: each hands its batch over and, in its
   * asynchronous part, waits for the insert. A savepoint then completes (the wait ends).
   */
  @Test
  void checkpointsInsertWhatCameBeforeThemAndComplete(@TempDir Path savepoints) throws Exception {
    JobClient job = silentJob("checkpoint-host", 3_600_000, 300);
    try {
      awaitCount("checkpoint-host", "300");
      String savepoint =
          job.stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
              .get(60, TimeUnit.SECONDS);
      assertTrue(savepoint.startsWith("file:"), savepoint);
    } finally {
      if (!job.getJobStatus().get().isGloballyTerminalState()) {
        job.cancel().get();
      }
    }
  }

  /**
   * 300 samples of {@code host}, then silence, into cpi2.samples; checkpoints every {@code
   * checkpointMs} (0: none).
   */
  private static JobClient silentJob(String host, long maxDelayMs, long checkpointMs)
      throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(1);
    if (checkpointMs > 0) {
      env.enableCheckpointing(checkpointMs);
    }
    DataGeneratorSource<CpiSample> source =
        new DataGeneratorSource<>(
            i -> sample(host, i.intValue()),
            Long.MAX_VALUE,
            new ThenSilent(300),
            RecordTypes.SAMPLE_STREAM);
    DataStream<CpiSample> samples =
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "300 samples, then silence");
    new ClickHouseSink<>(
            LocalClickHouse.URL,
            DB,
            "samples",
            new ClickHouseSink.Batching(100_000, 1 << 25, maxDelayMs),
            RowShape.<CpiSample>records(CpiSample.getClassSchema(), Set.of()))
        .attachTo(samples);
    return env.executeAsync("clickhouse-sink-" + host + "-it");
  }

  private static void awaitCount(String host, String expected) throws Exception {
    long deadline = System.nanoTime() + 30_000_000_000L;
    while (!count(host).equals(expected) && System.nanoTime() < deadline) {
      Thread.sleep(100);
    }
    assertEquals(expected, count(host));
  }

  /** Lets {@code n} records through, then none: the source stays open and silent. */
  static final class ThenSilent
      implements RateLimiterStrategy<NumberSequenceSource.NumberSequenceSplit> {
    private static final long serialVersionUID = 1L;
    private final int n;

    ThenSilent(int n) {
      this.n = n;
    }

    @Override
    public RateLimiter<NumberSequenceSource.NumberSequenceSplit> createRateLimiter(
        int parallelism) {
      return new RateLimiter<>() {
        private int granted;

        @Override
        public CompletionStage<Void> acquire(int requests) {
          granted += requests;
          return granted <= n ? CompletableFuture.completedFuture(null) : new CompletableFuture<>();
        }
      };
    }
  }

  @Test
  void aMissingTableFailsAtOnceWithClickHousesMessage() {
    long start = System.nanoTime();
    IOException e;
    try (ClickHouseTable t =
        new ClickHouseTable(LocalClickHouse.URL, DB, "no_such_table", 5, 10_000)) {
      e = assertThrows(IOException.class, () -> insertOneRow(t));
    }
    assertTrue(e.getMessage().contains("no_such_table"), e.getMessage());
    assertTrue(e.getMessage().contains("refused"), e.getMessage());
    assertTrue(System.nanoTime() - start < 5_000_000_000L, "no retries for a refused insert");
  }

  @Test
  void anUnreachableServerFailsAfterTheRetries() {
    IOException e;
    try (ClickHouseTable t = new ClickHouseTable("http://127.0.0.1:1", DB, "samples", 3, 10)) {
      e = assertThrows(IOException.class, () -> insertOneRow(t));
    }
    assertTrue(e.getMessage().contains("after 3 attempts"), e.getMessage());
  }

  @Test
  void aRequestThatFailsOnOneServerGoesToTheNext() throws Exception {
    try (ClickHouseTable t =
        new ClickHouseTable("http://127.0.0.1:1, " + LocalClickHouse.URL, DB, "samples", 1, 10)) {
      assertTrue(t.columns().stream().anyMatch(c -> c.name().equals("window_start_us")));
      assertTrue(t.columns().stream().anyMatch(c -> c.name().equals("host")), "and stays there");
    }
  }

  /**
   * A user with a password (added to the local server through its users.d, which it reads again
   * within seconds) signs in with --clickhouse.user and --clickhouse.password-file; a wrong
   * password is refused, an unreadable file is named.
   */
  @Test
  void aUserSignsInWithThePasswordOfItsFile(
      @org.junit.jupiter.api.io.TempDir java.nio.file.Path tmp) throws Exception {
    String stackDir =
        System.getenv()
            .getOrDefault(
                "STACK_DIR",
                new java.io.File(System.getProperty("user.dir")).getParent() + "/.stack");
    java.nio.file.Path usersD = java.nio.file.Path.of(stackDir, "clickhouse", "users.d");
    java.nio.file.Files.createDirectories(usersD);
    String user = "loader_it_" + ProcessHandle.current().pid();
    String password = "pw-" + System.nanoTime();
    String digest =
        java.util.HexFormat.of()
            .formatHex(
                java.security.MessageDigest.getInstance("SHA-256")
                    .digest(password.getBytes(java.nio.charset.StandardCharsets.UTF_8)));
    java.nio.file.Path userFile = usersD.resolve(user + ".xml");
    java.nio.file.Files.writeString(
        userFile,
        "<yandex><users><"
            + user
            + "><password_sha256_hex>"
            + digest
            + "</password_sha256_hex><networks><ip>::1</ip><ip>127.0.0.1</ip></networks>"
            + "<profile>default</profile><quota>default</quota></"
            + user
            + "></users></yandex>");
    java.nio.file.Path good = tmp.resolve("good");
    java.nio.file.Path bad = tmp.resolve("bad");
    java.nio.file.Files.writeString(good, password + "\n");
    java.nio.file.Files.writeString(bad, password + "x\n");
    try {
      ClickHouseServer server =
          new ClickHouseServer(LocalClickHouse.URL, user, good.toString(), "");
      long deadline = System.nanoTime() + 30_000_000_000L;
      List<TableColumn> columns = null;
      while (columns == null) {
        try (ClickHouseTable t = new ClickHouseTable(server, DB, "samples", 1, 10)) {
          columns = t.columns();
        } catch (IOException e) {
          assertTrue(
              System.nanoTime() < deadline, "the server did not take " + userFile + ": " + e);
          Thread.sleep(1000);
        }
      }
      assertTrue(columns.stream().anyMatch(c -> c.name().equals("host")), columns.toString());
      ClickHouseServer wrong = new ClickHouseServer(LocalClickHouse.URL, user, bad.toString(), "");
      try (ClickHouseTable t = new ClickHouseTable(wrong, DB, "samples", 1, 10)) {
        IOException e = assertThrows(IOException.class, t::columns);
        assertTrue(e.getMessage().contains("refused"), e.getMessage());
      }
      String missing = tmp.resolve("missing").toString();
      java.io.UncheckedIOException e =
          assertThrows(
              java.io.UncheckedIOException.class,
              () ->
                  new ClickHouseTable(
                      new ClickHouseServer(LocalClickHouse.URL, user, missing, ""),
                      DB,
                      "samples",
                      1,
                      10));
      assertTrue(e.getMessage().contains(missing) && e.getMessage().contains(user), e.getMessage());
    } finally {
      java.nio.file.Files.deleteIfExists(userFile);
    }
  }

  /** One RowBinary row of a String column {@code host}. */
  private static void insertOneRow(ClickHouseTable t) throws IOException, InterruptedException {
    byte[] body = {1, 'h'};
    t.insert(List.of("host"), body, body.length, 1);
  }
}
