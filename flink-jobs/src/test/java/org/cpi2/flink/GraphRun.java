package org.cpi2.flink;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Incident;
import org.cpi2.wire.Wire;
import org.cpi2.wire.WireFormatException;

/**
 * One run of the detection job's whole graph on the MiniCluster of the calling test, from
 * Kafka-shaped records of the three input topics to what the four sinks received.
 *
 * <p>The records reach the job as Kafka delivers them: each sample is keyed by its host, as the
 * collectors publish it, and its partition is chosen by that key; each partition is read in order
 * by one subtask of the job's samples decoder (a partition is never split between readers), so a
 * host's samples arrive in the order they were written, whatever the subtasks' relative speeds. The
 * three topics are read by sources of their own, which start and advance independently, as in a
 * real cluster; {@link ActionsAt} sets when the actions' source starts against the samples'.
 */
public final class GraphRun {
  public List<Incident> incidents;
  public List<CpiSpec> specs;
  public List<CapOutcome> outcomes;
  public List<DeadLetter> deadLetters;

  /** An epoch-like start aligned on the 10-minute spec period of {@link #OPTIONS}. */
  public static final long T0 = 1_700_000_400L * 1_000_000L;

  /** Partitions of the samples' topic in a run (those of the local stack's topic). */
  public static final int PARTITIONS = 4;

  /**
   * The whole-graph tests' options: 10-minute spec periods, 5 samples per task, fast checkpoints.
   */
  public static final Cpi2Options OPTIONS =
      Fixtures.options(
          Cpi2Options.SPEC_PERIOD_S, "600",
          Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK, "5",
          Cpi2Options.CHECKPOINT_INTERVAL_MS, "500");

  /**
   * When the actions' source starts against the samples': a real cluster reads each topic at its
   * own pace, so the job must decide the same in every case.
   */
  public enum ActionsAt {
    /** Both sources start together; either may run ahead. */
    WITH_SAMPLES,
    /** The samples' source starts a second after the actions' has read its last record. */
    BEFORE_SAMPLES,
    /** The actions' source starts a second after the samples' has read its last record. */
    AFTER_SAMPLES
  }

  /** Between the end of one source and the start of the one it holds back. */
  static final Duration GAP = Duration.ofSeconds(1);

  private GraphRun() {}

