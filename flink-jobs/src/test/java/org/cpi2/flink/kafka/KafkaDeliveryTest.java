package org.cpi2.flink.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Properties;
import java.util.Set;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.schema.Incident;
import org.cpi2.wire.Topics;
import org.junit.jupiter.api.Test;

/** kafka.delivery: the sinks' guarantee, transactional ids and timeout; sources read_committed. */
class KafkaDeliveryTest {
  private static Cpi2Options exactlyOnce() {
    return Cpi2Options.defaults().with(Cpi2Options.KAFKA_DELIVERY, "exactly-once");
  }

  @Test
  void atLeastOnceByDefaultWithNoTransactionTimeoutOfItsOwn() {
    Cpi2Options o = Cpi2Options.defaults();
    assertFalse(o.exactlyOnce());
    assertEquals(DeliveryGuarantee.AT_LEAST_ONCE, KafkaIo.delivery(o));
    Properties client = new Properties();
    client.put("security.protocol", "SASL_SSL");
    Properties p = KafkaIo.producerProperties(o, client);
    assertEquals(client, p);
    assertFalse(p.containsKey("transaction.timeout.ms"));
  }

  @Test
  void exactlyOnceTransactionsWithinTheBrokersMaximum() {
    Cpi2Options o = exactlyOnce();
    assertEquals(DeliveryGuarantee.EXACTLY_ONCE, KafkaIo.delivery(o));
    Properties client = new Properties();
    client.put("security.protocol", "SASL_SSL");
    Properties p = KafkaIo.producerProperties(o, client);
    assertEquals("SASL_SSL", p.get("security.protocol"));
    long timeout = Long.parseLong((String) p.get("transaction.timeout.ms"));
    // Kafka's default transaction.max.timeout.ms (the stack does not raise it): InitProducerId
    // refuses a longer timeout.
    assertTrue(timeout <= 900_000, "transaction.timeout.ms " + timeout);
    assertTrue(timeout > 2 * o.getLong(Cpi2Options.CHECKPOINT_INTERVAL_MS));
    assertFalse(client.containsKey("transaction.timeout.ms"), "the client's own are not changed");
    // The connector's sanity checks pass: a prefix is set for EXACTLY_ONCE.
    KafkaSink<Incident> sink = KafkaIo.sink(o, Incident.class, Topics.INCIDENTS, Incident::getHost);
    assertTrue(sink != null);
  }

  @Test
  void everySinkOfAJobHasItsOwnPrefixAndTwoJobsShareNone() {
    Cpi2Options a = exactlyOnce();
    Set<String> prefixes = new HashSet<>();
    for (String topic :
        new String[] {Topics.SPECS, Topics.INCIDENTS, Topics.OUTCOMES, Topics.DEAD_LETTER}) {
      String p = KafkaIo.transactionalIdPrefix(a, topic);
      // the detector principal's TRANSACTIONAL_ID ACL is prefixed cpi2-flink- (acls.conf)
      assertTrue(p.startsWith("cpi2-flink-jobs-"), p);
      assertTrue(p.endsWith(topic), p);
      assertTrue(prefixes.add(p), "two sinks share " + p);
    }
    Cpi2Options b = a.with(Cpi2Options.JOB_NAME, "cpi2-flink-other");
    for (String topic : new String[] {Topics.SPECS, Topics.INCIDENTS}) {
      assertNotEquals(
          KafkaIo.transactionalIdPrefix(a, topic), KafkaIo.transactionalIdPrefix(b, topic));
    }
  }

  @Test
  void exactlyOnceNeedsCheckpointsShorterThanTheTimeout() {
    assertThrows(
        IllegalArgumentException.class,
        () ->
            KafkaIo.producerProperties(
                exactlyOnce().with(Cpi2Options.CHECKPOINT_INTERVAL_MS, "0"), new Properties()));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            KafkaIo.producerProperties(
                exactlyOnce()
                    .with(Cpi2Options.CHECKPOINT_INTERVAL_MS, "600000")
                    .with(Cpi2Options.KAFKA_TRANSACTION_TIMEOUT_MS, "900000"),
                new Properties()));
    // at-least-once does not care
    KafkaIo.producerProperties(
        Cpi2Options.defaults().with(Cpi2Options.CHECKPOINT_INTERVAL_MS, "0"), new Properties());
  }

  @Test
  void aMisspeltGuaranteeIsRefusedWhenTheOptionsAreRead() throws Exception {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Cpi2Options.fromArgs(new String[] {"--kafka.delivery", "exactly_once"}));
    assertTrue(e.getMessage().contains("exactly-once"), e.getMessage());
    assertTrue(
        Cpi2Options.fromArgs(new String[] {"--kafka.delivery", "exactly-once"}).exactlyOnce());
  }

  @Test
  void sourcesReadCommittedOnly() {
    Properties client = new Properties();
    client.put("security.protocol", "SASL_SSL");
    Properties p = KafkaIo.consumerProperties(client);
    assertEquals("read_committed", p.get("isolation.level"));
    assertEquals("SASL_SSL", p.get("security.protocol"));
    p.put("bootstrap.servers", "127.0.0.1:1");
    p.put("key.deserializer", ByteArrayDeserializer.class.getName());
    p.put("value.deserializer", ByteArrayDeserializer.class.getName());
    p.put("security.protocol", "PLAINTEXT");
    assertEquals(
        "read_committed",
        new ConsumerConfig(p).getString(ConsumerConfig.ISOLATION_LEVEL_CONFIG),
        "a Kafka consumer takes the setting as given");
  }
}
