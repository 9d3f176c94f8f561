package org.cpi2.flink.kafka;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A record's producer host: the shared vectors (schemas/golden/hostauth.json, as C and Python
 * compute them), and the check that refuses a record its host did not sign.
 */
class HostAuthTest {
  @TempDir Path dir;

  private static JsonNode golden() throws Exception {
    Path p =
        Path.of(System.getProperty("user.dir")).getParent().resolve("schemas/golden/hostauth.json");
    return new ObjectMapper().readTree(Files.readString(p));
  }

  private HostAuth auth(JsonNode g) throws Exception {
    Path keys = dir.resolve("host-keys");
    Files.writeString(
        keys, "# masters\n" + g.get("key_id").asText() + "=" + g.get("master_hex").asText() + "\n");
    HostAuth a = HostAuth.of(keys.toString());
    a.open();
    return a;
  }

  private static RawRecord signed(
      String topic, byte[] value, String host, String keyId, byte[] mac) {
    RawRecord r = RawRecord.of(topic, 0, 0, host.getBytes(), value);
    r.producerHost = host;
    r.keyId = keyId;
    r.mac = mac;
    return r;
  }

  @Test
  void theSharedVectors() throws Exception {
    JsonNode g = golden();
    assertEquals(HostAuth.HEADER_HOST, g.get("headers").get("host").asText());
    assertEquals(HostAuth.HEADER_KEY_ID, g.get("headers").get("key_id").asText());
    assertEquals(HostAuth.HEADER_MAC, g.get("headers").get("mac").asText());
    assertEquals(HostAuth.MAC_LEN, g.get("mac_len").asInt());
    byte[] master = HostAuth.unhex(g.get("master_hex").asText());
    HostAuth a = auth(g);
    for (JsonNode v : g.get("vectors")) {
      String host = v.get("host").asText(), topic = v.get("topic").asText();
      byte[] key = HostAuth.hostKey(master, host),
          value = HostAuth.unhex(v.get("value_hex").asText());
      assertArrayEquals(HostAuth.unhex(v.get("host_key_hex").asText()), key, host);
      byte[] mac = HostAuth.mac(key, topic, value);
      assertArrayEquals(HostAuth.unhex(v.get("mac_hex").asText()), mac, host);
      assertNull(a.check(signed(topic, value, host, "1", mac), host));
      assertNull(a.check(signed(topic, value, host, "1", mac), host)); // its key kept ready
    }
  }

  @Test
  void aRecordItsHostDidNotSignIsRefused() throws Exception {
    JsonNode g = golden();
    byte[] master = HostAuth.unhex(g.get("master_hex").asText());
    HostAuth a = auth(g);
    byte[] value = "sample of node-b".getBytes();
    byte[] macA = HostAuth.mac(HostAuth.hostKey(master, "node-a"), "cpi2.samples", value);
    byte[] macB = HostAuth.mac(HostAuth.hostKey(master, "node-b"), "cpi2.samples", value);
    // node-a's credentials write a sample naming node-b: signed as node-a, or as node-b with
    // node-a's key, or copied onto another topic
    assertTrue(
        a.check(signed("cpi2.samples", value, "node-a", "1", macA), "node-b")
            .contains("a host writes only its own"));
    assertTrue(
        a.check(signed("cpi2.samples", value, "node-b", "1", macA), "node-b")
            .contains("not signed with its key"));
    assertTrue(
        a.check(signed("cpi2.actions", value, "node-b", "1", macB), "node-b")
            .contains("not signed"));
    assertTrue(
        a.check(RawRecord.of("cpi2.samples", 0, 0, null, value), "node-b")
            .contains("not signed by its host"));
    assertTrue(
        a.check(signed("cpi2.samples", value, "node-b", "2", macB), "node-b")
            .contains("unknown host key id"));
    assertTrue(
        a.check(signed("cpi2.samples", value, "node-b", "1", new byte[3]), "node-b")
            .contains("not signed"));
    assertNull(a.check(signed("cpi2.samples", value, "node-b", "1", macB), "node-b"));
    // a master file that is not one: refused at start
    Path bad = dir.resolve("bad");
    Files.writeString(bad, "1=abc\n");
    assertThrows(IllegalArgumentException.class, () -> HostAuth.of(bad.toString()).open());
    assertNull(HostAuth.of(""));
  }
}
