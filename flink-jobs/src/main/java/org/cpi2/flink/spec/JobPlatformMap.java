package org.cpi2.flink.spec;

import java.util.HashMap;

/**
 * A per-instance memo keyed by a sample's job and platform, looked up without building the {@code
 * job|platform} string: that concatenation, once per sample in the spec inputs and again in the
 * detector, would be a steady share of the TaskManager's allocations. Holds null values. Bounded:
 * past {@link #LIMIT} entries it starts over. Not thread-safe (one per operator instance).
 */
public final class JobPlatformMap<V> {
  static final int LIMIT = 100_000;

  private final HashMap<String, HashMap<String, V>> byJob = new HashMap<>();
  private int size;

  /** The value put for (job, platform), or {@code absent} if there is none. */
  public V get(String job, String platform, V absent) {
    HashMap<String, V> byPlatform = byJob.get(job);
    if (byPlatform == null) {
      return absent;
    }
    V v = byPlatform.get(platform);
    return v != null || byPlatform.containsKey(platform) ? v : absent;
  }

  public void put(String job, String platform, V value) {
    if (size >= LIMIT) {
      clear();
    }
    if (byJob.computeIfAbsent(job, j -> new HashMap<>(4)).put(platform, value) == null) {
      size++;
    }
  }

  public void clear() {
    byJob.clear();
    size = 0;
  }
}
