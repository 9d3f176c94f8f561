package org.cpi2.flink.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.cpi2.flink.kafka.HostAuth;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;
import org.cpi2.wire.Wire;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost per sample of checking its host's signature (HostAuth.check: the HMAC of a typical
 * encoded CpiSample under its host's key, kept ready per host). {@code hosts}: how many hosts the
 * samples come from in turn (each with its key ready; the job keeps up to 65536).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class HostAuthBenchmark {
  @Param({"1000"})
  public int hosts;

  private RawRecord[] records;
  private String[] names;
  private HostAuth auth;
  private int i;

  @Setup
  public void setUp() throws Exception {
    byte[] master = new byte[32];
    for (int b = 0; b < 32; b++) {
      master[b] = (byte) b;
    }
    Path keys = Files.createTempFile("host-keys", "");
    Files.writeString(keys, "1=" + hex(master) + "\n");
    auth = HostAuth.of(keys.toString());
    auth.open();
    Files.delete(keys);
    Wire<CpiSample> wire = Wire.of(CpiSample.class);
    records = new RawRecord[hosts];
    names = new String[hosts];
    for (int h = 0; h < hosts; h++) {
      names[h] = "node-" + h;
      CpiSample s =
          CpiSample.newBuilder()
              .setHost(names[h])
              .setTask("kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice")
              .setJob("shop/deployment/frontend")
              .setTaskId("frontend-7d9f8c6b5-x2k4q")
              .setPlatform("GenuineIntel/6/85/cpu")
              .setTaskClass(TaskClass.BATCH)
              .setIsProtected(false)
              .setWindowStartUs(1_700_000_000_000_000L)
              .setWindowUs(10_000_000L)
              .setCycles(2_000_000_000L)
              .setInstructions(1_500_000_000L)
              .setCounterSource(CounterSource.CYCLES)
              .setTimeRunningRatio(1.0)
              .setCpuUsage(0.8)
              .setCpi(1.33)
              .build();
      byte[] v = wire.encode(s);
      RawRecord r = RawRecord.of("cpi2.samples", 0, 0, names[h].getBytes(), v);
      r.producerHost = names[h];
      r.keyId = "1";
      r.mac = HostAuth.mac(HostAuth.hostKey(master, names[h]), "cpi2.samples", v);
      records[h] = r;
    }
    for (int h = 0; h < hosts; h++) { // every host's key ready, as in a running job
      if (auth.check(records[h], names[h]) != null) {
        throw new IllegalStateException("a valid signature refused");
      }
    }
  }

  private static String hex(byte[] b) {
    StringBuilder s = new StringBuilder();
    for (byte x : b) {
      s.append(String.format("%02x", x));
    }
    return s.toString();
  }

  @Benchmark
  public String check() {
    int h = i++ % hosts;
    return auth.check(records[h], names[h]);
  }

  /** The sample's size on the wire (for the report). */
  public static void main(String[] args) throws Exception {
    HostAuthBenchmark b = new HostAuthBenchmark();
    b.hosts = 1;
    b.setUp();
    System.out.println("encoded CpiSample: " + b.records[0].value.length + " bytes");
  }
}
