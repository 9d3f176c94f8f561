package org.cpi2.flink.stream;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.cpi2.schema.CpiSample;
import org.cpi2.wire.Wire;
import org.cpi2.wire.WireFormatException;

/**
 * Reads a CpiSample's event time ({@code window_start_us}, in ms) from its wire bytes, in the Kafka
 * source, so that every partition gets its own watermark before partitions are interleaved.
 *
 * <p>For the current writer schema it skips the fields before {@code window_start_us} without
 * decoding them (the skip plan is derived from the schema, so a reordered schema changes the plan,
 * not the result); other writer versions are decoded whole. A record that cannot be read has no
 * event time ({@link #NONE}): it cannot move a watermark, and the decoder turns it into a dead
 * letter.
 */
public final class SampleEventTime implements Serializable {
  private static final long serialVersionUID = 1L;
  public static final long NONE = Long.MIN_VALUE;
  private static final String FIELD = "window_start_us";

  private transient long fingerprint;
  private transient List<Schema> skipped;
  private transient Wire<CpiSample> wire;

  private void init() {
    Schema schema = CpiSample.getClassSchema();
    fingerprint = SchemaNormalization.parsingFingerprint64(schema);
    List<Schema> plan = new ArrayList<>();
    for (Schema.Field f : schema.getFields()) {
      if (f.name().equals(FIELD)) {
        break;
      }
      plan.add(f.schema());
    }
    skipped = plan;
    wire = Wire.of(CpiSample.class);
  }

  /** The sample's window start in ms, or {@link #NONE}. */
  public long millis(byte[] message) {
    if (skipped == null) {
      init();
    }
    if (message == null || message.length < 11 || (message[0] & 0xff) != 0xC3 || message[1] != 1) {
      return NONE;
    }
    if (littleEndianLong(message, 2) != fingerprint) {
      try {
        return wire.decode(message).getWindowStartUs() / 1000;
      } catch (WireFormatException e) {
        return NONE;
      }
    }
    try {
      Cursor c = new Cursor(message, 10);
      for (Schema s : skipped) {
        c.skip(s);
      }
      return c.readLong() / 1000;
    } catch (ArrayIndexOutOfBoundsException | IllegalStateException e) {
      return NONE;
    }
  }

  private static long littleEndianLong(byte[] b, int at) {
    long v = 0;
    for (int i = 7; i >= 0; i--) {
      v = (v << 8) | (b[at + i] & 0xff);
    }
    return v;
  }

  /** Avro binary reading, just what skipping the fields before the event time needs. */
  private static final class Cursor {
    private final byte[] b;
    private int at;

    Cursor(byte[] b, int at) {
      this.b = b;
      this.at = at;
    }

    long readLong() {
      long raw = 0;
      for (int shift = 0; shift < 64; shift += 7) {
        int x = b[at++] & 0xff;
        raw |= (long) (x & 0x7f) << shift;
        if ((x & 0x80) == 0) {
          return (raw >>> 1) ^ -(raw & 1);
        }
      }
      throw new IllegalStateException("varint longer than 10 bytes");
    }

    void advance(long n) {
      if (n < 0 || n > b.length - at) {
        throw new IllegalStateException("length out of range");
      }
      at += (int) n;
    }

    void skip(Schema s) {
      switch (s.getType()) {
        case NULL -> {}
        case BOOLEAN -> advance(1);
        case INT, LONG, ENUM -> readLong();
        case FLOAT -> advance(4);
        case DOUBLE -> advance(8);
        case STRING, BYTES -> advance(readLong());
        case FIXED -> advance(s.getFixedSize());
        case UNION -> {
          long branch = readLong();
          if (branch < 0 || branch >= s.getTypes().size()) {
            throw new IllegalStateException("union branch out of range");
          }
          skip(s.getTypes().get((int) branch));
        }
        case RECORD -> s.getFields().forEach(f -> skip(f.schema()));
        default -> throw new IllegalStateException("cannot skip " + s.getType());
      }
    }
  }
}
