package org.cpi2.wire;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.avro.AvroRuntimeException;
import org.apache.avro.Schema;
import org.apache.avro.message.BadHeaderException;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.message.MissingSchemaException;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificRecord;

/**
 * The project's wire format: Avro single-object encoding (C3 01, 8-byte little-endian CRC-64-AVRO
 * fingerprint of the writer schema, binary payload). A codec decodes every archived version of its
 * message, resolving older and newer writers to the current reader schema.
 */
public final class Wire<T extends SpecificRecord> {
  private final Schema schema;
  private final BinaryMessageEncoder<T> encoder;
  private final BinaryMessageDecoder<T> decoder;

  private Wire(Schema schema) {
    this.schema = schema;
    SpecificData model = SpecificData.get();
    this.encoder = new BinaryMessageEncoder<>(model, schema);
    this.decoder = new BinaryMessageDecoder<>(model, schema);
    for (Schema old : SchemaVersions.of(schema.getName())) {
      decoder.addSchema(old);
    }
  }

  /** A codec for the generated class {@code type}, e.g. {@code Wire.of(CpiSample.class)}. */
  public static <T extends SpecificRecord> Wire<T> of(Class<T> type) {
    return new Wire<>(SpecificData.get().getSchema(type));
  }

  public Schema schema() {
    return schema;
  }

  public byte[] encode(T record) {
    try {
      ByteBuffer buf = encoder.encode(record);
      byte[] out = new byte[buf.remaining()];
      buf.get(out);
      return out;
    } catch (IOException | AvroRuntimeException e) {
      throw new IllegalArgumentException("cannot encode " + schema.getName() + ": " + e, e);
    }
  }

  /** Decodes one message; every failure becomes a {@link WireFormatException} with a reason. */
  public T decode(byte[] message) throws WireFormatException {
    if (message == null) {
      throw new WireFormatException("empty message (null value)");
    }
    if (message.length < 10) {
      throw new WireFormatException(
          "message too short for single-object encoding: " + message.length + " bytes");
    }
    try {
      return decoder.decode(message);
    } catch (MissingSchemaException e) {
      throw new WireFormatException(
          "unknown writer schema for " + schema.getName() + ": " + e.getMessage(), e);
    } catch (BadHeaderException e) {
      throw new WireFormatException("not Avro single-object encoding: " + e.getMessage(), e);
    } catch (IOException | RuntimeException e) {
      throw new WireFormatException("malformed " + schema.getName() + " payload: " + e, e);
    }
  }
}
