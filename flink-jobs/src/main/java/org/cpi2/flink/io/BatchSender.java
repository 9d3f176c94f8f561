package org.cpi2.flink.io;

import java.io.IOException;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One sink writer's background thread that inserts its batches. The writer hands a full batch
 * over and goes on filling another, so the task thread (for samples, the Kafka source's own)
 * does not wait while ClickHouse parses a batch. At most one batch is in flight: a writer holds
 * two batches of memory at most, and when a batch is due while the previous one is still being
 * inserted the writer waits (back-pressure). An insert that failed (after ClickHouseHttp's
 * retries) stops the thread and is thrown, wrapped, by every later call: the job fails and
 * restores from its last checkpoint rather than lose rows.
 */
final class BatchSender implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(BatchSender.class);

  /** Inserts one batch: ClickHouseHttp#insert; tests give fakes. */
  @FunctionalInterface
  interface Insert {
    void insert(byte[] body, int length, int rows) throws IOException, InterruptedException;
  }

  private final Insert insert;
  private final Supplier<RowBatch> newBatch;
  private final String table;
  private final Thread thread;
  private final Object lock = new Object();
  /** Handed over, not inserted yet; guarded by lock. */
  private RowBatch inFlight;
  /** Inserted and emptied, for the writer to fill next; guarded by lock. */
  private RowBatch spare;
  private volatile IOException failure;
  private boolean closed;

  /** {@code newBatch}: the second batch, made on the first hand-over. */
  BatchSender(String table, String threadName, Insert insert, Supplier<RowBatch> newBatch) {
    this.table = table;
    this.insert = insert;
    this.newBatch = newBatch;
    this.thread = new Thread(this::run, threadName);
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Hands {@code full} over for insertion, first waiting while the previous batch is still being
   * inserted; returns an empty batch to fill next.
   */
  RowBatch handOver(RowBatch full) throws IOException, InterruptedException {
    synchronized (lock) {
      while (inFlight != null && failure == null && !closed) {
        lock.wait();
      }
      return accept(full);
    }
  }

  /** As {@link #handOver} but never waits: null (and {@code full} kept) while a batch is in flight. */
  RowBatch tryHandOver(RowBatch full) throws IOException {
    synchronized (lock) {
      if (inFlight != null && failure == null && !closed) {
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
    inFlight = full;
    lock.notifyAll();
    RowBatch next = spare != null ? spare : newBatch.get();
    spare = null;
    return next;
  }

  /** Returns once every batch handed over is inserted; throws if an insert failed. */
  void awaitInserted() throws IOException, InterruptedException {
    synchronized (lock) {
      while (inFlight != null && failure == null && !closed) {
        lock.wait();
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
        while (inFlight == null && !closed) {
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
        batch = inFlight;
      }
      IOException error = null;
      try {
        insert.insert(batch.array(), batch.length(), batch.rows());
      } catch (InterruptedException e) {
        if (isClosed()) {
          return;
        }
        error = new IOException("clickhouse: insert of " + batch.rows() + " rows into " + table + " interrupted", e);
      } catch (IOException e) {
        error = e;
      } catch (RuntimeException | Error e) {
        error = new IOException("clickhouse: insert of " + batch.rows() + " rows into " + table + " failed: " + e, e);
      }
      synchronized (lock) {
        if (error != null) {
          failure = error;
        } else {
          batch.clear();
          spare = batch;
        }
        inFlight = null;
        lock.notifyAll();
      }
      if (error != null) {
        LOG.error("clickhouse: {} sender stops; the next write or flush fails the job", table, error);
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
   * Stops the thread without inserting what it holds: rows not flushed belong to a checkpoint
   * that did not complete and will be replayed. An insert under way is interrupted.
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
  }
}
