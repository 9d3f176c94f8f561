package org.cpi2.flink.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.header.Header;

/** Passes every Kafka record on as bytes with its coordinates: nothing here can fail. */
public class RawRecordDeserializer implements KafkaRecordDeserializationSchema<RawRecord> {
  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<RawRecord> out) {
    RawRecord raw = RawRecord.of(r.topic(), r.partition(), r.offset(), r.key(), r.value());
    raw.timestampMs = r.timestamp();
    Header host = r.headers().lastHeader(HostAuth.HEADER_HOST);
    Header keyId = r.headers().lastHeader(HostAuth.HEADER_KEY_ID);
    Header mac = r.headers().lastHeader(HostAuth.HEADER_MAC);
    if (host != null && keyId != null && mac != null) {
      raw.producerHost = new String(host.value(), StandardCharsets.UTF_8);
      raw.keyId = new String(keyId.value(), StandardCharsets.UTF_8);
      raw.mac = mac.value();
    }
    out.collect(raw);
  }

  @Override
  public TypeInformation<RawRecord> getProducedType() {
    return TypeInformation.of(RawRecord.class);
  }
}
