package org.cpi2.flink.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TransactionalIdAuthorizationException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.kafka.KafkaIo;
import org.cpi2.wire.Topics;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * kafka.delivery exactly-once against the local stack's broker and ACLs: the detection job's
 * transactional producer settings (principal detector, its sink's transactional-id prefix, the
 * transaction timeout) are accepted by the broker; a transactional id outside the prefix is
 * refused; and a record of an aborted transaction is skipped by a consumer with the sources'
 * settings (read_committed) while a read_uncommitted one sees it.
 */
class KafkaTransactionsStackIT {
  private final Cpi2Options options =
      Cpi2Options.defaults().with(Cpi2Options.KAFKA_DELIVERY, "exactly-once");

  private static Properties detector() {
    Properties p = LocalClusterStackIT.kafka("detector");
    Assumptions.assumeTrue(
        p.containsKey("sasl.jaas.config"),
        "no detector client file under " + LocalClusterStackIT.SECRETS + " (make up)");
    return p;
  }

  private KafkaProducer<byte[], byte[]> producer(String transactionalId) {
    Properties p = KafkaIo.producerProperties(options, detector());
    p.put("transactional.id", transactionalId);
    p.put("max.block.ms", "30000");
    return new KafkaProducer<>(p, new ByteArraySerializer(), new ByteArraySerializer());
  }

  private static List<ConsumerRecord<byte[], byte[]>> read(
      Properties p, TopicPartition tp, long offset) {
    p.put("max.poll.records", "10");
    List<ConsumerRecord<byte[], byte[]>> out = new ArrayList<>();
    try (KafkaConsumer<byte[], byte[]> c =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      c.assign(List.of(tp));
      c.seek(tp, offset);
      long deadline = System.currentTimeMillis() + 5000;
      while (System.currentTimeMillis() < deadline) {
        for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
          if (r.offset() == offset) {
            out.add(r);
          }
        }
        if (!out.isEmpty()) {
          break;
        }
      }
    }
    return out;
  }

  @Test
  void theDetectorsTransactionsAreAllowedAndAbortedOnesAreNotRead() throws Exception {
    String id =
        KafkaIo.transactionalIdPrefix(options, Topics.DEAD_LETTER)
            + "-it-"
            + UUID.randomUUID().toString().substring(0, 8);
    RecordMetadata sent;
    try (KafkaProducer<byte[], byte[]> p = producer(id)) {
      // InitProducerId: refused without the TransactionalId ACL or with a timeout above the
      // broker's transaction.max.timeout.ms.
      p.initTransactions();
      p.beginTransaction();
      sent =
          p.send(
                  new ProducerRecord<>(
                      Topics.DEAD_LETTER,
                      "kafka-transactions-it".getBytes(StandardCharsets.UTF_8),
                      id.getBytes(StandardCharsets.UTF_8)))
              .get();
      p.abortTransaction();
    }
    TopicPartition tp = new TopicPartition(sent.topic(), sent.partition());
    Properties admin = LocalClusterStackIT.kafka("admin");
    Properties uncommitted = new Properties();
    uncommitted.putAll(admin);
    uncommitted.put("isolation.level", "read_uncommitted");
    List<ConsumerRecord<byte[], byte[]>> seen = read(uncommitted, tp, sent.offset());
    assertEquals(1, seen.size(), "read_uncommitted sees the aborted record");
    assertEquals(id, new String(seen.get(0).value(), StandardCharsets.UTF_8));
    assertTrue(
        read(KafkaIo.consumerProperties(admin), tp, sent.offset()).isEmpty(),
        "a source (read_committed) read the aborted record at " + tp + "@" + sent.offset());
  }

  @Test
  void aTransactionalIdOutsideTheJobsPrefixIsRefused() {
    try (KafkaProducer<byte[], byte[]> p =
        producer("cpi2-other-" + UUID.randomUUID().toString().substring(0, 8))) {
      KafkaException e = assertThrows(KafkaException.class, p::initTransactions);
      assertTrue(
          e instanceof TransactionalIdAuthorizationException
              || e.getCause() instanceof TransactionalIdAuthorizationException,
          e.toString());
    }
  }
}
