package org.cpi2.flink.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.cpi2.flink.Cpi2Job;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Cpi2Sinks;
import org.cpi2.flink.Cpi2Sources;
import org.cpi2.flink.kafka.RawRecord;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.Incident;
import org.cpi2.schema.TaskClass;
import org.cpi2.wire.Wire;

/**
 * Replays a scenario's samples through the whole job in a local MiniCluster, without Kafka and
 * without enforcers (so no cap ever changes what follows: every analysis sees the antagonism
 * uncapped), and writes every incident as a JSON line. For working on detection: the simulator's
 * samples (cpi2-fleetsim --stdout) in, the job's decisions out, in about a minute for fleet300's
 * ten simulated hours. cpi2.e2e.replay runs it and scores the incidents against the simulator's
 * ground truth.
 *
 * <p>Usage: ScenarioReplay SAMPLES.jsonl INCIDENTS.jsonl [--option value ...] (job options).
 */
public final class ScenarioReplay {
  private ScenarioReplay() {}

  public static void main(String[] args) throws Exception {
    Path samples = Path.of(args[0]);
    Path incidents = Path.of(args[1]);
    // State outgrows in-memory checkpoints: checkpoint to a temporary folder, deleted at the end.
    Path checkpoints = Files.createTempDirectory("cpi2-replay-checkpoints");
    Cpi2Options options =
        Cpi2Options.fromArgs(Arrays.copyOfRange(args, 2, args.length))
            .with(Cpi2Options.CHECKPOINT_DIR, checkpoints.toUri().toString());
    long n;
    try (var lines = Files.lines(samples)) {
      n = lines.count();
    }
    Cpi2Sources sources =
        new Cpi2Sources() {
          @Override
          public DataStream<RawRecord> samples(
              StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks) {
            return env.fromSource(
                    new DataGeneratorSource<>(
                        new Lines(samples.toString()), n, TypeInformation.of(RawRecord.class)),
                    watermarks,
                    "Scenario samples")
                .setParallelism(1); // in file order, as one Kafka partition would deliver them
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
            s.sinkTo(new JsonLinesSink(incidents.toString())).setParallelism(1);
          }
        };
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    env.setParallelism(1);
    new Cpi2Job(options, sources, sinks).build(env);
    long start = System.nanoTime();
    try {
      env.execute("cpi2-scenario-replay");
    } finally {
      try (var files = Files.walk(checkpoints)) {
        files
            .sorted(java.util.Comparator.reverseOrder())
            .map(Path::toFile)
            .forEach(java.io.File::delete);
      }
    }
    System.out.printf(
        "replayed %d samples in %.1f s; incidents in %s%n",
        n, (System.nanoTime() - start) / 1e9, incidents);
  }

  /** Line i of the file, a sample as cpi2-fleetsim --stdout prints it, as the wire's bytes. */
  static final class Lines implements GeneratorFunction<Long, RawRecord> {
    private static final long serialVersionUID = 1L;
    private final String path;
    private transient BufferedReader in;
    private transient ObjectMapper json;
    private transient Wire<CpiSample> wire;

    Lines(String path) {
      this.path = path;
    }

    @Override
    public void open(SourceReaderContext ctx) throws IOException {
      in = Files.newBufferedReader(Path.of(path), StandardCharsets.UTF_8);
      json = new ObjectMapper();
      wire = Wire.of(CpiSample.class);
    }

    @Override
    public void close() throws IOException {
      in.close();
    }

    @Override
    public RawRecord map(Long i) throws IOException {
      JsonNode j = json.readTree(in.readLine());
      CpiSample s =
          CpiSample.newBuilder()
              .setHost(j.get("host").asText())
              .setTask(j.get("task").asText())
              .setJob(j.get("job").asText())
              .setTaskId(j.get("task_id").asText())
              .setPlatform(j.get("platform").asText())
              .setTaskClass(TaskClass.valueOf(j.get("task_class").asText()))
              .setIsProtected(j.get("is_protected").asBoolean())
              .setWindowStartUs(j.get("window_start_us").asLong())
              .setWindowUs(j.get("window_us").asLong())
              .setCycles(j.get("cycles").asLong())
              .setInstructions(j.get("instructions").asLong())
              .setCounterSource(CounterSource.valueOf(j.get("counter_source").asText()))
              .setTimeRunningRatio(j.get("time_running_ratio").asDouble())
              .setCpuUsage(j.get("cpu_usage").asDouble())
              .setCpi(j.get("cpi").isNull() ? null : j.get("cpi").asDouble())
              .build();
      return RawRecord.of(
          "cpi2.samples", 0, i, s.getHost().getBytes(StandardCharsets.UTF_8), wire.encode(s));
    }
  }

  /**
   * Every incident as one JSON line (Avro's own rendering, GenericData#toString: enums as their
   * symbol, unions unwrapped, suspects nested), into one file.
   */
  static final class JsonLinesSink implements Sink<Incident> {
    private static final long serialVersionUID = 1L;
    private final String path;

    JsonLinesSink(String path) {
      this.path = path;
    }

    @Override
    public SinkWriter<Incident> createWriter(WriterInitContext context) {
      PrintWriter out;
      try {
        out = new PrintWriter(Files.newBufferedWriter(Path.of(path), StandardCharsets.UTF_8));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      return new SinkWriter<>() {
        @Override
        public void write(Incident i, Context ctx) {
          out.println(i);
        }

        @Override
        public void flush(boolean endOfInput) {
          out.flush();
        }

        @Override
        public void close() {
          out.close();
        }
      };
    }
  }
}
