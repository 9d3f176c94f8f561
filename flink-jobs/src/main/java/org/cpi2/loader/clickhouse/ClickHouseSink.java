package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.Serializable;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.apache.avro.generic.IndexedRecord;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.common.typeinfo.BasicTypeInfo;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a stream into one ClickHouse table ({@link #attachTo}: the operator is a {@link
 * ClickHouseSinkOperator}). Rows are encoded into a batch as they come and the batch is inserted
 * when it holds {@code batching.rows} rows or {@code batching.bytes} bytes, or when its oldest row
 * is {@code batching.maxDelayMs} old (a processing-time timer: also when no further record comes).
 * Inserts run on a background thread ({@link BatchSender}), in order, while the next batch fills.
 *
 * <p>At-least-once: a checkpoint hands the batch filling over and completes only once every row
 * written before its barrier is inserted. The wait is in the checkpoint's asynchronous part, so the
 * task thread (for samples, the Kafka source's) goes on reading meanwhile. At the end of input,
 * everything is inserted before the operator finishes. Replays after a restore insert rows again;
 * the tables (ReplacingMergeTree on each record's natural identity, queried with FINAL) make that
 * idempotent for what queries see.
 *
 * <p>ClickHouse's cost per row falls with the size of the insert and with RowBinary (make -C
 * flink-jobs bench-clickhouse measures it), so batches are large.
 *
 * <p>The rows are RowBinary ({@link RowBinaryRows}), encoded for the table's columns: the writer
 * reads them when it is created, in the task, so the job's main needs no ClickHouse and a restarted
 * task sees the table as it is then. A table the rows do not fit fails the writer, naming the
 * column in the way.
 */
public class ClickHouseSink<T extends IndexedRecord> implements Serializable {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ClickHouseSink.class);

  /**
   * When a batch is inserted: whichever of rows, bytes or the age of its oldest row comes first.
   */
  public record Batching(int rows, long bytes, long maxDelayMs) implements Serializable {
    public Batching {
      if (rows < 1 || bytes < 1 || bytes > MAX_BYTES || maxDelayMs < 1) {
        throw new IllegalArgumentException(
            "clickhouse batching: rows, bytes (at most 1 GiB) and max delay must be positive, got "
                + rows
                + ", "
                + bytes
                + ", "
                + maxDelayMs);
      }
    }

    static final long MAX_BYTES = 1L << 30;
  }

  private final ClickHouseServer server;
  private final String database;
  private final String table;
  private final Batching batching;
  private final RowShape<T> shape;

  /** A table of a server signed in as user {@code default} without a password. */
  public ClickHouseSink(
      String url, String database, String table, Batching batching, RowShape<T> shape) {
    this(ClickHouseServer.anonymous(url), database, table, batching, shape);
  }

  public ClickHouseSink(
      ClickHouseServer server,
      String database,
      String table,
      Batching batching,
      RowShape<T> shape) {
    this.server = server;
    this.database = database;
    this.table = table;
    this.batching = batching;
    this.shape = shape;
  }

  /**
   * Adds the operator that writes {@code stream} into the table: the caller names it and gives it
   * its uid. Chained to the stream's operator where Flink can (no serialization between).
   */
  public SingleOutputStreamOperator<Void> attachTo(DataStream<T> stream) {
    return stream.transform(
        "ClickHouse " + database + "." + table,
        BasicTypeInfo.VOID_TYPE_INFO,
        new ClickHouseSinkOperator<>(this::createWriter));
  }

  /**
   * A writer for subtask {@code subtask} whose max-delay timer runs on {@code time}; without one
   * (tests), the age of the oldest row is checked on write only. Reads the table's columns.
   */
  public Writer<T> createWriter(int subtask, ProcessingTimeService time) throws IOException {
    ClickHouseTable client = new ClickHouseTable(server, database, table, 6, 200);
    try {
      InsertPlan<T> plan = plan(client);
      if (subtask == 0) {
        LOG.info("clickhouse: {} takes RowBinary rows of {}", client.name(), shape.source());
      }
      BatchSender.Insert insert =
          new BatchSender.Insert() {
            @Override
            public void insert(byte[] body, int length, int rows)
                throws IOException, InterruptedException {
              client.insert(plan.columns(), body, length, rows);
            }

            @Override
            public void close() {
              client.close();
            }
          };
      return new Writer<>(plan.encoder(), batching, insert, client.name(), subtask, time);
    } catch (IOException | RuntimeException e) {
      client.close();
      throw e;
    }
  }

  private InsertPlan<T> plan(ClickHouseTable client) throws IOException {
    List<TableColumn> columns;
    try {
      columns = client.columns();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException(
          "clickhouse: interrupted while reading the columns of " + client.name());
    }
    if (columns.isEmpty()) {
      throw new IOException(
          "clickhouse: no table " + client.name() + " (it has no columns in system.columns)");
    }
    return InsertPlan.forTable(shape, client.name(), columns);
  }

  /**
   * Encodes rows into batches and hands them to its {@link BatchSender}; used by one task thread.
   */
  public static final class Writer<T> implements AutoCloseable {
    /** How soon the timer tries again when a due batch found the sender busy. */
    static final long BUSY_RETRY_MS = 10;

    private final RowEncoder<T> rows;
    private final Batching batching;
    private final BatchSender sender;

    /** Null: the age of the oldest row is checked on write only. */
    private final ProcessingTimeService time;

    private RowBatch batch;
    private long firstRowAt;
    private ScheduledFuture<?> timer;
    private boolean closed;

    /** {@code table}: db.table, in messages and in the name of the sender thread. */
    Writer(
        RowEncoder<T> rows,
        Batching batching,
        BatchSender.Insert insert,
        String table,
        int subtask,
        ProcessingTimeService time) {
      this.rows = rows;
      this.batching = batching;
      this.time = time;
      this.batch = newBatch(batching);
      this.sender =
          new BatchSender(
              table,
              "ClickHouse sender " + table + " #" + subtask,
              insert,
              () -> newBatch(batching));
    }

    public void write(T element) throws IOException, InterruptedException {
      sender.throwIfFailed();
      int length = batch.length();
      int before = batch.rows();
      try {
        rows.encode(element, batch);
      } catch (RuntimeException e) {
        batch.truncate(length, before);
        throw e;
      }
      if (batch.rows() == before) {
        return;
      }
      if (before == 0) {
        firstRowAt = now();
        arm(firstRowAt + batching.maxDelayMs());
      }
      if (batch.rows() >= batching.rows()
          || batch.length() >= batching.bytes()
          || (time == null && now() - firstRowAt >= batching.maxDelayMs())) {
        batch = sender.handOver(batch);
      }
    }

    /** Returns once everything written before is in ClickHouse (at the end of input, in tests). */
    public void flush() throws IOException, InterruptedException {
      sender.awaitInserted(checkpoint());
    }

    /**
     * Hands the batch filling over (waiting only while the sender's queue is full) and returns the
     * number to give {@link #awaitInserted} to wait until every row written before is in
     * ClickHouse.
     */
    public long checkpoint() throws IOException, InterruptedException {
      sender.throwIfFailed();
      if (batch.rows() > 0) {
        batch = sender.handOver(batch);
      }
      return sender.lastHandedOver();
    }

    /**
     * Waits until the batches up to {@code number} ({@link #checkpoint}) are inserted; any thread.
     */
    public void awaitInserted(long number) throws IOException, InterruptedException {
      sender.awaitInserted(number);
    }

    private static RowBatch newBatch(Batching batching) {
      return new RowBatch((int) Math.min(1 << 16, batching.bytes()), batching.bytes());
    }

    private long now() {
      return time != null ? time.getCurrentProcessingTime() : System.currentTimeMillis();
    }

    private void arm(long at) {
      if (time != null && timer == null && !closed) {
        timer = time.registerTimer(at, this::onTimer);
      }
    }

    /** Runs in the task's mailbox thread, like write and flush. */
    private void onTimer(long at) throws IOException {
      timer = null;
      if (closed) {
        return;
      }
      sender.throwIfFailed();
      if (batch.rows() == 0) {
        return;
      }
      long due = firstRowAt + batching.maxDelayMs();
      if (at < due) {
        arm(due); // the batch it was set for went out by size; this one is younger
        return;
      }
      RowBatch next = sender.tryHandOver(batch);
      if (next == null) {
        arm(time.getCurrentProcessingTime() + BUSY_RETRY_MS); // rather than block the task thread
      } else {
        batch = next;
      }
    }

    /**
     * Rows not yet flushed belong to an unfinished checkpoint: they will be replayed, not inserted.
     */
    @Override
    public void close() throws InterruptedException {
      closed = true;
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
      sender.close();
    }
  }
}
