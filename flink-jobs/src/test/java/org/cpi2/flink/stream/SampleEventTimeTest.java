package org.cpi2.flink.stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.Random;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.cpi2.wire.Wire;
import org.junit.jupiter.api.Test;

class SampleEventTimeTest {
  private final Wire<CpiSample> wire = Wire.of(CpiSample.class);
  private final SampleEventTime time = new SampleEventTime();

  @Test
  void readsTheWindowStartOfEverySampleAsDecodingWould() throws Exception {
    Random r = new Random(7);
    for (int i = 0; i < 2000; i++) {
      String name = "x".repeat(r.nextInt(200)) + "é☃" + i;
      long t = r.nextBoolean() ? r.nextLong() : Math.abs(r.nextLong() % 4_000_000_000_000_000L);
      CpiSample s =
          Fixtures.sample(
              "h" + name,
              "job" + name + "/" + i,
              TaskClass.values()[r.nextInt(TaskClass.values().length)],
              t,
              r.nextBoolean() ? null : r.nextDouble(),
              r.nextDouble());
      s.setIsProtected(r.nextBoolean());
      s.setJob(name.substring(0, r.nextInt(name.length())));
      byte[] bytes = wire.encode(s);
      assertEquals(wire.decode(bytes).getWindowStartUs() / 1000, time.millis(bytes), "sample " + i);
    }
  }

  @Test
  void unreadableRecordsHaveNoEventTime() {
    byte[] good =
        wire.encode(Fixtures.sample("h", "j/0", TaskClass.BATCH, 1_700_000_000_000_000L, 1.0, 1.0));
    assertEquals(1_700_000_000_000L, time.millis(good));
    assertEquals(SampleEventTime.NONE, time.millis(null));
    assertEquals(SampleEventTime.NONE, time.millis(new byte[0]));
    assertEquals(SampleEventTime.NONE, time.millis("not avro at all".getBytes()));
    for (int n = 0; n < 16; n++) { // cut inside the header, the strings or the timestamp
      assertEquals(
          SampleEventTime.NONE, time.millis(Arrays.copyOf(good, n)), "first " + n + " bytes");
    }
    byte[] unknownWriter = good.clone();
    unknownWriter[5] ^= 0x55;
    assertEquals(SampleEventTime.NONE, time.millis(unknownWriter));
    byte[] hugeString = good.clone();
    hugeString[10] = (byte) 0xfe; // host length: a large varint
    hugeString[11] = (byte) 0xff;
    hugeString[12] = (byte) 0x7f;
    assertEquals(SampleEventTime.NONE, time.millis(hugeString));
  }
}
