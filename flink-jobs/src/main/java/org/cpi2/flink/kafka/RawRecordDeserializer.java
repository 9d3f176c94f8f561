package org.cpi2.flink.kafka;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.util.Collector;
import org.apache.kafka.clients.consumer.ConsumerRecord;

/** Passes every Kafka record on as bytes with its coordinates: nothing here can fail. */
public class RawRecordDeserializer implements KafkaRecordDeserializationSchema<RawRecord> {
  private static final long serialVersionUID = 1L;

  @Override
  public void deserialize(ConsumerRecord<byte[], byte[]> r, Collector<RawRecord> out) {
    RawRecord raw = RawRecord.of(r.topic(), r.partition(), r.offset(), r.key(), r.value());
    raw.timestampMs = r.timestamp();
    out.collect(raw);
  }

  @Override
  public TypeInformation<RawRecord> getProducedType() {
    return TypeInformation.of(RawRecord.class);
  }
}
