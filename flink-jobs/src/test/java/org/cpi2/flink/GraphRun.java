package org.cpi2.flink;

import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.graph.StreamGraph;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Incident;

/**
 * One run of the detection job's whole graph on the MiniCluster of the calling test, from
 * Kafka-shaped records of the three input topics to what the four sinks received.
 */
public final class GraphRun {
  public List<Incident> incidents;
  public List<CpiSpec> specs;
  public List<CapOutcome> outcomes;
  public List<DeadLetter> deadLetters;

  /** An epoch-like start aligned on the 10-minute spec period of {@link #OPTIONS}. */
  public static final long T0 = 1_700_000_400L * 1_000_000L;

  /**
   * The whole-graph tests' options: 10-minute spec periods, 5 samples per task, fast checkpoints.
   */
  public static final Cpi2Options OPTIONS =
      Fixtures.options(
          Cpi2Options.SPEC_PERIOD_S, "600",
          Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK, "5",
          Cpi2Options.CHECKPOINT_INTERVAL_MS, "500");

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
    return run(options, samples, actions, seeds, null);
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
    TypeInformation<RawRecord> rawType = TypeInformation.of(RawRecord.class);
    Collected sinks = new Collected();
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    env.setParallelism(2);
    new Cpi2Job(options, sources(env1 -> env1.fromData(samples, rawType), actions, seeds), sinks)
        .build(env);
    StreamGraph graph = env.getStreamGraph();
    graph.setJobName("cpi2-it");
    if (savepoint != null) {
      graph.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint, true));
    }
    env.execute(graph);
    return sinks.result();
  }

  /**
   * Sources of the graph: {@code samples} (watermarked by the job), the given actions and seeds.
   */
  public static Cpi2Sources sources(
      Function<StreamExecutionEnvironment, DataStream<RawRecord>> samples,
      List<RawRecord> actions,
      List<RawRecord> seeds) {
    TypeInformation<RawRecord> rawType = TypeInformation.of(RawRecord.class);
    return new Cpi2Sources() {
      @Override
      public DataStream<RawRecord> samples(
          StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks) {
        return samples.apply(env).assignTimestampsAndWatermarks(watermarks);
      }

      @Override
      public DataStream<RawRecord> actions(StreamExecutionEnvironment env) {
        return env.fromData(actions, rawType);
      }

      @Override
      public DataStream<RawRecord> specSeeds(StreamExecutionEnvironment env) {
        return env.fromData(seeds, rawType);
      }
    };
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
