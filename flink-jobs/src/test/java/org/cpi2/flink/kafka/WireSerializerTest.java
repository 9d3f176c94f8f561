package org.cpi2.flink.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.cpi2.schema.CommandKind;
import org.cpi2.schema.ControlCommand;
import org.cpi2.wire.Wire;
import org.junit.jupiter.api.Test;

class WireSerializerTest {
  @Test
  void writesTheWireFormatKeyedAndLeavesTheTimestampToTheProducer() throws Exception {
    ControlCommand c =
        ControlCommand.newBuilder()
            .setCommandId("c1")
            .setIssuedAtUs(7L)
            .setCommand(CommandKind.PROTECTION_OFF)
            .build();
    WireSerializer<ControlCommand> s =
        new WireSerializer<>(ControlCommand.class, "cpi2.control", x -> "*");
    // An event time four hours ahead of the broker's clock (a simulated fleet) must not become
    // the Kafka timestamp: the broker would refuse the record.
    long future = System.currentTimeMillis() + 4 * 3600_000L;
    ProducerRecord<byte[], byte[]> r = s.serialize(c, null, future);
    assertEquals("cpi2.control", r.topic());
    assertNull(r.timestamp());
    assertArrayEquals("*".getBytes(StandardCharsets.UTF_8), r.key());
    assertEquals(c, Wire.of(ControlCommand.class).decode(r.value()));
  }
}
