package org.cpi2.flink.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * kafka.client-file: a librdkafka client file as Java client properties, the password left in the
 * file.
 */
class KafkaClientFileTest {
  @TempDir Path dir;

  private String file(String text) throws Exception {
    Path f = dir.resolve("kafka-detector.properties");
    Files.writeString(f, text);
    return f.toString();
  }

  @Test
  void scramOverTlsWithThePasswordResolvedOnlyWhenTheClientStarts() throws Exception {
    String path =
        file(
            "# client of detector\nsecurity.protocol=SASL_SSL\nsasl.mechanisms=SCRAM-SHA-512\n"
                + "sasl.username=detector\nsasl.password=p4ss-w0rd\nssl.ca.location=/secrets/ca.pem\n");
    Properties p = KafkaIo.clientProperties(path);
    assertEquals("SASL_SSL", p.get("security.protocol"));
    assertEquals("SCRAM-SHA-512", p.get("sasl.mechanism"));
    assertEquals("PEM", p.get("ssl.truststore.type"));
    assertEquals("/secrets/ca.pem", p.get("ssl.truststore.location"));
    String jaas = (String) p.get("sasl.jaas.config");
    assertTrue(
        jaas.startsWith(
            "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"detector\""),
        jaas);
    assertFalse(
        p.toString().contains("p4ss-w0rd"), "the password is in the job's properties: " + p);
    // What a Kafka client does with them when it starts: FileConfigProvider reads the password.
    p.put("bootstrap.servers", "127.0.0.1:1");
    p.put("key.serializer", ByteArraySerializer.class.getName());
    p.put("value.serializer", ByteArraySerializer.class.getName());
    ProducerConfig c = new ProducerConfig(p);
    assertTrue(c.getPassword("sasl.jaas.config").value().contains("password=\"p4ss-w0rd\";"));
  }

  @Test
  void plainMechanismAndNoFile() throws Exception {
    Properties p =
        KafkaIo.clientProperties(
            file(
                "security.protocol=SASL_SSL\nsasl.mechanisms=PLAIN\n"
                    + "sasl.username=collector\nsasl.password=x\n"));
    assertTrue(
        ((String) p.get("sasl.jaas.config"))
            .startsWith("org.apache.kafka.common.security.plain.PlainLoginModule"));
    assertFalse(p.containsKey("ssl.truststore.location"));
    assertTrue(KafkaIo.clientProperties("").isEmpty());
  }

  @Test
  void incompleteOrMissingFilesAreRefused() throws Exception {
    assertThrows(
        IllegalArgumentException.class,
        () -> KafkaIo.clientProperties(dir.resolve("none").toString()));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            KafkaIo.clientProperties(
                file(
                    "security.protocol=SASL_SSL\nsasl.mechanisms=SCRAM-SHA-512\nsasl.username=detector\n")));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            KafkaIo.clientProperties(
                file(
                    "security.protocol=SASL_SSL\nsasl.mechanisms=GSSAPI\nsasl.username=d\nsasl.password=x\n")));
  }
}