  /** The MiniCluster a whole-graph test registers: one TaskManager with two slots. */
  public static MiniClusterExtension miniCluster() {
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(2)
            .build());
  }

  /** Runs {@link Cpi2Job}'s graph with {@code options} at parallelism 2 until its input ends. */
  public static GraphRun run(
      Cpi2Options options, List<RawRecord> samples, List<RawRecord> actions, List<RawRecord> seeds)
      throws Exception {
    return run(options, samples, actions, seeds, null, ActionsAt.WITH_SAMPLES);
  }

  /**
   * As {@link #run(Cpi2Options, List, List, List)}, the job's state first restored from the
   * savepoint at {@code savepoint} (null: none); state of operators the graph does not have (the
   * savepoint's own sources) is left out.
   */
  public static GraphRun run(
      Cpi2Options options,
      List<RawRecord> samples,
      List<RawRecord> actions,
      List<RawRecord> seeds,
      String savepoint)
      throws Exception {
    return run(options, samples, actions, seeds, savepoint, ActionsAt.WITH_SAMPLES);
  }

  /** As {@link #run(Cpi2Options, List, List, List, String)}, the actions read {@code at}. */
  public static GraphRun run(
      Cpi2Options options,
      List<RawRecord> samples,
      List<RawRecord> actions,
      List<RawRecord> seeds,
      String savepoint,
      ActionsAt at)
      throws Exception {
    Collected sinks = new Collected();
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    env.setParallelism(2);
    String run = UUID.randomUUID().toString();
    try {
      new Cpi2Job(options, sources(run, samples, actions, seeds, at), sinks).build(env);
      StreamGraph graph = env.getStreamGraph();
      graph.setJobName("cpi2-it");
      if (savepoint != null) {
        graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint, true));
      }
      env.execute(graph);
    } finally {
      RECORDS.keySet().removeIf(k -> k.startsWith(run));
      READ.keySet().removeIf(k -> k.startsWith(run));
    }
    return sinks.result();
  }

  /**
   * Sources of run {@code run} that read the given records as Kafka would ({@link GraphRun}): the
   * samples keyed by host ({@link #published}) and watermarked by the job, the actions started
   * {@code at}.
   */
  static Cpi2Sources sources(
      String run,
      List<RawRecord> samples,
      List<RawRecord> actions,
      List<RawRecord> seeds,
      ActionsAt at) {
    String samplesRead = run + "/samples-read";
    String actionsRead = run + "/actions-read";
    Input samplesIn =
        new Input(
            run + "/samples",
            published(samples),
            at == ActionsAt.BEFORE_SAMPLES ? actionsRead : null,
            samplesRead);
    Input actionsIn =
        new Input(
            run + "/actions",
            actions,
            at == ActionsAt.AFTER_SAMPLES ? samplesRead : null,
            actionsRead);
    Input seedsIn = new Input(run + "/seeds", seeds, null, null);
    return new Cpi2Sources() {
      @Override
      public DataStream<RawRecord> samples(
          StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks) {
        return byPartition(samplesIn.stream(env).assignTimestampsAndWatermarks(watermarks));
      }

      @Override
      public DataStream<RawRecord> actions(StreamExecutionEnvironment env) {
        return actionsIn.stream(env);
      }

      @Override
      public DataStream<RawRecord> specSeeds(StreamExecutionEnvironment env) {
        return seedsIn.stream(env);
      }
    };
  }

  /**
   * The samples as a collector publishes them: each keyed by its host, in the partition its key
   * hashes to. A record that is not a sample keeps its key and partition.
   */
  public static List<RawRecord> published(List<RawRecord> samples) {
    Wire<CpiSample> wire = Wire.of(CpiSample.class);
    List<RawRecord> out = new ArrayList<>(samples.size());
    for (RawRecord r : samples) {
      RawRecord p = RawRecord.of(r.topic, r.partition, r.offset, r.key, r.value);
      try {
        p.key = wire.decode(r.value).getHost().getBytes(StandardCharsets.UTF_8);
        p.partition = Math.floorMod(Arrays.hashCode(p.key), PARTITIONS);
      } catch (WireFormatException | RuntimeException notASample) {
        // a dead letter to be: as it was given
      }
      out.add(p);
    }
    return out;
  }

  /** Each partition to one subtask of the next operator, in order, as a Kafka source reads it. */
  public static DataStream<RawRecord> byPartition(DataStream<RawRecord> records) {
    return records.partitionCustom(
        (Integer partition, int subtasks) -> Math.floorMod(partition, subtasks),
        r -> Math.max(r.partition, 0));
  }

  /** Records of this JVM's runs, read by their sources by name (MiniCluster tasks run here too). */
  private static final Map<String, List<RawRecord>> RECORDS = new ConcurrentHashMap<>();

  /** Released when a source has read its last record, by name. */
  private static final Map<String, CompletableFuture<Void>> READ = new ConcurrentHashMap<>();

  /**
   * One source's records: read in order by a single reader, after the source named {@code after}
   * has read its last (null: at once); signals {@code done} when it has read its own last.
   */
  private static final class Input {
    final String name;
    final String after;
    final String done;
    final int count;

    Input(String name, List<RawRecord> records, String after, String done) {
      if (records.isEmpty()) {
        throw new IllegalArgumentException(
            name
                + ": a source needs a record (one that is not a valid record becomes a dead letter)");
      }
      this.name = name;
      this.after = after;
      this.done = done;
      this.count = records.size();
      RECORDS.put(name, List.copyOf(records));
      if (done != null) {
        READ.put(done, new CompletableFuture<>());
      }
    }

    DataStream<RawRecord> stream(StreamExecutionEnvironment env) {
      String records = name;
      String signal = done;
      int last = count - 1;
      DataGeneratorSource<RawRecord> source =
          new DataGeneratorSource<>(
              i -> {
                RawRecord r = RECORDS.get(records).get(i.intValue());
                if (signal != null && i == last) {
                  READ.get(signal).complete(null);
                }
                return r;
              },
              count,
              after == null ? RateLimiterStrategy.noOp() : new After(after),
              TypeInformation.of(RawRecord.class));
      return env.fromSource(source, WatermarkStrategy.noWatermarks(), name).setParallelism(1);
    }
  }

  /** Holds a source's first record until the source {@code after} names has read its last. */
  private static final class After implements RateLimiterStrategy {
    private static final long serialVersionUID = 1L;
    private final String after;

    After(String after) {
      this.after = after;
    }

    @Override
    public RateLimiter createRateLimiter(int parallelism) {
      CompletableFuture<Void> start =
          READ.get(after)
              .thenRunAsync(
                  () -> {},
                  CompletableFuture.delayedExecutor(GAP.toMillis(), TimeUnit.MILLISECONDS));
      return permits -> start;
    }
  }

  /** Sinks that collect what the job writes, in this JVM. */
  public static final class Collected implements Cpi2Sinks {
    private final String id = UUID.randomUUID().toString();
    private final CollectSink<Incident> incidents = new CollectSink<>(id + "incidents");
    private final CollectSink<CpiSpec> specs = new CollectSink<>(id + "specs");
    private final CollectSink<CapOutcome> outcomes = new CollectSink<>(id + "outcomes");
    private final CollectSink<DeadLetter> dead = new CollectSink<>(id + "dead");

    @Override
    public void incidents(DataStream<Incident> s) {
      s.sinkTo(incidents);
    }

    @Override
    public void specs(DataStream<CpiSpec> s) {
      s.sinkTo(specs);
    }

    @Override
    public void outcomes(DataStream<CapOutcome> s) {
      s.sinkTo(outcomes);
    }

    @Override
    public void deadLetters(DataStream<DeadLetter> s) {
      s.sinkTo(dead);
    }

    /** What the sinks received so far. */
    public GraphRun result() {
      GraphRun out = new GraphRun();
      out.incidents = incidents.values();
      out.specs = specs.values();
      out.outcomes = outcomes.values();
      out.deadLetters = dead.values();
      return out;
    }
  }
}
