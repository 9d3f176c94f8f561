package org.cpi2.flink;

import java.util.List;
import java.util.UUID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
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
    String id = UUID.randomUUID().toString();
    CollectSink<Incident> incidents = new CollectSink<>(id + "incidents");
    CollectSink<CpiSpec> specs = new CollectSink<>(id + "specs");
    CollectSink<CapOutcome> outcomes = new CollectSink<>(id + "outcomes");
    CollectSink<DeadLetter> dead = new CollectSink<>(id + "dead");
    TypeInformation<RawRecord> rawType = TypeInformation.of(RawRecord.class);
    Cpi2Sources sources =
        new Cpi2Sources() {
          @Override
          public DataStream<RawRecord> samples(
              StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks) {
            return env.fromData(samples, rawType).assignTimestampsAndWatermarks(watermarks);
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
    Cpi2Sinks sinks =
        new Cpi2Sinks() {
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
        };
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    env.setParallelism(2);
    new Cpi2Job(options, sources, sinks).build(env);
    env.execute("cpi2-it");
    GraphRun out = new GraphRun();
    out.incidents = incidents.values();
    out.specs = specs.values();
    out.outcomes = outcomes.values();
    out.deadLetters = dead.values();
    return out;
  }
}
