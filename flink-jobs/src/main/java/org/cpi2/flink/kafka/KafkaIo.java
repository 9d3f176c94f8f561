package org.cpi2.flink.kafka;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.sink.KafkaSinkBuilder;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Cpi2Sinks;
import org.cpi2.flink.Cpi2Sources;
import org.cpi2.flink.spec.SpecBuilderFunction;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Incident;
import org.cpi2.wire.Topics;

/**
 * The job's Kafka topics (ARCHITECTURE.md; their names: {@link Topics}, generated from schemas/).
 * On a fresh start, samples and actions are read from where {@code kafka.start} says (by default
 * the committed offsets of the job's consumer group, or the earliest the first time); after a
 * restore, from the checkpointed offsets. The spec seed source reads the compacted cpi2.specs from
 * the beginning. Every source reads read_committed: records of aborted transactions are skipped,
 * and records of open ones wait for their commit. Sinks are at-least-once by default (consumers
 * deduplicate by the records' ids, incident_id and action_id, and the compacted spec topic keeps
 * the latest per key), or exactly-once with {@code kafka.delivery exactly-once}: each sink writes
 * in Kafka transactions that commit when a checkpoint completes, under transactional ids that start
 * with the job's name and the topic ({@link #transactionalIdPrefix}). Every client signs in as the
 * principal of {@code kafka.client-file}, if one is given.
 */
public final class KafkaIo {
  private KafkaIo() {}

  /**
   * The Java Kafka client properties of a librdkafka client file (see {@code kafka.client-file}):
   * security.protocol; SASL (PLAIN or SCRAM-SHA-256/512) with a JAAS line whose password is {@code
   * ${file:PATH:sasl.password}}, resolved by Kafka's FileConfigProvider when each client starts, so
   * the password is in no job graph, argument or log; the CA (ssl.ca.location) as a PEM trust
   * store. Empty path: no properties (PLAINTEXT).
   */
  public static Properties clientProperties(String path) {
    Properties out = new Properties();
    if (path.isEmpty()) {
      return out;
    }
    Properties f = new Properties();
    try (Reader r = Files.newBufferedReader(Path.of(path))) {
      f.load(r);
    } catch (IOException e) {
      throw new IllegalArgumentException(Cpi2Options.KAFKA_CLIENT_FILE + " " + path + ": " + e, e);
    }
    String protocol = f.getProperty("security.protocol", "PLAINTEXT").toUpperCase();
    out.put("security.protocol", protocol);
    if (protocol.startsWith("SASL_")) {
      String mechanism =
          f.getProperty("sasl.mechanisms", f.getProperty("sasl.mechanism", "")).toUpperCase();
      String module;
      if (mechanism.equals("PLAIN")) {
        module = "org.apache.kafka.common.security.plain.PlainLoginModule";
      } else if (mechanism.startsWith("SCRAM-")) {
        module = "org.apache.kafka.common.security.scram.ScramLoginModule";
      } else {
        throw new IllegalArgumentException(
            path
                + ": sasl.mechanisms must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512, got '"
                + mechanism
                + "'");
      }
      String user = f.getProperty("sasl.username", "");
      if (user.isEmpty() || user.contains("\"") || !f.containsKey("sasl.password")) {
        throw new IllegalArgumentException(
            path + ": needs sasl.username (no quotes) and sasl.password");
      }
      out.put("sasl.mechanism", mechanism);
      out.put("config.providers", "file");
      out.put(
          "config.providers.file.class",
          "org.apache.kafka.common.config.provider.FileConfigProvider");
      out.put(
          "sasl.jaas.config",
          module
              + " required username=\""
              + user
              + "\" password=\"${file:"
              + path
              + ":sasl.password}\";");
    }
    String ca = f.getProperty("ssl.ca.location", "");
    if (protocol.endsWith("SSL") && !ca.isEmpty()) {
      out.put("ssl.truststore.type", "PEM");
      out.put("ssl.truststore.location", ca);
    }
    return out;
  }

  /**
   * What every source adds to the client properties: isolation.level read_committed, so that no
   * record of an aborted transaction (a sink's output before a failure, written again after the
   * restore) is read, by the detection job or the loader.
   */
  public static Properties consumerProperties(Properties client) {
    Properties out = new Properties();
    out.putAll(client);
    out.put("isolation.level", "read_committed");
    return out;
  }

