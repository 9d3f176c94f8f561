package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.streaming.runtime.tasks.TestProcessingTimeService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The writer and its sender thread against a fake ClickHouse whose inserts can be held or made to
 * fail: batches go out by rows, bytes or age (the timer, with no further record), a busy sender
 * (two batches handed over) blocks write and flush but never the timer, a checkpoint hands the
 * batch over without waiting and its number waits for the insert, flush waits until everything
 * written is inserted, a failed insert fails the flush and every write after, close inserts
 * nothing.
 */
class ClickHouseSinkWriterTest {
  private static final RowEncoder<String> ROWS =
      (s, out) -> {
        out.putBinaryString(s);
        out.endRow();
      };

  private final FakeClickHouse clickHouse = new FakeClickHouse();
  private final ExecutorService other = Executors.newSingleThreadExecutor();
  private final List<ClickHouseSink.Writer<String>> writers = new ArrayList<>();

  @AfterEach
  void tearDown() throws Exception {
    clickHouse.open();
    for (ClickHouseSink.Writer<String> w : writers) {
      w.close();
    }
    other.shutdownNow();
  }

  /** Inserts are recorded as text; {@link #hold} makes them wait until {@link #open}. */
  static final class FakeClickHouse implements BatchSender.Insert {
    final List<String> batches = new ArrayList<>();
    final Semaphore started = new Semaphore(0);
    private volatile CountDownLatch gate = new CountDownLatch(0);
    volatile IOException failure;

    @Override
    public void insert(byte[] body, int length, int rows) throws IOException, InterruptedException {
      started.release();
      gate.await();
      if (failure != null) {
        throw failure;
      }
      // The test's rows are one RowBinary String each (length < 128: one byte).
      List<String> strings = new ArrayList<>();
      for (int p = 0; p < length; p += 1 + body[p]) {
        strings.add(new String(body, p + 1, body[p], StandardCharsets.UTF_8));
      }
      assertEquals(rows, strings.size());
      synchronized (batches) {
        batches.add(String.join(" ", strings));
        batches.notifyAll();
      }
    }

    void hold() {
      gate = new CountDownLatch(1);
    }

    void open() {
      gate.countDown();
    }

    List<String> batches() {
      synchronized (batches) {
        return List.copyOf(batches);
      }
    }

    /** The batches once there are {@code n}, or fails after 5 s. */
    List<String> await(int n) throws InterruptedException {
      long deadline = System.nanoTime() + 5_000_000_000L;
      synchronized (batches) {
        while (batches.size() < n && System.nanoTime() < deadline) {
          batches.wait(50);
        }
        assertEquals(n, batches.size(), "batches inserted: " + batches);
        return List.copyOf(batches);
      }
    }
  }

  private ClickHouseSink.Writer<String> writer(
      int rows, long bytes, long maxDelayMs, ProcessingTimeService time) {
    ClickHouseSink.Writer<String> w =
        new ClickHouseSink.Writer<>(
            ROWS,
            new ClickHouseSink.Batching(rows, bytes, maxDelayMs),
            clickHouse,
            "db.t",
            0,
            time);
    writers.add(w);
    return w;
  }

  private static void write(ClickHouseSink.Writer<String> w, String... rows) throws Exception {
    for (String r : rows) {
      w.write(r);
    }
  }

  /**
   * awaitInserted(number), on another thread, waits while inserts are held and returns once they go
   * on.
   */
  private void assertWaitsForTheHeldInserts(ClickHouseSink.Writer<String> w, long number)
      throws Exception {
    Future<?> inserted =
        other.submit(
            () -> {
              w.awaitInserted(number);
              return null;
            });
    assertStaysBlocked(inserted);
    clickHouse.open();
    inserted.get(5, TimeUnit.SECONDS);
  }

  /** A writer of two-row batches that has handed "a b" over, whose insert hangs until open(). */
  private ClickHouseSink.Writer<String> writerWithItsFirstInsertHeld() throws Exception {
    ClickHouseSink.Writer<String> w = writer(2, 1 << 20, 3_600_000, null);
    clickHouse.hold();
    write(w, "a", "b");
    assertTrue(clickHouse.started.tryAcquire(5, TimeUnit.SECONDS), "the insert of \"a b\" started");
    return w;
  }

  private static void assertStaysBlocked(Future<?> f) throws Exception {
    assertThrows(
        TimeoutException.class,
        () -> f.get(300, TimeUnit.MILLISECONDS),
        "should wait for the insert in flight");
  }

