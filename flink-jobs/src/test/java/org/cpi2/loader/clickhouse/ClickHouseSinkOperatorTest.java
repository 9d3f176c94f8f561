package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.streaming.util.OneInputStreamOperatorTestHarness;
import org.apache.flink.util.concurrent.FutureUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The sink operator in Flink's operator harness, against the fake ClickHouse of {@link
 * ClickHouseSinkWriterTest}: a checkpoint's synchronous part returns while an insert hangs and the
 * task goes on, its asynchronous part completes only once the rows written before are inserted and
 * fails when their insert failed, and the end of input inserts everything.
 */
class ClickHouseSinkOperatorTest {
  private static final RowEncoder<String> ROWS =
      (s, out) -> {
        out.putBinaryString(s);
        out.endRow();
      };

  private final ClickHouseSinkWriterTest.FakeClickHouse clickHouse =
      new ClickHouseSinkWriterTest.FakeClickHouse();
  private final ExecutorService asyncPart = Executors.newSingleThreadExecutor();
  private OneInputStreamOperatorTestHarness<String, Void> harness;

  /** Batches of two rows, no max delay within the test. */
  @BeforeEach
  void open() throws Exception {
    ClickHouseSink.Batching batching = new ClickHouseSink.Batching(2, 1 << 20, 3_600_000);
    harness =
        new OneInputStreamOperatorTestHarness<>(
            new ClickHouseSinkOperator<>(
                (subtask, time) ->
                    new ClickHouseSink.Writer<>(
                        ROWS, batching, clickHouse, "db.t", subtask, time)));
    harness.open();
  }

  @AfterEach
  void tearDown() throws Exception {
    clickHouse.open();
    if (harness != null) {
      harness.close();
    }
    asyncPart.shutdownNow();
  }

  private void write(String... rows) throws Exception {
    for (String r : rows) {
      harness.processElement(new StreamRecord<>(r));
    }
  }

  /** The synchronous part, in the task thread, as Flink calls it at the barrier. */
  private OperatorSnapshotFutures checkpoint(long id) throws Exception {
    return harness
        .getOperator()
        .snapshotState(
            id,
            id,
            CheckpointOptions.forCheckpointWithDefaultLocation(),
            new MemCheckpointStreamFactory(1 << 20));
  }

  /** The asynchronous part, run on another thread as Flink's AsyncCheckpointRunnable does. */
  private Future<?> asyncPart(OperatorSnapshotFutures snapshot) {
    return asyncPart.submit(
        () -> FutureUtils.runIfNotDoneAndGet(snapshot.getOperatorStateManagedFuture()));
  }

  @Test
  void theCheckpointWaitsForTheInsertInItsAsynchronousPartWhileTheTaskGoesOn() throws Exception {
    clickHouse.hold();
    write("a", "b"); // handed over; its insert hangs
    assertTrue(clickHouse.started.tryAcquire(5, TimeUnit.SECONDS));
    write("c");
    OperatorSnapshotFutures snapshot =
        assertTimeoutPreemptively(Duration.ofSeconds(5), () -> checkpoint(1));
    write("d"); // after the barrier: the task reads on
    Future<?> acknowledged = asyncPart(snapshot);
    assertThrows(
        TimeoutException.class,
        () -> acknowledged.get(300, TimeUnit.MILLISECONDS),
        "rows before the barrier are not in yet");
    clickHouse.open();
    acknowledged.get(5, TimeUnit.SECONDS);
    assertEquals(List.of("a b", "c"), clickHouse.batches());
  }

  @Test
  void aFailedInsertFailsTheCheckpointAndTheNextRecord() throws Exception {
    clickHouse.failure =
        new IOException("clickhouse: insert into db.t failed after 6 attempts: connection refused");
    write("a");
    Future<?> acknowledged = asyncPart(checkpoint(1));
    ExecutionException e =
        assertThrows(ExecutionException.class, () -> acknowledged.get(5, TimeUnit.SECONDS));
    assertTrue(e.getCause().getMessage().contains("after 6 attempts"), e.getCause().toString());
    assertThrows(IOException.class, () -> write("b"));
    assertThrows(IOException.class, harness::close, "the end of input fails too");
    harness = null;
    assertEquals(List.of(), clickHouse.batches());
  }

  @Test
  void theEndOfInputInsertsEverything() throws Exception {
    write("a", "b", "c");
    harness.getOperator().finish();
    assertEquals(List.of("a b", "c"), clickHouse.batches());
  }

  @Test
  void aCheckpointWithNothingWrittenCompletesAtOnce() throws Exception {
    Future<?> acknowledged = asyncPart(checkpoint(1));
    acknowledged.get(5, TimeUnit.SECONDS);
    assertFalse(clickHouse.started.tryAcquire(100, TimeUnit.MILLISECONDS), "no empty insert");
  }
}
