package org.cpi2.flink.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.kafka.KafkaIo;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.TaskClass;
import org.cpi2.wire.Wire;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * The jobs on the real local stack (Kafka 4.3, Flink 2.2 session cluster, ClickHouse), submitted
 * over REST as `make submit` does. Each test runs its own job instance (own name, consumer group,
 * job and host names) on the shared topics, and cancels it at the end. Run by `make -C flink-jobs
 * stack-test`.
 */
class LocalClusterStackIT {
  static final String HOST = System.getenv().getOrDefault("STACK_HOST", "127.0.0.1");
  static final String FLINK =
      "http://" + HOST + ":" + System.getenv().getOrDefault("FLINK_REST_PORT", "8081");
  static final String KAFKA = HOST + ":" + System.getenv().getOrDefault("KAFKA_PORT", "9092");
  static final String CLICKHOUSE =
      "http://" + HOST + ":" + System.getenv().getOrDefault("CLICKHOUSE_HTTP_PORT", "8123");
  static final long S = 1_000_000L;

  /** The stack's state folder: $STACK_DIR, else the project's .stack. */
  static final Path STACK_DIR =
      Path.of(
          System.getenv()
              .getOrDefault(
                  "STACK_DIR",
                  Path.of(System.getProperty("user.dir"))
                      .getParent()
                      .resolve(".stack")
                      .toString()));

  static final Path SECRETS = STACK_DIR.resolve("secrets");

  private final String run = "upg" + UUID.randomUUID().toString().substring(0, 8);

  /** The job's consumer groups: principal detector may use those named cpi2-flink-*. */
  private final String group = "cpi2-flink-" + run;

  private final Wire<CpiSample> samples = Wire.of(CpiSample.class);
  private final Wire<CpiSpec> specs = Wire.of(CpiSpec.class);

  private static FlinkRest cluster() throws Exception {
    FlinkRest flink = new FlinkRest(FLINK);
    if (!flink.answers()) {
      new ProcessBuilder("make", "-C", new File(System.getProperty("user.dir")).getParent(), "up")
          .inheritIO()
          .start()
          .waitFor(5, TimeUnit.MINUTES);
    }
    Assumptions.assumeTrue(
        flink.answers(), "no Flink REST API at " + FLINK + " even after `make up`");
    return flink;
  }

  private static Path jar() {
    Path jar = Path.of("target/cpi2-flink-jobs-0.1.0.jar").toAbsolutePath();
    assertTrue(Files.exists(jar), "the shaded job jar is built in the package phase: " + jar);
    return jar;
  }