  @Test
  void batchesGoOutByRowsAndByBytes() throws Exception {
    ClickHouseSink.Writer<String> byRows = writer(2, 1 << 20, 3_600_000, null);
    write(byRows, "a", "b", "c");
    assertEquals(List.of("a b"), clickHouse.await(1));
    ClickHouseSink.Writer<String> byBytes = writer(1000, 10, 3_600_000, null);
    write(byBytes, "abcd", "efgh");
    assertEquals(List.of("a b", "abcd efgh"), clickHouse.await(2));
    byRows.flush();
    assertEquals(List.of("a b", "abcd efgh", "c"), clickHouse.batches());
  }

  @Test
  void theRowThatFillsABatchDoesNotDoubleItsArray() {
    RowBatch b = new RowBatch(64, 1 << 20);
    while (b.length() < 1 << 20) {
      ROWS.encode("a row of about forty bytes, quoted......", b);
    }
    assertTrue(b.array().length <= (1 << 20) + (1 << 16), "capacity " + b.array().length);
    for (int i = 0; i < 100_000; i++) { // past the limit (one huge row), it doubles again
      ROWS.encode("a row of about forty bytes, quoted......", b);
    }
    assertTrue(
        b.length() > 4 << 20 && b.array().length < 2 * b.length(), "capacity " + b.array().length);
  }

  @Test
  void aBusySenderBlocksWriteInsteadOfBufferingMore() throws Exception {
    ClickHouseSink.Writer<String> w = writerWithItsFirstInsertHeld();
    write(w, "c", "d"); // handed over; waits behind it
    write(w, "e"); // buffered
    Future<?> due =
        other.submit(
            () -> {
              write(w, "f"); // a third batch is due while two are handed over
              return null;
            });
    assertStaysBlocked(due);
    clickHouse.open();
    due.get(5, TimeUnit.SECONDS);
    w.flush();
    assertEquals(List.of("a b", "c d", "e f"), clickHouse.batches());
  }

  @Test
  void aCheckpointHandsTheBatchOverWithoutWaitingAndItsNumberWaitsForTheInsert() throws Exception {
    ClickHouseSink.Writer<String> w = writerWithItsFirstInsertHeld();
    write(w, "c");
    long number = assertTimeoutPreemptively(Duration.ofSeconds(5), w::checkpoint);
    write(w, "d"); // the task thread goes on
    assertWaitsForTheHeldInserts(w, number);
    assertEquals(List.of("a b", "c"), clickHouse.batches(), "\"d\" came after the checkpoint");
    assertEquals(number, w.checkpoint() - 1, "the next checkpoint hands over \"d\"");
  }

  @Test
  void aCheckpointWithNothingNewWaitsForTheBatchesBefore() throws Exception {
    ClickHouseSink.Writer<String> w = writer(1, 1 << 20, 3_600_000, null);
    assertEquals(0, w.checkpoint());
    w.awaitInserted(0); // nothing to wait for
    clickHouse.hold();
    write(w, "a");
    long number = w.checkpoint();
    assertEquals(1, number, "no new batch: the number of the one in flight");
    assertWaitsForTheHeldInserts(w, number);
  }

  @Test
  void flushReturnsOnlyOnceTheBatchInFlightAndTheBufferAreInserted() throws Exception {
    ClickHouseSink.Writer<String> w = writer(2, 1 << 20, 3_600_000, null);
    clickHouse.hold();
    write(w, "a", "b", "c");
    Future<?> flush =
        other.submit(
            () -> {
              w.flush();
              return null;
            });
    assertStaysBlocked(flush);
    assertEquals(List.of(), clickHouse.batches());
    clickHouse.open();
    flush.get(5, TimeUnit.SECONDS);
    assertEquals(List.of("a b", "c"), clickHouse.batches());
  }

  @Test
  void aFailedInsertFailsTheFlushAndEveryWriteAndCheckpointAfter() throws Exception {
    ClickHouseSink.Writer<String> w = writer(1, 1 << 20, 3_600_000, null);
    clickHouse.failure =
        new IOException("clickhouse: insert into db.t refused: HTTP 404: no such table");
    write(w, "a"); // handed over; its insert fails
    IOException e = assertThrows(IOException.class, w::flush);
    assertTrue(e.getMessage().contains("refused"), e.getMessage());
    assertThrows(IOException.class, () -> write(w, "b"));
    assertThrows(IOException.class, w::checkpoint);
    assertThrows(IOException.class, () -> w.awaitInserted(1));
    assertEquals(List.of(), clickHouse.batches());
  }

