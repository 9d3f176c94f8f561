package org.cpi2.flink.kafka;

import java.io.IOException;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Which host produced a record (the Kafka broker does not say): each host's agents sign what they
 * write with a key of their host's own, and this checks it. A host's key is HMAC-SHA256(master,
 * "cpi2 host key v1\0" + host); a record carries the headers {@code cpi2-host}, {@code cpi2-key}
 * (the master's id) and {@code cpi2-mac} (the first 16 bytes of HMAC-SHA256(the host's key, topic +
 * "\0" + value)). The same in C (libcpi2 hostauth) and Python (cpi2.hostauth); the shared test
 * vectors: schemas/golden/hostauth.json.
 *
 * <p>The masters come from {@code kafka.host-keys}, a file of {@code ID=HEX} lines read where the
 * job runs (never in the job graph). A record is refused (a dead letter, with the reason) when it
 * has no signature, when its key id is unknown, when its MAC is not its host's, or when the host it
 * names (its {@code host} field) is not the one that signed it: a host's credentials write only its
 * own samples and actions.
 */
public final class HostAuth implements Serializable {
  private static final long serialVersionUID = 1L;

  public static final String HEADER_HOST = "cpi2-host";
  public static final String HEADER_KEY_ID = "cpi2-key";
  public static final String HEADER_MAC = "cpi2-mac";
  public static final int MAC_LEN = 16;
  private static final byte[] KEY_LABEL = "cpi2 host key v1\0".getBytes(StandardCharsets.UTF_8);

  /** Hosts whose keys are kept ready (a fleet's worth; older ones are derived again). */
  private static final int MAX_HOSTS = 65536;

  private final String path;
  private transient Map<String, byte[]> masters;
  private transient Map<String, Mac> macs;
  private transient byte[] full;

  private HostAuth(String path) {
    this.path = path;
  }

  /** The check of {@code kafka.host-keys}, or null when that option is empty (no check). */
  public static HostAuth of(String path) {
    return path == null || path.isEmpty() ? null : new HostAuth(path);
  }

  /** Reads the masters (where the job runs: on the TaskManager). */
  public void open() {
    Map<String, byte[]> m = new HashMap<>();
    try {
      for (String line : Files.readAllLines(Path.of(path), StandardCharsets.UTF_8)) {
        String l = line.strip();
        if (l.isEmpty() || l.startsWith("#")) {
          continue;
        }
        int eq = l.indexOf('=');
        byte[] key = eq > 0 ? unhex(l.substring(eq + 1).strip()) : null;
        if (key == null || key.length != 32) {
          throw new IllegalArgumentException("kafka.host-keys " + path + ": expected ID=64 hex");
        }
        m.put(l.substring(0, eq).strip(), key);
      }
    } catch (IOException e) {
      throw new IllegalArgumentException("kafka.host-keys " + path + ": " + e, e);
    }
    if (m.isEmpty()) {
      throw new IllegalArgumentException("kafka.host-keys " + path + ": no key");
    }
    masters = m;
    macs =
        new LinkedHashMap<>(1024, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Mac> eldest) {
            return size() > MAX_HOSTS;
          }
        };
    full = new byte[32];
  }

  /** A host's key under a master. */
  public static byte[] hostKey(byte[] master, String host) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(master, "HmacSHA256"));
      mac.update(KEY_LABEL);
      return mac.doFinal(host.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A record's MAC under its host's key. */
  public static byte[] mac(byte[] hostKey, String topic, byte[] value) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(hostKey, "HmacSHA256"));
      mac.update(topic.getBytes(StandardCharsets.UTF_8));
      mac.update((byte) 0);
      byte[] full = mac.doFinal(value);
      byte[] out = new byte[MAC_LEN];
      System.arraycopy(full, 0, out, 0, MAC_LEN);
      return out;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Null when {@code raw} was signed by {@code host} (the host its value names), else why not. */
  public String check(RawRecord raw, String host) {
    if (raw.producerHost == null || raw.keyId == null || raw.mac == null) {
      return "record not signed by its host (no cpi2-host, cpi2-key and cpi2-mac headers)";
    }
    if (!raw.producerHost.equals(host)) {
      return "record of host "
          + printable(host)
          + " signed by host "
          + printable(raw.producerHost)
          + ": a host writes only its own";
    }
    String id = raw.keyId;
    Mac mac = macs.get(id + "\0" + host);
    try {
      if (mac == null) {
        byte[] master = masters.get(id);
        if (master == null) {
          return "record signed with an unknown host key id " + printable(id);
        }
        mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(hostKey(master, host), "HmacSHA256"));
        macs.put(id + "\0" + host, mac);
      }
      mac.update(raw.topic.getBytes(StandardCharsets.UTF_8));
      mac.update((byte) 0);
      mac.update(raw.value == null ? new byte[0] : raw.value);
      mac.doFinal(full, 0);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
    if (raw.mac.length != MAC_LEN
        || !MessageDigest.isEqual(java.util.Arrays.copyOf(full, MAC_LEN), raw.mac)) {
      return "record of host " + printable(host) + " not signed with its key";
    }
    return null;
  }

  private static String printable(String s) {
    String t = s.length() > 64 ? s.substring(0, 64) + "..." : s;
    return t.replaceAll("\\p{Cntrl}", "?");
  }

  static byte[] unhex(String s) {
    if (s.length() % 2 != 0) {
      return null;
    }
    byte[] out = new byte[s.length() / 2];
    for (int i = 0; i < out.length; i++) {
      int hi = Character.digit(s.charAt(2 * i), 16), lo = Character.digit(s.charAt(2 * i + 1), 16);
      if (hi < 0 || lo < 0) {
        return null;
      }
      out[i] = (byte) (hi << 4 | lo);
    }
    return out;
  }
}
