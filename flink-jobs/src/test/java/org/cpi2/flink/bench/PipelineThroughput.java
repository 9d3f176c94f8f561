package org.cpi2.flink.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.specific.SpecificData;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.cpi2.flink.Cpi2Job;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Cpi2Sinks;
import org.cpi2.flink.Cpi2Sources;
import org.cpi2.flink.Fixtures;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;

/**
 * Throughput of the whole graph in one local MiniCluster (no Kafka): encoded samples of a simulated
 * fleet (HOSTS hosts × TASKS tasks, one sample per task a minute) from a generator source through
 * decoding, specs, detection, correlation and judging. Every 50th host has a best-effort antagonist
 * that bursts on odd minutes from minute 20, doubling its LS neighbour's CPI, so analyses and
 * incidents happen too. Usage: PipelineThroughput [hosts] [tasks] [minutes].
 */
public final class PipelineThroughput {
  static final AtomicLong INCIDENTS = new AtomicLong();

  public static void main(String[] args) throws Exception {
    int hosts = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
    int tasks = args.length > 1 ? Integer.parseInt(args[1]) : 25;
    int minutes = args.length > 2 ? Integer.parseInt(args[2]) : 30;
    long n = (long) hosts * tasks * minutes;
    java.nio.file.Path checkpoints =
        java.nio.file.Files.createTempDirectory("cpi2-bench-checkpoints");
    Cpi2Options options =
        Fixtures.options(
            Cpi2Options.SPEC_PERIOD_S,
            "600",
            Cpi2Options.SPEC_MIN_SAMPLES_PER_TASK,
            "5",
            Cpi2Options.CHECKPOINT_INTERVAL_MS,
            "10000",
            // State outgrows the 5 MB of in-memory checkpoints from about 50k tasks.
            Cpi2Options.CHECKPOINT_DIR,
            checkpoints.toUri().toString());
    Cpi2Sources sources =
        new Cpi2Sources() {
          @Override
          public DataStream<RawRecord> samples(
              StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks) {
            return env.fromSource(
                    new DataGeneratorSource<>(
                        new FleetGenerator(hosts, tasks), n, TypeInformation.of(RawRecord.class)),
                    watermarks,
                    "Simulated fleet")
                .setParallelism(
                    1); // one ordered stream, as one Kafka partition per host set would be
          }

          @Override
          public DataStream<RawRecord> actions(StreamExecutionEnvironment env) {
            return env.fromData(
                TypeInformation.of(RawRecord.class),
                RawRecord.of("cpi2.actions", 0, 0, null, new byte[0]));
          }

          @Override
          public DataStream<RawRecord> specSeeds(StreamExecutionEnvironment env) {
            return env.fromData(
                TypeInformation.of(RawRecord.class),
                RawRecord.of("cpi2.specs", 0, 0, null, new byte[0]));
          }
        };
    Cpi2Sinks sinks =
        new Cpi2Sinks() {
          @Override
          public void incidents(DataStream<Incident> s) {
            s.sinkTo(new CountingSink<>());
          }
        };
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    env.setParallelism(2);
    new Cpi2Job(options, sources, sinks).build(env);
    StateWatch watch = new StateWatch(checkpoints);
    watch.start();
    long start = System.nanoTime();
    env.execute("cpi2-throughput");
    watch.interrupt();
    double s = (System.nanoTime() - start) / 1e9;
    try (var files = java.nio.file.Files.walk(checkpoints)) {
      files
          .sorted(java.util.Comparator.reverseOrder())
          .map(java.nio.file.Path::toFile)
          .forEach(java.io.File::delete);
    }
    System.out.printf(
        "pipeline throughput: %d samples (%d hosts x %d tasks x %d min) in %.1f s = %.0f samples/s end to end"
            + " (MiniCluster, parallelism 2, no Kafka); %d incidents%n",
        n, hosts, tasks, minutes, s, n / s, INCIDENTS.get());
    if (watch.gcs == 0 || watch.maxCheckpointBytes == 0) {
      // A fast machine ran the whole job before the first sample: say so rather than print 0 MB.
      System.out.printf(
          "state of %d live tasks: NOT measured: the job ran %.1f s, before its first checkpoint or full GC"
              + " (%d s); run more minutes (BENCH_MINUTES)%n",
          (long) hosts * tasks, s, StateWatch.FIRST_GC_S);
      System.exit(1);
    }
    System.out.printf(
        "state of %d live tasks: largest checkpoint %.1f MB on disk; live heap at most %.0f MB (after a full GC"
            + " at %d s and every %d s after while the job ran, %d taken: the whole MiniCluster JVM, Flink itself and"
            + " the heap state)%n",
        (long) hosts * tasks,
        watch.maxCheckpointBytes / 1e6,
        watch.maxLiveHeapBytes / 1e6,
        StateWatch.FIRST_GC_S,
        StateWatch.GC_EVERY_S,
        watch.gcs);
  }