  /** The sinks' delivery guarantee ({@code kafka.delivery}). */
  static DeliveryGuarantee delivery(Cpi2Options o) {
    return o.exactlyOnce() ? DeliveryGuarantee.EXACTLY_ONCE : DeliveryGuarantee.AT_LEAST_ONCE;
  }

  /**
   * The transactional-id prefix of the job's sink to {@code topic}: the job's name, '-', the topic
   * (the connector appends -SUBTASK-N). Each sink of a job has its own, and two jobs share none as
   * long as their names differ (flink-rest.sh runs one job of a name per cluster); a job restored
   * or resubmitted under the same name aborts what its predecessor left open. The detector
   * principal may use the transactional ids starting with cpi2-flink- (stack/kafka/acls.conf).
   */
  public static String transactionalIdPrefix(Cpi2Options o, String topic) {
    return o.get(Cpi2Options.JOB_NAME) + "-" + topic;
  }

  /**
   * A sink's producer properties: the client's, and with exactly-once the transaction timeout,
   * checked against the checkpoint interval (a transaction lives from one checkpoint to the commit
   * after the next).
   */
  public static Properties producerProperties(Cpi2Options o, Properties client) {
    Properties out = new Properties();
    out.putAll(client);
    if (o.exactlyOnce()) {
      long timeout = o.getLong(Cpi2Options.KAFKA_TRANSACTION_TIMEOUT_MS);
      long interval = o.getLong(Cpi2Options.CHECKPOINT_INTERVAL_MS);
      if (interval <= 0 || timeout <= 2 * interval) {
        throw new IllegalArgumentException(
            Cpi2Options.KAFKA_DELIVERY
                + " exactly-once commits at checkpoints: needs "
                + Cpi2Options.CHECKPOINT_INTERVAL_MS
                + " > 0 and "
                + Cpi2Options.KAFKA_TRANSACTION_TIMEOUT_MS
                + " above twice it, got "
                + interval
                + " and "
                + timeout);
      }
      out.put("transaction.timeout.ms", Long.toString(timeout));
    }
    return out;
  }

  public static Cpi2Sources sources(Cpi2Options o) {
    String bootstrap = o.get(Cpi2Options.KAFKA_BOOTSTRAP);
    String group = o.get(Cpi2Options.KAFKA_GROUP);
    Properties client = clientProperties(o.get(Cpi2Options.KAFKA_CLIENT_FILE));
    OffsetsInitializer start = startingOffsets(o.get(Cpi2Options.KAFKA_START));
    return new Cpi2Sources() {
      @Override
      public DataStream<RawRecord> samples(
          StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks) {
        return from(env, bootstrap, client, group, Topics.SAMPLES, start, watermarks);
      }

      @Override
      public DataStream<RawRecord> actions(StreamExecutionEnvironment env) {
        return from(
            env, bootstrap, client, group, Topics.ACTIONS, start, WatermarkStrategy.noWatermarks());
      }

      @Override
      public DataStream<RawRecord> specSeeds(StreamExecutionEnvironment env) {
        return from(
            env,
            bootstrap,
            client,
            group + "-spec-seeds",
            Topics.SPECS,
            OffsetsInitializer.earliest(),
            WatermarkStrategy.noWatermarks());
      }
    };
  }

  /**
   * A topic read by the loader's consumer group: from the group's committed offsets, which the
   * source commits when a checkpoint completes, so only after everything before it is stored; a
   * partition without one starts where {@code kafka.start} says: its earliest record
   * (committed-or-earliest), its first at or after {@code startedMs}, when the job was built
   * (committed-or-latest: the same offsets again after a failure before the first checkpoint), or
   * at or after MS (timestamp-ms:MS).
   */
  public static DataStream<RawRecord> committed(
      StreamExecutionEnvironment env, Cpi2Options o, String topic, long startedMs) {
    String spec = o.get(Cpi2Options.KAFKA_START);
    OffsetsInitializer start;
    if (spec.equals("committed-or-earliest")) {
      start = OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
    } else if (spec.equals("committed-or-latest")) {
      start = new CommittedOrTimestamp(startedMs);
    } else if (spec.startsWith("timestamp-ms:")) {
      start = new CommittedOrTimestamp(Long.parseLong(spec.substring("timestamp-ms:".length())));
    } else {
      throw new IllegalArgumentException(
          Cpi2Options.KAFKA_START
              + ": expected committed-or-earliest, committed-or-latest or timestamp-ms:MS, got "
              + spec);
    }
    return from(
        env,
        o.get(Cpi2Options.KAFKA_BOOTSTRAP),
        clientProperties(o.get(Cpi2Options.KAFKA_CLIENT_FILE)),
        o.get(Cpi2Options.KAFKA_GROUP),
        topic,
        start,
        WatermarkStrategy.noWatermarks());
  }

