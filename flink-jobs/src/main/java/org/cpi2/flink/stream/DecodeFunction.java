package org.cpi2.flink.stream;

import java.nio.ByteBuffer;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.BinaryDecoder;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.metrics.Counter;
import org.apache.flink.streaming.api.functions.ProcessFunction;
import org.apache.flink.util.Collector;
import org.apache.flink.util.function.SerializableFunction;
import org.cpi2.flink.kafka.HostAuth;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.DeadLetter;
import org.cpi2.wire.Wire;
import org.cpi2.wire.WireFormatException;

/**
 * Decodes Kafka values in the project's wire format. Never throws for bad input: a record that
 * cannot be decoded, that fails {@code validate} (which returns a reason or null), or, with a
 * {@link HostAuth}, that the host it names did not sign, goes to the {@link
 * RecordTypes#DEAD_LETTERS} side output with its topic, partition, offset and payload.
 *
 * <p>A message written with the current schema (its fingerprint in the header) is read straight
 * from the array by the generated class's own decoder ({@link FastPath}); any other message, and
 * any the fast path cannot read, goes through {@link Wire#decode}, which resolves older writers and
 * names the reason of a failure. Same records either way; the fast path is the cheaper.
 */
public class DecodeFunction<T extends SpecificRecord> extends ProcessFunction<RawRecord, T> {
  private static final long serialVersionUID = 1L;

  private final Class<T> type;
  private final String component;
  private final SerializableFunction<T, String> validate;
  private final HostAuth hostAuth; // null: records are not checked for their producer's host
  private final SerializableFunction<T, String> hostOf;
  private transient Wire<T> wire;
  private transient FastPath<T> fast;
  private transient Counter deadLetters;
  private transient Counter decoded;

  public DecodeFunction(Class<T> type, String component, SerializableFunction<T, String> validate) {
    this(type, component, validate, null, null);
  }

  /**
   * Also refuses a record that its host's agent did not sign ({@link HostAuth}; {@code hostOf}: the
   * host a record names), when {@code hostAuth} is not null.
   */
  public DecodeFunction(
      Class<T> type,
      String component,
      SerializableFunction<T, String> validate,
      HostAuth hostAuth,
      SerializableFunction<T, String> hostOf) {
    this.type = type;
    this.component = component;
    this.validate = validate;
    this.hostAuth = hostAuth;
    this.hostOf = hostOf;
  }

  @Override
  public void open(OpenContext ctx) {
    wire = Wire.of(type);
    fast = new FastPath<>(wire.schema());
    deadLetters = getRuntimeContext().getMetricGroup().counter("deadLetters");
    decoded = getRuntimeContext().getMetricGroup().counter("recordsDecoded");
    if (hostAuth != null) {
      hostAuth.open();
    }
  }

  @Override
  public void processElement(RawRecord raw, Context ctx, Collector<T> out) {
    String reason;
    try {
      T record = fast.decode(raw.value);
      if (record == null) {
        record = wire.decode(raw.value);
      }
      reason = validate == null ? null : validate.apply(record);
      if (reason == null && hostAuth != null) {
        reason = hostAuth.check(raw, hostOf.apply(record));
      }
      if (reason == null) {
        decoded.inc();
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

  /**
   * Single-object encoding of the current schema (C3 01, its CRC-64-AVRO fingerprint, payload),
   * decoded from the array with Avro's generated custom coders (SpecificRecordBase.customDecode)
   * rather than the generic resolving reader over an InputStream that Wire's decoder uses.
   */
  static final class FastPath<T> {
    private final byte[] header = new byte[10];
    private final SpecificDatumReader<T> reader;
    private BinaryDecoder decoder;

    FastPath(Schema schema) {
      header[0] = (byte) 0xC3;
      header[1] = (byte) 0x01;
      long fingerprint = SchemaNormalization.parsingFingerprint64(schema);
      for (int i = 0; i < 8; i++) {
        header[2 + i] =
            (byte) (fingerprint >>> (8 * i)); // little-endian, as BinaryMessageEncoder writes it
      }
      SpecificData model = new SpecificData();
      model.setCustomCoders(true);
      reader = new SpecificDatumReader<>(schema, schema, model);
    }

    /** The record, or null if the message is not the current schema's or cannot be read here. */
    T decode(byte[] message) {
      if (message == null || message.length < header.length) {
        return null;
      }
      for (int i = 0; i < header.length; i++) {
        if (message[i] != header[i]) {
          return null;
        }
      }
      try {
        decoder =
            DecoderFactory.get()
                .binaryDecoder(message, header.length, message.length - header.length, decoder);
        return reader.read(null, decoder);
      } catch (java.io.IOException | RuntimeException e) {
        return null; // Wire.decode says why
      }
    }
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