  /**
   * Bytes on cpi2.samples to an incident on cpi2.incidents. Time runs fast: a window every 10 s of
   * event time, specs every 2 minutes. From b+130 s a best-effort task on the victim's host bursts
   * on odd windows and the victim's CPI triples with it.
   */
  @Test
  void samplesOnKafkaBecomeAnIncidentOnKafka() throws Exception {
    FlinkRest flink = cluster();
    long startMs = System.currentTimeMillis();
    long b = (startMs / 1000 / 120 + 2) * 120;
    // Time scaled by 1/6 (10 s windows instead of 60 s): anomaly and correlation windows too.
    List<String> args =
        jobArgs(
            "--kafka.group",
            group,
            "--kafka.start",
            "timestamp-ms:" + startMs,
            "--job.name",
            "cpi2-incident-test-" + run,
            "--spec.period-s",
            "120",
            "--spec.min-samples-per-task",
            "6",
            "--anomaly.window-s",
            "50",
            "--correlation.window-s",
            "100",
            "--checkpoint.interval-ms",
            "2000");
    String job = flink.run(flink.upload(jar()), args, null);
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      flink.waitRunning(job, Duration.ofSeconds(60));
      Thread.sleep(3000);
      for (int w = 0; w < 20; w++) {
        long t = b + 10L * w;
        boolean burst = w >= 12 && w % 2 == 1;
        for (int k = 0; k < 5; k++) {
          double cpi = 1.0 + 0.05 * ((w + k) % 3 - 1);
          send(producer, sample(k, t, k == 0 && burst ? 3.0 : cpi));
        }
        double be = w < 12 ? 0.2 : burst ? 1.0 : 0.05;
        send(
            producer,
            Fixtures.sample("h" + run + "0", run + "be/0", TaskClass.BEST_EFFORT, t * S, 1.5, be));
      }
      pushWatermarks(producer, b + 400);
      org.cpi2.schema.Incident inc = awaitIncident("h" + run + "0");
      assertEquals(run + "/0", inc.getVictimTask());
      assertEquals(org.cpi2.schema.Decision.THROTTLE, inc.getDecision(), inc.toString());
      assertEquals(run + "be/0", inc.getAntagonistTask());
      assertEquals(0.01, inc.getCapCpu(), 0);
      // Outliers at b+130, 150, 170, 190: anomalous from b+170 on. When a later anomaly of the
      // same victim is queued before the watermark reaches the earlier one, the later is analysed.
      assertTrue(
          inc.getDetectedAtUs() == (b + 170) * S || inc.getDetectedAtUs() == (b + 190) * S,
          inc.toString());
      assertTrue(inc.getCorrelation() >= 0.35, inc.toString());
    } finally {
      flink.cancel(job);
    }
  }

  @Test
  void learnedSpecsAndOpenPeriodsSurviveAnUpgrade() throws Exception {
    FlinkRest flink = cluster();
    Path jar = jar();
    Path savepoints = STACK_DIR.resolve("savepoints");
    Files.createDirectories(savepoints);
    String db = "cpi2_" + run;
    String specKey = run + "|p1";
    long startMs = System.currentTimeMillis();
    long b =
        (startMs / 1000 / 60 + 2) * 60; // a minute boundary ahead of every other producer's clock

    List<String> common =
        jobArgs(
            "--kafka.group",
            group,
            "--kafka.start",
            "timestamp-ms:" + startMs,
            "--job.name",
            "cpi2-upgrade-test-" + run,
            "--spec.period-s",
            "60",
            "--spec.min-samples-per-task",
            "6",
            "--checkpoint.interval-ms",
            "2000");
    String jarId = flink.upload(jar);
    String v1 = flink.run(jarId, common, null);
    String v2 = null;
    String loader = null;
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      flink.waitRunning(v1, Duration.ofSeconds(60));
      Thread.sleep(3000); // let the sources take their partitions
      // Period [b, b+60): five tasks, CPI 0.8 .. 1.2, six windows each: mean 1.0.
      for (int w = 0; w < 6; w++) {
        for (int k = 0; k < 5; k++) {
          send(producer, sample(k, b + 10 * w, 0.8 + 0.1 * k));
        }
      }
      // Open period [b+60, b+120): ten samples of CPI 2.0 before the savepoint.
      for (int w = 6; w < 8; w++) {
        for (int k = 0; k < 5; k++) {
          send(producer, sample(k, b + 10 * w, 2.0));
        }
      }
      // Another job's samples push the watermark to b+70 (30 s out-of-orderness): period 1 closes.
      pushWatermarks(producer, b + 100);
      CpiSpec first = awaitSpec(specKey, s -> s.getPeriodEndUs() == (b + 60) * S);
      assertEquals(30, first.getNumSamples());
      assertEquals(1.0, first.getCpiMean(), 1e-9);
      assertEquals(5, first.getEligibleTasks());
      assertTrue(first.getUsable());

      String savepoint = flink.stopWithSavepoint(v1, savepoints);
      v1 = null;
      // While the job is down: ten more samples of the open period.
      for (int w = 8; w < 10; w++) {
        for (int k = 0; k < 5; k++) {
          send(producer, sample(k, b + 10 * w, 2.0));
        }
      }
      producer.flush();

      // v2: age weight 0.5 per period instead of the default; the loader beside it stores the specs
      // in ClickHouse.
      createTables(db);
      List<String> changed = new ArrayList<>(common);
      changed.addAll(List.of("--spec.age-weight", "0.5"));
      v2 = flink.run(jarId, changed, savepoint);
      flink.waitRunning(v2, Duration.ofSeconds(60));
      loader =
          flink.run(
              jarId,
              FlinkRest.LOADER,
              loaderArgs(
                  "--kafka.group",
                  "cpi2-loader-" + run,
                  "--kafka.start",
                  "timestamp-ms:" + startMs,
                  "--job.name",
                  "cpi2-upgrade-loader-" + run,
                  "--clickhouse.url",
                  CLICKHOUSE,
                  "--clickhouse.database",
                  db,
                  "--checkpoint.interval-ms",
                  "2000"),
              null);
      flink.waitRunning(loader, Duration.ofSeconds(60));
      pushWatermarks(producer, b + 200);
      CpiSpec second = awaitSpec(specKey, s -> s.getPeriodEndUs() == (b + 120) * S);
      // Restored: 20 samples in the open period (10 from v1's state) and v1's spec weighted by
      // v2's 0.5: count 0.5 * 30 + 20 = 35, mean (0.5 * 30 * 1.0 + 20 * 2.0) / 35.
      assertEquals(
          20,
          second.getNumSamples(),
          "samples of the open period before and after the upgrade: " + second);
      assertEquals(35.0, second.getWeightedCount(), 1e-9, second.toString());
      assertEquals(55.0 / 35, second.getCpiMean(), 1e-9);
      String row = "";
      for (int i = 0; i < 60 && !row.contains(String.valueOf((b + 120) * S)); i++) {
        Thread.sleep(500);
        row =
            query(
                "SELECT period_end_us, num_samples FROM "
                    + db
                    + ".specs FINAL WHERE job = '"
                    + run
                    + "'");
      }
      assertTrue(row.contains((b + 120) * S + "\t20"), "v2's spec in ClickHouse: " + row);
    } finally {
      for (String job : new String[] {v1, v2, loader}) {
        if (job != null) {
          flink.cancel(job);
        }
      }
      query("DROP DATABASE IF EXISTS " + db);
    }
  }

  /**
   * A backlog on two partitions, read by a job started after it was written: the Kafka reader hands
   * over each partition's records in chunks of hours of event time, one partition after the other.
   * Watermarks per partition make none of them late: every period's spec has every sample of both
   * partitions. (With one watermark over the interleaved records, whole periods of the slower
   * partition were dropped as late.)
   */
  @Test
  void aBacklogOnTwoPartitionsLosesNoSample() throws Exception {
    FlinkRest flink = cluster();
    long startMs = System.currentTimeMillis();
    long b = (startMs / 1000 / 600 + 1) * 600;
    int tasks = 5;
    int windows = 3000; // 10 s windows: 50 periods of 600 s, 15,000 samples per partition
    String specKey = run + "|p1";
    try (KafkaProducer<byte[], byte[]> producer = producer()) {
      for (int p = 0; p < 2; p++) {
        for (int w = 0; w < windows; w++) {
          for (int k = 0; k < tasks; k++) {
            CpiSample s =
                Fixtures.sample(
                    "h" + run + p + "_" + k,
                    run + "/" + p + k,
                    TaskClass.BATCH,
                    (b + 10L * w) * S,
                    1.0 + 0.1 * p,
                    0.8);
            producer.send(
                new ProducerRecord<>(
                    "cpi2.samples",
                    p,
                    s.getHost().getBytes(StandardCharsets.UTF_8),
                    samples.encode(s)));
          }
        }
      }
      pushWatermarks(producer, b + 10L * windows + 600);
    }
    List<String> args =
        jobArgs(
            "--kafka.group",
            group,
            "--kafka.start",
            "timestamp-ms:" + startMs,
            "--job.name",
            "cpi2-backlog-test-" + run,
            "--spec.period-s",
            "600",
            "--checkpoint.interval-ms",
            "2000");
    String job = flink.run(flink.upload(jar()), args, null);
    try {
      flink.waitRunning(job, Duration.ofSeconds(60));
      long last = (b + 10L * windows) * S;
      // At-least-once: a restart from a checkpoint may publish a period again, identically.
      java.util.TreeMap<Long, CpiSpec> seen = new java.util.TreeMap<>();
      awaitSpec(
          specKey,
          s -> {
            CpiSpec before = seen.put(s.getPeriodEndUs(), s);
            assertTrue(
                before == null || before.equals(s),
                "a period published twice, differently: " + before + " / " + s);
            return s.getPeriodEndUs() == last;
          });
      assertEquals(windows / 60, seen.size(), "one spec per period: " + seen.keySet());
      for (CpiSpec s : seen.values()) {
        assertEquals(2 * tasks * 60, s.getNumSamples(), "samples of both partitions in " + s);
        assertEquals(2 * tasks, s.getNumTasks());
      }
      assertEquals(1.05, seen.lastEntry().getValue().getCpiMean(), 1e-9);
    } finally {
      flink.cancel(job);
    }
  }

  /**
   * A sample of another job on every partition of cpi2.samples at {@code tS}: each partition has
   * its own watermark, so time moves on only when all of them have moved.
   */
  private void pushWatermarks(KafkaProducer<byte[], byte[]> producer, long tS) {
    int n = producer.partitionsFor("cpi2.samples").size();
    for (int p = 0; p < n; p++) {
      CpiSample s =
          Fixtures.sample("hpush" + p, run + "push/" + p, TaskClass.BATCH, tS * S, 1.0, 1.0);
      producer.send(
          new ProducerRecord<>(
              "cpi2.samples", p, s.getHost().getBytes(StandardCharsets.UTF_8), samples.encode(s)));
    }
    producer.flush();
  }

  /** The first incident with this host key on cpi2.incidents, for 90 s at most. */
  private org.cpi2.schema.Incident awaitIncident(String host) throws Exception {
    Wire<org.cpi2.schema.Incident> wire = Wire.of(org.cpi2.schema.Incident.class);
    Properties p = kafka("admin");
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts = new ArrayList<>();
      for (PartitionInfo info : c.partitionsFor("cpi2.incidents")) {
        parts.add(new TopicPartition(info.topic(), info.partition()));
      }
      c.assign(parts);
      c.seekToBeginning(parts);
      long end = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (System.nanoTime() < end) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
          if (r.key() != null && new String(r.key(), StandardCharsets.UTF_8).equals(host)) {
            return wire.decode(r.value());
          }
        }
      }
      throw new AssertionError("no incident for host " + host + " on cpi2.incidents within 90 s");
    }
  }

  private CpiSample sample(int k, long tS, double cpi) {
    return Fixtures.sample(
        "h" + run + k, run + "/" + k, TaskClass.LATENCY_SENSITIVE, tS * S, cpi, 0.8);
  }

  private void send(KafkaProducer<byte[], byte[]> p, CpiSample s) {
    p.send(
        new ProducerRecord<>(
            "cpi2.samples", s.getHost().getBytes(StandardCharsets.UTF_8), samples.encode(s)));
  }

  /**
   * A Kafka client of principal: bootstrap and its client file's properties (none without secrets).
   */
  static Properties kafka(String principal) {
    Path f = SECRETS.resolve("kafka-" + principal + ".properties");
    Properties p = KafkaIo.clientProperties(Files.exists(f) ? f.toString() : "");
    p.put("bootstrap.servers", KAFKA);
    return p;
  }

  /** The job's arguments: Kafka's address, principal detector's client file, then these. */
  static List<String> jobArgs(String... more) {
    return args("detector", more);
  }

  /** The loader's options, signed in as principal loader. */
  static List<String> loaderArgs(String... more) {
    return args("loader", more);
  }

  private static List<String> args(String principal, String... more) {
    List<String> args = new ArrayList<>(List.of("--kafka.bootstrap", KAFKA));
    Path f = SECRETS.resolve("kafka-" + principal + ".properties");
    if (Files.exists(f)) {
      args.addAll(List.of("--kafka.client-file", f.toString()));
    }
    args.addAll(List.of(more));
    return args;
  }

  private static KafkaProducer<byte[], byte[]> producer() {
    Properties p = kafka("admin");
    p.put("acks", "all");
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  /**
   * Reads cpi2.specs from the beginning until a spec with {@code key} matches, for 90 s at most.
   */
  private CpiSpec awaitSpec(String key, Predicate<CpiSpec> match) throws Exception {
    Properties p = kafka("admin");
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> parts = new ArrayList<>();
      for (PartitionInfo info : c.partitionsFor("cpi2.specs")) {
        parts.add(new TopicPartition(info.topic(), info.partition()));
      }
      c.assign(parts);
      c.seekToBeginning(parts);
      List<CpiSpec> seen = new ArrayList<>();
      long end = System.nanoTime() + Duration.ofSeconds(90).toNanos();
      while (System.nanoTime() < end) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
          if (r.key() != null && new String(r.key(), StandardCharsets.UTF_8).equals(key)) {
            CpiSpec s = specs.decode(r.value());
            seen.add(s);
            if (match.test(s)) {
              return s;
            }
          }
        }
      }
      throw new AssertionError(
          "no matching spec for " + key + " on cpi2.specs within 90 s; seen: " + seen);
    }
  }

  private static void createTables(String db) throws Exception {
    query("CREATE DATABASE IF NOT EXISTS " + db);
    String engine = " ENGINE = ReplacingMergeTree() ORDER BY ";
    query(
        "CREATE TABLE "
            + db
            + ".samples (host String, task String, window_start_us Int64)"
            + engine
            + "(host, task, window_start_us)");
    query(
        "CREATE TABLE "
            + db
            + ".specs (job String, platform String, period_end_us Int64, num_samples Int64, cpi_mean Float64)"
            + engine
            + "(job, platform, period_end_us)");
    query(
        "CREATE TABLE "
            + db
            + ".incidents (incident_id String, host String)"
            + engine
            + "(host, incident_id)");
    query(
        "CREATE TABLE "
            + db
            + ".incident_suspects (incident_id String, host String, rank Int32)"
            + engine
            + "(host, incident_id, rank)");
    query(
        "CREATE TABLE "
            + db
            + ".actions (action_id String, host String)"
            + engine
            + "(host, action_id)");
    query(
        "CREATE TABLE "
            + db
            + ".outcomes (action_id String, host String)"
            + engine
            + "(host, action_id)");
    query(
        "CREATE TABLE "
            + db
            + ".dead_letters (source_topic String, partition Int32, offset Int64)"
            + engine
            + "(source_topic, partition, offset)");
  }

  private static String query(String sql) throws Exception {
    var http = java.net.http.HttpClient.newHttpClient();
    var req =
        java.net.http.HttpRequest.newBuilder(
                java.net.URI.create(
                    CLICKHOUSE
                        + "/?query="
                        + java.net.URLEncoder.encode(sql, StandardCharsets.UTF_8)))
            .POST(java.net.http.HttpRequest.BodyPublishers.noBody())
            .build();
    var resp = http.send(req, java.net.http.HttpResponse.BodyHandlers.ofString());
    if (resp.statusCode() != 200) {
      throw new AssertionError("clickhouse: " + sql + ": " + resp.body());
    }
    return resp.body();
  }
}