  /** The {@code kafka.start} option: committed-or-earliest, earliest, latest, timestamp-ms:MS. */
  static OffsetsInitializer startingOffsets(String spec) {
    if (spec.equals("committed-or-earliest")) {
      return OffsetsInitializer.committedOffsets(OffsetResetStrategy.EARLIEST);
    }
    if (spec.equals("earliest")) {
      return OffsetsInitializer.earliest();
    }
    if (spec.equals("latest")) {
      return OffsetsInitializer.latest();
    }
    if (spec.startsWith("timestamp-ms:")) {
      return OffsetsInitializer.timestamp(Long.parseLong(spec.substring("timestamp-ms:".length())));
    }
    throw new IllegalArgumentException(
        Cpi2Options.KAFKA_START
            + ": expected committed-or-earliest, earliest, latest or timestamp-ms:MS, got "
            + spec);
  }

  private static DataStream<RawRecord> from(
      StreamExecutionEnvironment env,
      String bootstrap,
      Properties client,
      String group,
      String topic,
      OffsetsInitializer start,
      WatermarkStrategy<RawRecord> watermarks) {
    KafkaSource<RawRecord> source =
        KafkaSource.<RawRecord>builder()
            .setBootstrapServers(bootstrap)
            .setProperties(consumerProperties(client))
            .setGroupId(group)
            .setTopics(topic)
            .setStartingOffsets(start)
            .setDeserializer(new RawRecordDeserializer())
            .setProperty("partition.discovery.interval.ms", "60000")
            .build();
    return env.fromSource(source, watermarks, "Kafka " + topic).uid("kafka-source-" + topic);
  }

  public static Cpi2Sinks sinks(Cpi2Options o) {
    return new Cpi2Sinks() {
      @Override
      public void specs(DataStream<CpiSpec> s) {
        to(s, o, CpiSpec.class, Topics.SPECS, SpecBuilderFunction::topicKey);
      }

      @Override
      public void incidents(DataStream<Incident> s) {
        to(s, o, Incident.class, Topics.INCIDENTS, Incident::getHost);
      }

      @Override
      public void outcomes(DataStream<CapOutcome> s) {
        to(s, o, CapOutcome.class, Topics.OUTCOMES, CapOutcome::getHost);
      }

      @Override
      public void deadLetters(DataStream<DeadLetter> s) {
        to(s, o, DeadLetter.class, Topics.DEAD_LETTER, DeadLetter::getSourceTopic);
      }
    };
  }

  private static <T extends SpecificRecord> void to(
      DataStream<T> stream,
      Cpi2Options o,
      Class<T> type,
      String topic,
      SerializableFunction<T, String> key) {
    stream.sinkTo(sink(o, type, topic, key)).uid("kafka-sink-" + topic).name("Kafka " + topic);
  }

  /** The sink of one topic, with {@code kafka.delivery}'s guarantee. */
  static <T extends SpecificRecord> KafkaSink<T> sink(
      Cpi2Options o, Class<T> type, String topic, SerializableFunction<T, String> key) {
    Properties producer =
        producerProperties(o, clientProperties(o.get(Cpi2Options.KAFKA_CLIENT_FILE)));
    DeliveryGuarantee delivery = delivery(o);
    KafkaSinkBuilder<T> b =
        KafkaSink.<T>builder()
            .setKafkaProducerConfig(producer) // first: it replaces the producer's properties
            .setBootstrapServers(o.get(Cpi2Options.KAFKA_BOOTSTRAP))
            .setDeliveryGuarantee(delivery)
            .setRecordSerializer(new WireSerializer<>(type, topic, key));
    if (delivery == DeliveryGuarantee.EXACTLY_ONCE) {
      b.setTransactionalIdPrefix(transactionalIdPrefix(o, topic));
    }
    return b.build();
  }
}
