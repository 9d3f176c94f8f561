package org.cpi2.flink.kafka;

import java.nio.charset.StandardCharsets;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.cpi2.wire.Wire;

/**
 * Writes records to one topic in the project's wire format, keyed as the schema's doc says.
 *
 * <p>The Kafka timestamp is left to the producer (the time of writing), not the record's event
 * time: event time lives in the payload, and a broker refuses timestamps more than
 * message.timestamp.after.max.ms (1 h by default) ahead of its clock, which a simulated fleet
 * running faster than real time reaches within the hour. Enforcers read the Kafka timestamp as the
 * incident's arrival time.
 */
public class WireSerializer<T extends SpecificRecord> implements KafkaRecordSerializationSchema<T> {
  private static final long serialVersionUID = 1L;

  private final Class<T> type;
  private final String topic;
  private final SerializableFunction<T, String> key;
  private transient Wire<T> wire;

  public WireSerializer(Class<T> type, String topic, SerializableFunction<T, String> key) {
    this.type = type;
    this.topic = topic;
    this.key = key;
  }

  @Override
  public ProducerRecord<byte[], byte[]> serialize(T record, KafkaSinkContext ctx, Long timestamp) {
    if (wire == null) {
      wire = Wire.of(type);
    }
    return new ProducerRecord<>(
        topic, null, null, key.apply(record).getBytes(StandardCharsets.UTF_8), wire.encode(record));
  }
}
