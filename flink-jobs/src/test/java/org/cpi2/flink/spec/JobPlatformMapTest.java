package org.cpi2.flink.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class JobPlatformMapTest {
  @Test
  void tellsAbsentFromAStoredNullAndKeepsPairsApart() {
    JobPlatformMap<String> m = new JobPlatformMap<>();
    assertEquals("absent", m.get("web", "amd", "absent"));
    m.put("web", "amd", null);
    m.put("web", "intel", "web|intel");
    m.put("web|amd", "", "other");
    assertNull(m.get("web", "amd", "absent"));
    assertEquals("web|intel", m.get("web", "intel", "absent"));
    assertEquals("other", m.get("web|amd", "", "absent"));
    assertEquals("absent", m.get("web", "arm", "absent"));
    m.clear();
    assertEquals("absent", m.get("web", "intel", "absent"));
  }

  @Test
  void startsOverPastItsLimit() {
    JobPlatformMap<Integer> m = new JobPlatformMap<>();
    for (int i = 0; i < JobPlatformMap.LIMIT; i++) {
      m.put("job", "p" + i, i);
    }
    assertEquals(7, m.get("job", "p7", -1));
    m.put("job", "one more", 1);
    assertEquals(-1, m.get("job", "p7", -1));
    assertEquals(1, m.get("job", "one more", -1));
  }
}
