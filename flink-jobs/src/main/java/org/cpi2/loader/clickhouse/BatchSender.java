package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sink writer's background thread that inserts its batches, in the order they were handed over.
 * The writer hands a full batch over and goes on filling another, so the task thread (for samples,
 * the Kafka source's own) does not wait while ClickHouse parses a batch.
 *
 * <p>At most {@link #QUEUE} batches are handed over and not yet inserted: one being inserted and
 * one waiting. The second place is for the batch a checkpoint hands over: the checkpoint does not
 * wait for an insert already under way, and the task thread goes on while both are inserted. A
 * writer thus holds three batches of memory at most. A batch due while both places are taken waits
 * (back-pressure).
 *
 * <p>Every hand-over gets a number, one more than the last; {@link #awaitInserted(long)} waits
 * until the batch of a number and all before it are inserted, from any thread. An insert that
 * failed (after ClickHouseTable's retries) stops the thread and is thrown, wrapped, by every later
 * call: the job fails and restores from its last checkpoint rather than lose rows.
 */
final class BatchSender implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BatchSender.class);

  /** Batches handed over and not yet inserted, at most. */
  static final int QUEUE = 2;

  /** Inserts one batch: ClickHouseTable#insert; tests give fakes. */
  @FunctionalInterface
  interface Insert extends AutoCloseable {
    void insert(byte[] body, int length, int rows) throws IOException, InterruptedException;

    /** Releases the connection, once the sender thread has stopped. */
    @Override
    default void close() {}
  }

  private final Insert insert;
  private final Supplier<RowBatch> newBatch;
  private final String table;
  private final Thread thread;
  private final Object lock = new Object();

  /** Handed over, not inserted yet, oldest first; guarded by lock. */
  private final ArrayDeque<RowBatch> queue = new ArrayDeque<>(QUEUE);

  /** Inserted and emptied, for the writer to fill next; guarded by lock. */
  private final ArrayDeque<RowBatch> spares = new ArrayDeque<>(QUEUE);

  /** Batches handed over and batches inserted since the start; guarded by lock. */
  private long handedOver;

  private long inserted;
  private volatile IOException failure;
  private boolean closed;

  /** {@code newBatch}: makes the batches beyond the first, on hand-over, until spares come back. */
  BatchSender(String table, String threadName, Insert insert, Supplier<RowBatch> newBatch) {
    this.table = table;
    this.insert = insert;
    this.newBatch = newBatch;
    this.thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Hands {@code full} over for insertion, first waiting while {@link #QUEUE} batches are; returns
   * an empty batch to fill next.
   */
  RowBatch handOver(RowBatch full) throws IOException, InterruptedException {
    synchronized (lock) {
      while (queue.size() >= QUEUE && failure == null && !closed) {
        lock.wait();
      }
      return accept(full);
    }
  }

  /** As {@link #handOver} but never waits: null (and {@code full} kept) while the queue is full. */
  RowBatch tryHandOver(RowBatch full) throws IOException {
    synchronized (lock) {
      if (queue.size() >= QUEUE && failure == null && !closed) {
        return null;
      }
      return accept(full);
    }
  }

  private RowBatch accept(RowBatch full) throws IOException {
    throwIfFailed();
    if (closed) {
      throw new IOException("clickhouse: the sender of " + table + " is closed");
    }
    queue.addLast(full);
    handedOver++;
    lock.notifyAll();
    RowBatch next = spares.pollFirst();
    return next != null ? next : newBatch.get();
  }

  /** The number of the last batch handed over (0: none yet), for {@link #awaitInserted(long)}. */
  long lastHandedOver() {
    synchronized (lock) {
      return handedOver;
    }
  }

  /**
   * Returns once the batch numbered {@code number} and every one before it are inserted; throws if
   * an insert failed or the sender was closed first. Any thread may wait.
   */
  void awaitInserted(long number) throws IOException, InterruptedException {
    synchronized (lock) {
      while (inserted < number && failure == null && !closed) {
        lock.wait();
      }
      if (inserted < number && failure == null) {
        throw new IOException(
            "clickhouse: the sender of "
                + table
                + " was closed before batch "
                + number
                + " was inserted");
      }
    }
    throwIfFailed();
  }

  /** Throws, wrapped (so the trace shows where it surfaced), the failure of an earlier insert. */
  void throwIfFailed() throws IOException {
    IOException f = failure;
    if (f != null) {
      throw new IOException(f.getMessage(), f);
    }
  }

  private void run() {
    while (true) {
      RowBatch batch;
      synchronized (lock) {
        while (queue.isEmpty() && !closed) {
          try {
            lock.wait();
          } catch (InterruptedException e) {
            if (closed) {
              return;
            }
          }
        }
        if (closed) {
          return;
        }
        batch = queue.peekFirst();
      }
      IOException error = null;
      try {
        insert.insert(batch.array(), batch.length(), batch.rows());
      } catch (InterruptedException e) {
        if (isClosed()) {
          return;
        }
        error =
            new IOException(
                "clickhouse: insert of " + batch.rows() + " rows into " + table + " interrupted",
                e);
      } catch (IOException e) {
        error = e;
      } catch (RuntimeException | Error e) {
        error =
            new IOException(
                "clickhouse: insert of " + batch.rows() + " rows into " + table + " failed: " + e,
                e);
      }
      synchronized (lock) {
        if (error != null) {
          failure = error;
        } else {
          queue.pollFirst();
          inserted++;
          batch.clear();
          spares.addLast(batch);
        }
        lock.notifyAll();
      }
      if (error != null) {
        LOG.error(
            "clickhouse: {} sender stops; the next write, flush or checkpoint fails the job",
            table,
            error);
        return;
      }
    }
  }

  private boolean isClosed() {
    synchronized (lock) {
      return closed;
    }
  }

  /**
   * Stops the thread without inserting what it holds: rows not flushed belong to a checkpoint that
   * did not complete and will be replayed. An insert under way is interrupted.
   */
  @Override
  public void close() throws InterruptedException {
    synchronized (lock) {
      closed = true;
      lock.notifyAll();
    }
    thread.interrupt();
    thread.join(10_000);
    if (thread.isAlive()) {
      LOG.warn("clickhouse: {} sender did not stop within 10 s", table);
    }
    insert.close();
  }
}
