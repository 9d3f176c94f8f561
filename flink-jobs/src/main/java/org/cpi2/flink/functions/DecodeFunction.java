package org.cpi2.flink.functions;

import java.nio.ByteBuffer;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.SerializableFunction;
import org.apache.avro.specific.SpecificRecord;
import org.cpi2.flink.records.RawRecord;
import org.cpi2.schema.DeadLetter;
import org.cpi2.wire.Wire;
import org.cpi2.wire.WireFormatException;

/**
 * Decodes Kafka values in the project's wire format. Never throws for bad input: a record that
 * cannot be decoded, or that fails {@code validate} (which returns a reason or null), goes to the
 * {@link RecordTypes#DEAD_LETTERS} side output with its topic, partition, offset and payload.
 */
public class DecodeFunction<T extends SpecificRecord> extends ProcessFunction<RawRecord, T> {
  private static final long serialVersionUID = 1L;

  private final Class<T> type;
  private final String component;
  private final SerializableFunction<T, String> validate;
  private transient Wire<T> wire;
  private transient Counter deadLetters;

  public DecodeFunction(Class<T> type, String component, SerializableFunction<T, String> validate) {
    this.type = type;
    this.component = component;
    this.validate = validate;
  }

  @Override
  public void open(OpenContext ctx) {
    wire = Wire.of(type);
    deadLetters = getRuntimeContext().getMetricGroup().counter("deadLetters");
  }

  @Override
  public void processElement(RawRecord raw, Context ctx, Collector<T> out) {
    String reason;
    try {
      T record = wire.decode(raw.value);
      reason = validate == null ? null : validate.apply(record);
      if (reason == null) {
        out.collect(record);
        return;
      }
    } catch (WireFormatException e) {
      reason = e.getMessage();
    } catch (RuntimeException e) {
      reason = "cannot use " + type.getSimpleName() + ": " + e;
    }
    deadLetters.inc();
    ctx.output(RecordTypes.DEAD_LETTERS, deadLetter(raw, component, reason));
  }

  static DeadLetter deadLetter(RawRecord raw, String component, String reason) {
    return DeadLetter.newBuilder()
        .setAtUs(System.currentTimeMillis() * 1000)
        .setComponent(component)
        .setSourceTopic(raw.topic == null ? "" : raw.topic)
        .setPartition(raw.partition)
        .setOffset(raw.offset)
        .setReason(reason == null ? "unknown" : reason)
        .setPayload(ByteBuffer.wrap(raw.value == null ? new byte[0] : raw.value))
        .build();
  }
}