  /**
   * Samples the checkpoint directory's size every second and, at {@link #FIRST_GC_S} s and every
   * {@link #GC_EVERY_S} s after, the heap in use right after a full GC ({@code System.gc()}: G1
   * collects the whole heap), which is what the JVM holds live: the pools' "collection usage" only
   * moves with the collections G1 happens to run, and mostly reported the young ones (0-29 MB). The
   * first comes early because a fast run of the default fleet is over in about 13 s.
   */
  static final class StateWatch extends Thread {
    static final int FIRST_GC_S = 5;
    static final int GC_EVERY_S = 15;
    private final java.nio.file.Path dir;
    volatile long maxCheckpointBytes;
    volatile long maxLiveHeapBytes;
    volatile int gcs;

    StateWatch(java.nio.file.Path dir) {
      this.dir = dir;
      setDaemon(true);
    }

    @Override
    public void run() {
      int seconds = 0;
      while (!isInterrupted()) {
        try (var files = java.nio.file.Files.walk(dir)) {
          long bytes =
              files
                  .filter(java.nio.file.Files::isRegularFile)
                  .mapToLong(f -> f.toFile().length())
                  .sum();
          maxCheckpointBytes = Math.max(maxCheckpointBytes, bytes);
        } catch (java.io.IOException | java.io.UncheckedIOException e) {
          // a checkpoint being deleted while we walk: try again next second
        }
        if (++seconds >= FIRST_GC_S && (seconds - FIRST_GC_S) % GC_EVERY_S == 0) {
          System.gc();
          gcs++;
          long live =
              java.lang.management.ManagementFactory.getMemoryMXBean()
                  .getHeapMemoryUsage()
                  .getUsed();
          maxLiveHeapBytes = Math.max(maxLiveHeapBytes, live);
        }
        try {
          Thread.sleep(1000);
        } catch (InterruptedException e) {
          return;
        }
      }
    }
  }

  /** Sample i: minute i / (hosts*tasks), host (i / tasks) % hosts, task i % tasks. */
  static final class FleetGenerator implements GeneratorFunction<Long, RawRecord> {
    private static final long serialVersionUID = 1L;
    private static final long T0 = 1_700_000_400L * 1_000_000L;
    private final int hosts;
    private final int tasks;
    private transient BinaryMessageEncoder<CpiSample> encoder;

    FleetGenerator(int hosts, int tasks) {
      this.hosts = hosts;
      this.tasks = tasks;
    }

    @Override
    public RawRecord map(Long i) {
      if (encoder == null) {
        // The project's wire format (Wire.encode's bytes), written by the generated custom coders.
        SpecificData model = new SpecificData();
        model.setCustomCoders(true);
        encoder = new BinaryMessageEncoder<>(model, CpiSample.getClassSchema());
      }
      long minute = i / ((long) hosts * tasks) + 1;
      int h = (int) ((i / tasks) % hosts);
      int k = (int) (i % tasks);
      boolean episode = h % 50 == 0 && minute >= 20 && minute % 2 == 1;
      TaskClass cls =
          k == 1
              ? TaskClass.BEST_EFFORT
              : k % 3 == 0 ? TaskClass.LATENCY_SENSITIVE : TaskClass.BATCH;
      double cpi = 1.0 + 0.05 * ((minute + h + k) % 3 - 1) + (episode && k == 0 ? 2.0 : 0);
      double cpu = k == 1 ? (episode ? 1.0 : 0.1) : 0.5 + 0.1 * (k % 4);
      // Fixtures.sample's fields, without its two regular expressions per sample (they cost the
      // generator more than the job spends decoding).
      String job = "job" + k;
      String id = Integer.toString(h);
      CpiSample s =
          CpiSample.newBuilder()
              .setHost("host" + h)
              .setTask(job + "/" + id)
              .setJob(job)
              .setTaskId(id)
              .setPlatform("p1")
              .setTaskClass(cls)
              .setIsProtected(false)
              .setWindowStartUs(T0 + minute * 60_000_000L)
              .setWindowUs(10_000_000L)
              .setCycles(1000)
              .setInstructions(1000)
              .setCounterSource(CounterSource.SIMULATED)
              .setTimeRunningRatio(1.0)
              .setCpuUsage(cpu)
              .setCpi(cpi)
              .build();
      ByteBuffer buf;
      try {
        buf = encoder.encode(s);
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      byte[] bytes = new byte[buf.remaining()];
      buf.get(bytes);
      return RawRecord.of("cpi2.samples", 0, i, null, bytes);
    }
  }

  /** Counts what it receives (this JVM only). */
  static final class CountingSink<T> implements Sink<T> {
    private static final long serialVersionUID = 1L;

    @Override
    public SinkWriter<T> createWriter(WriterInitContext context) {
      return new SinkWriter<>() {
        @Override
        public void write(T element, Context ctx) {
          INCIDENTS.incrementAndGet();
        }

        @Override
        public void flush(boolean endOfInput) {}

        @Override
        public void close() {}
      };
    }
  }
}
