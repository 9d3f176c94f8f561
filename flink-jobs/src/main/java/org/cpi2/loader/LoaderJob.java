package org.cpi2.loader;

import java.time.Duration;
import java.util.function.Function;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableFunction;
import org.cpi2.flink.Cpi2Job;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.kafka.KafkaIo;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.flink.stream.DecodeFunction;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.flink.stream.Validators;
import org.cpi2.loader.clickhouse.ClickHouseSinks;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.cpi2.wire.Topics;

/**
 * The loader: every topic ClickHouse stores (samples, specs, incidents, actions, outcomes, dead
 * letters) into its tables, as a Flink job of its own, apart from the detection job ({@link
 * Cpi2Job}): own consumer group ({@code kafka.group}, default {@code cpi2-loader}), own
 * checkpoints, own threads, so a slow or stopped ClickHouse holds back only this job.
 *
 * <p>Nothing lost: the Kafka sources commit their offsets when a checkpoint completes, and a table
 * writer acknowledges a checkpoint only after every row before its barrier is inserted. An insert
 * that fails after its retries fails the job, which restarts from its last checkpoint and reads the
 * rows since again. Nothing doubled: those rows are inserted a second time, and every table is a
 * ReplacingMergeTree whose ORDER BY identifies a record, read with FINAL (clickhouse/README.md).
 *
 * <p>Records are decoded and checked as the detection job does; a record it refuses is counted
 * (metric {@code deadLetters}) and not stored: the detection job has already written its dead
 * letter, which the loader stores from cpi2.dead-letter.
 */
public final class LoaderJob {
  public static final String COMPONENT = "loader";

  /** The longest wait between two restarts while ClickHouse does not answer. */
  static final Duration RETRY_MAX = Duration.ofSeconds(10);

  private LoaderJob() {}

  public static void main(String[] args) throws Exception {
    Cpi2Options options = Cpi2Options.fromArgs(args, Cpi2Options.loaderDefaults());
    if (options.get(Cpi2Options.CLICKHOUSE_URL).isEmpty()) {
      throw new IllegalArgumentException("the loader needs --" + Cpi2Options.CLICKHOUSE_URL);
    }
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    // While ClickHouse is down the job fails and restarts; after it is back, the next attempt
    // comes within RETRY_MAX, not the cluster default's longer backoff.
    Configuration restarts = new Configuration();
    restarts.set(RestartStrategyOptions.RESTART_STRATEGY, "exponential-delay");
    restarts.set(RestartStrategyOptions.RESTART_STRATEGY_EXPONENTIAL_DELAY_MAX_BACKOFF, RETRY_MAX);
    env.configure(restarts);
    long startedMs = System.currentTimeMillis();
    build(topic -> KafkaIo.committed(env, options, topic, startedMs), new ClickHouseSinks(options));
    env.execute(options.get(Cpi2Options.JOB_NAME));
  }

  /** Adds the loader's graph: each topic from {@code topics}, decoded, into its tables. */
  public static void build(Function<String, DataStream<RawRecord>> topics, ClickHouseSinks tables) {
    tables.samples(
        decode(
            topics.apply(Topics.SAMPLES),
            CpiSample.class,
            RecordTypes.SAMPLE_STREAM,
            Validators::sample,
            "samples"));
    tables.specs(
        decode(topics.apply(Topics.SPECS), CpiSpec.class, RecordTypes.SPEC, null, "specs"));
    tables.incidents(
        decode(
            topics.apply(Topics.INCIDENTS),
            Incident.class,
            RecordTypes.INCIDENT,
            null,
            "incidents"));
    tables.actions(
        decode(
            topics.apply(Topics.ACTIONS),
            EnforcementAction.class,
            RecordTypes.ACTION,
            Validators::action,
            "actions"));
    tables.outcomes(
        decode(
            topics.apply(Topics.OUTCOMES),
            CapOutcome.class,
            RecordTypes.OUTCOME,
            null,
            "outcomes"));
    tables.deadLetters(
        decode(
            topics.apply(Topics.DEAD_LETTER),
            DeadLetter.class,
            RecordTypes.DEAD_LETTER,
            null,
            "dead-letters"));
  }

  private static <T extends SpecificRecord> DataStream<T> decode(
      DataStream<RawRecord> raw,
      Class<T> type,
      TypeInformation<T> info,
      SerializableFunction<T, String> validate,
      String what) {
    return raw.process(new DecodeFunction<>(type, COMPONENT + "/decode-" + what, validate), info)
        .uid("loader-decode-" + what)
        .name("Decode " + what);
  }
}