  @Test
  void aFailedInsertFailsTheNextFlush() throws Exception {
    ClickHouseSink.Writer<String> w = writer(100, 1 << 20, 3_600_000, null);
    clickHouse.failure =
        new IOException("clickhouse: insert into db.t failed after 6 attempts: connection refused");
    write(w, "a");
    IOException e = assertThrows(IOException.class, () -> w.flush());
    assertTrue(e.getMessage().contains("after 6 attempts"), e.getMessage());
  }

  @Test
  void theTimerInsertsAnOldBatchWithoutFurtherRecords() throws Exception {
    TestProcessingTimeService time = new TestProcessingTimeService();
    time.setCurrentTime(1_000);
    ClickHouseSink.Writer<String> w = writer(100, 1 << 20, 1_000, time);
    write(w, "a");
    time.setCurrentTime(1_500);
    write(w, "b");
    time.setCurrentTime(1_999);
    assertFalse(clickHouse.started.tryAcquire(200, TimeUnit.MILLISECONDS), "nothing is due yet");
    time.setCurrentTime(2_000); // "a" is 1 s old
    assertEquals(List.of("a b"), clickHouse.await(1));
    // The next batch has its own deadline, one max delay after its first row.
    time.setCurrentTime(2_400);
    write(w, "c");
    time.setCurrentTime(3_000);
    time.setCurrentTime(3_399);
    assertEquals(1, clickHouse.batches().size());
    time.setCurrentTime(3_400);
    assertEquals(List.of("a b", "c"), clickHouse.await(2));
  }

  @Test
  void aDueBatchFindingTheSenderBusyDoesNotBlockTheTimer() throws Exception {
    TestProcessingTimeService time = new TestProcessingTimeService();
    time.setCurrentTime(1_000);
    ClickHouseSink.Writer<String> w = writer(100, 1 << 20, 1_000, time);
    clickHouse.hold();
    write(w, "a");
    time.setCurrentTime(2_000); // "a" handed over; its insert hangs
    assertTrue(clickHouse.started.tryAcquire(5, TimeUnit.SECONDS));
    write(w, "x");
    w.checkpoint(); // "x" waits behind "a": the sender's queue is full
    write(w, "b");
    assertTimeoutPreemptively(
        Duration.ofSeconds(5), () -> time.setCurrentTime(3_000)); // due, sender busy
    write(w, "c"); // the task thread goes on filling the batch
    clickHouse.open();
    assertEquals(List.of("a", "x"), clickHouse.await(2));
    // The retry timers fire as the clock moves on; one that comes before the sender has marked
    // itself free tries again BUSY_RETRY_MS later, so the clock moves until "b c" goes.
    long now = 3_000;
    long deadline = System.nanoTime() + 5_000_000_000L;
    while (clickHouse.batches().size() < 3 && System.nanoTime() < deadline) {
      now += ClickHouseSink.Writer.BUSY_RETRY_MS;
      time.setCurrentTime(now);
      Thread.sleep(5);
    }
    assertEquals(List.of("a", "x", "b c"), clickHouse.await(3));
  }

  @Test
  void closeInsertsNothingAndStopsTheSenderThread() throws Exception {
    ClickHouseSink.Writer<String> w = writer(100, 1 << 20, 3_600_000, null);
    write(w, "a");
    assertTrue(senderAlive(), "the sender thread is named after the table");
    w.close();
    assertFalse(clickHouse.started.tryAcquire(200, TimeUnit.MILLISECONDS));
    assertFalse(senderAlive());
  }

  @Test
  void closeInterruptsAnInsertUnderWay() throws Exception {
    ClickHouseSink.Writer<String> w = writer(1, 1 << 20, 3_600_000, null);
    clickHouse.hold();
    write(w, "a");
    assertTrue(clickHouse.started.tryAcquire(5, TimeUnit.SECONDS));
    assertTimeoutPreemptively(Duration.ofSeconds(5), w::close);
    assertFalse(senderAlive());
    assertEquals(List.of(), clickHouse.batches());
  }

  private static boolean senderAlive() {
    return Thread.getAllStackTraces().keySet().stream()
        .anyMatch(t -> t.getName().equals("ClickHouse sender db.t #0") && t.isAlive());
  }
}
