package org.cpi2.flink;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.cpi2.flink.kafka.RawRecord;

/**
 * The savepoint fixture of a release (issue 23): the detection job's whole graph at parallelism 2
 * takes in {@link Cpi2JobIT}'s first 30 minutes (specs learned, a spec period open, every task's
 * recent series in the correlator), then stops with a canonical savepoint. {@code make -C
 * flink-jobs savepoint-fixture NAME=<release>} writes it under {@code
 * src/test/resources/savepoints/NAME}; {@link SavepointFixtureIT} restores every fixture there with
 * the current build.
 */
public final class SavepointFixture {
  /** The fixture holds the samples of minutes 1 to this one. */
  static final int SAVEPOINT_MINUTE = 30;

  private SavepointFixture() {}

  /** {@code args[0]}: the directory the savepoint goes into (it must not exist). */
  public static void main(String[] args) throws Exception {
    Path target = Path.of(args[0]).toAbsolutePath();
    if (Files.exists(target)) {
      throw new IllegalArgumentException(target + " exists; a fixture is never overwritten");
    }
    ArrayList<byte[]> input = new ArrayList<>();
    ArrayList<Integer> partitions = new ArrayList<>();
    for (RawRecord r : GraphRun.published(Cpi2JobIT.samples(1, SAVEPOINT_MINUTE))) {
      input.add(r.value);
      partitions.add(r.partition);
    }
    byte[] idle = {0};
    GeneratorFunction<Long, RawRecord> gen =
        i ->
            i < input.size()
                ? RawRecord.of(
                    "cpi2.samples", partitions.get(i.intValue()), i, null, input.get(i.intValue()))
                : RawRecord.of("cpi2.samples", 0, i, null, idle);
    DataGeneratorSource<RawRecord> source =
        new DataGeneratorSource<>(
            gen, Long.MAX_VALUE, new AfterInput(input.size()), TypeInformation.of(RawRecord.class));
    GraphRun.Collected sinks = new GraphRun.Collected();
    Cpi2Options options = GraphRun.OPTIONS;
    StreamExecutionEnvironment env = Cpi2Job.environment(options);
    env.setParallelism(2);
    // Sources of its own uids: their state is left out when a test restores the savepoint.
    TypeInformation<RawRecord> raw = TypeInformation.of(RawRecord.class);
    Cpi2Sources sources =
        new Cpi2Sources() {
          @Override
          public DataStream<RawRecord> samples(
              StreamExecutionEnvironment e, WatermarkStrategy<RawRecord> watermarks) {
            return GraphRun.byPartition(
                e.fromSource(source, watermarks, "fixture samples")
                    .uid("fixture-samples")
                    .setParallelism(1));
          }

          @Override
          public DataStream<RawRecord> actions(StreamExecutionEnvironment e) {
            return e.fromData(List.of(RawRecord.of("cpi2.actions", 0, 0, null, new byte[0])), raw)
                .uid("fixture-actions");
          }

          @Override
          public DataStream<RawRecord> specSeeds(StreamExecutionEnvironment e) {
            return e.fromData(List.of(RawRecord.of("cpi2.specs", 0, 0, null, new byte[1])), raw)
                .uid("fixture-seeds");
          }
        };
    new Cpi2Job(options, sources, sinks).build(env);
    JobClient job = env.executeAsync("cpi2-savepoint-fixture");
    // The idle record follows the input: once it is a dead letter, all the input is in.
    long deadline = System.nanoTime() + Duration.ofMinutes(5).toNanos();
    while (sinks.result().deadLetters.stream()
        .noneMatch(d -> d.getPayload().equals(ByteBuffer.wrap(idle)))) {
      if (System.nanoTime() > deadline) {
        job.cancel().get();
        throw new IllegalStateException("the job did not take in the fixture's samples");
      }
      Thread.sleep(200);
    }
    String path =
        job.stopWithSavepoint(false, target.toUri().toString(), SavepointFormatType.CANONICAL)
            .get(2, TimeUnit.MINUTES);
    System.out.println("savepoint " + path + ", specs " + sinks.result().specs.size());
  }

  /** Free for the input's records, then one record a second: the job idles, never ends. */
  static final class AfterInput implements RateLimiterStrategy {
    private static final long serialVersionUID = 1L;
    private final int free;

    AfterInput(int free) {
      this.free = free;
    }

    @Override
    public RateLimiter createRateLimiter(int parallelism) {
      return new RateLimiter() {
        private long given;

        @Override
        public CompletionStage<Void> acquire(int permits) {
          given += permits;
          if (given <= free) {
            return CompletableFuture.completedFuture(null);
          }
          return CompletableFuture.runAsync(
              () -> {}, CompletableFuture.delayedExecutor(1, TimeUnit.SECONDS));
        }
      };
    }
  }
}
