package org.cpi2.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.File;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.io.DecoderFactory;
import org.apache.avro.specific.SpecificData;
import org.apache.avro.specific.SpecificDatumReader;
import org.apache.avro.specific.SpecificRecord;
import org.cpi2.schema.CpiSample;
import org.junit.jupiter.api.Test;

/**
 * The Java side of the shared golden vectors (schemas/golden/vectors.json); the C and Python tests
 * check the same file. With -Dgolden.update=true it rewrites the hex (on purpose only).
 */
class GoldenVectorsTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  @SuppressWarnings("unchecked")
  private static Wire<SpecificRecord> wire(String message) throws Exception {
    Class<?> type = Class.forName("org.cpi2.schema." + message);
    return Wire.of((Class<SpecificRecord>) type);
  }

  private static SpecificRecord fromJson(Schema schema, JsonNode value) throws Exception {
    SpecificDatumReader<SpecificRecord> reader = new SpecificDatumReader<>(schema);
    return reader.read(null, DecoderFactory.get().jsonDecoder(schema, value.toString()));
  }

  private static JsonNode load() throws Exception {
    try (InputStream in =
        GoldenVectorsTest.class.getResourceAsStream("/cpi2/golden/vectors.json")) {
      return JSON.readTree(in);
    }
  }

  @Test
  void javaEncodesEveryVectorToItsHexAndBack() throws Exception {
    JsonNode doc = load();
    boolean update = Boolean.getBoolean("golden.update");
    List<String> failures = new ArrayList<>();
    for (JsonNode v : doc.get("vectors")) {
      Wire<SpecificRecord> wire = wire(v.get("message").asText());
      SpecificRecord record = fromJson(wire.schema(), v.get("value"));
      String hex = HexFormat.of().formatHex(wire.encode(record));
      String fp =
          Long.toUnsignedString(SchemaNormalization.parsingFingerprint64(wire.schema()), 16);
      if (update) {
        ((ObjectNode) v).put("hex", hex);
        ((ObjectNode) v).put("fingerprint", String.format("%16s", fp).replace(' ', '0'));
        continue;
      }
      if (!hex.equals(v.path("hex").asText())) {
        failures.add(v.get("name") + ": expected " + v.path("hex").asText() + " got " + hex);
      }
      assertEquals(
          record,
          wire.decode(HexFormat.of().parseHex(v.get("hex").asText())),
          v.get("name").asText());
    }
    if (update) {
      File out = new File(System.getProperty("golden.file", "golden/vectors.json"));
      JSON.writerWithDefaultPrettyPrinter().writeValue(out, doc);
      return;
    }
    assertEquals(List.of(), failures);
  }

  @Test
  void fingerprintsMatchTheVectors() throws Exception {
    // The Python test checks schemagen.py computes these same fingerprints independently.
    for (JsonNode v : load().get("vectors")) {
      Schema s =
          SpecificData.get()
              .getSchema(Class.forName("org.cpi2.schema." + v.get("message").asText()));
      String fp = String.format("%016x", SchemaNormalization.parsingFingerprint64(s));
      assertEquals(v.get("fingerprint").asText(), fp, v.get("name").asText());
    }
  }

  @Test
  void malformedMessagesAreRefusedWithAReason() {
    Wire<CpiSample> wire = Wire.of(CpiSample.class);
    Random rnd = new Random(42);
    for (int i = 0; i < 2000; i++) {
      byte[] junk = new byte[rnd.nextInt(64)];
      rnd.nextBytes(junk);
      if (i % 2 == 0 && junk.length >= 10) {
        junk[0] = (byte) 0xC3;
        junk[1] = 0x01;
      }
      try {
        wire.decode(junk);
      } catch (WireFormatException e) {
        assertFalse(e.getMessage().isEmpty());
      }
    }
    WireFormatException e =
        assertThrows(WireFormatException.class, () -> wire.decode(new byte[] {1, 2}));
    assertFalse(e.getMessage().isBlank());
  }
}
