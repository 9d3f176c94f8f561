package org.cpi2.flink.io;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.Serializable;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import org.apache.avro.generic.IndexedRecord;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Sink v2 into one ClickHouse table. Rows are encoded into a batch as they come and the batch
 * is inserted when it holds {@code batching.rows} rows or {@code batching.bytes} bytes, or when
 * its oldest row is {@code batching.maxDelayMs} old (a processing-time timer: also when no
 * further record comes). Inserts run on a background thread ({@link BatchSender}), one at a
 * time, while the next batch fills. Whatever is buffered is inserted before every checkpoint
 * completes ({@code flush} waits for it) and at the end of input: at-least-once. Replays after a
 * restore insert rows again; the tables (ReplacingMergeTree on each record's natural identity,
 * queried with FINAL) make that idempotent for what queries see.
 *
 * <p>ClickHouse's cost per row falls with the size of the insert and with RowBinary (18.16,
 * cpi2.samples with its materialized view, measured with ClickHouseSinkCost: JSONEachRow 8-15 µs
 * of server CPU per row in inserts of 5,000 rows, 3.8-6.9 µs in inserts of ~71,000; RowBinary
 * 0.7-2.7 µs in inserts of 100,000), so batches are large.
 *
 * <p>The rows are RowBinary ({@link RowBinaryRows}) when the format is {@link
 * InsertPlan#ROW_BINARY} and the table's columns allow it, else JSONEachRow ({@link JsonRows},
 * with a WARN line naming the column in the way). The writer reads the table's columns when it
 * is created, in the task: the job's main needs no ClickHouse, and a restarted task sees the
 * table as it is then.
 */
public class ClickHouseSink<T extends IndexedRecord> implements Sink<T> {
  private static final long serialVersionUID = 1L;
  private static final Logger LOG = LoggerFactory.getLogger(ClickHouseSink.class);

  /** When a batch is inserted: whichever of rows, bytes or the age of its oldest row comes first. */
  public record Batching(int rows, long bytes, long maxDelayMs) implements Serializable {
    public Batching {
      if (rows < 1 || bytes < 1 || bytes > MAX_BYTES || maxDelayMs < 1) {
        throw new IllegalArgumentException(
            "clickhouse batching: rows, bytes (at most 1 GiB) and max delay must be positive, got " + rows + ", " + bytes
                + ", " + maxDelayMs);
      }
    }

    static final long MAX_BYTES = 1L << 30;
  }

  private final String url;
  private final String database;
  private final String table;
  private final Batching batching;
  private final RowShape<T> shape;
  private final String format;

  /** {@code format}: InsertPlan.ROW_BINARY (JSONEachRow where the table does not allow it) or JSON_EACH_ROW. */
  public ClickHouseSink(String url, String database, String table, Batching batching, RowShape<T> shape, String format) {
    if (!format.equals(InsertPlan.ROW_BINARY) && !format.equals(InsertPlan.JSON_EACH_ROW)) {
      throw new IllegalArgumentException("clickhouse: format " + format + ": expected " + InsertPlan.ROW_BINARY + " or " + InsertPlan.JSON_EACH_ROW);
    }
    this.url = url;
    this.database = database;
    this.table = table;
    this.batching = batching;
    this.shape = shape;
    this.format = format;
  }

  /** A writer on the context's processing-time service; without a context (tests), no timer. */
  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) throws IOException {
    ClickHouseHttp http = new ClickHouseHttp(url, database, table, 6, 200);
    int subtask = context == null ? 0 : context.getTaskInfo().getIndexOfThisSubtask();
    InsertPlan<T> plan = plan(http);
    if (subtask == 0) {
      LOG.info("clickhouse: {} takes {} rows of {}", http.table(), plan.format(), shape.source());
    }
    return new Writer<>(
        plan.encoder(), batching, http.inserting(plan.statement(http.table()))::insert, http.table(), subtask,
        context == null ? null : context.getProcessingTimeService());
  }

  private InsertPlan<T> plan(ClickHouseHttp http) throws IOException {
    if (format.equals(InsertPlan.JSON_EACH_ROW)) {
      return InsertPlan.json(shape);
    }
    List<TableColumn> columns;
    try {
      columns = TableColumn.read(http, database, table);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("clickhouse: interrupted while reading the columns of " + http.table());
    }
    if (columns.isEmpty()) {
      throw new IOException("clickhouse: no table " + http.table() + " (it has no columns in system.columns)");
    }
    return InsertPlan.forTable(shape, http.table(), columns);
  }

  static final class Writer<T> implements SinkWriter<T> {
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
    Writer(RowEncoder<T> rows, Batching batching, BatchSender.Insert insert, String table, int subtask, ProcessingTimeService time) {
      this.rows = rows;
      this.batching = batching;
      this.time = time;
      this.batch = newBatch(batching);
      this.sender = new BatchSender(table, "ClickHouse sender " + table + " #" + subtask, insert, () -> newBatch(batching));
    }

    @Override
    public void write(T element, Context context) throws IOException, InterruptedException {
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

    /** Returns once everything written before is in ClickHouse (the at-least-once guarantee). */
    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
      if (batch.rows() > 0) {
        batch = sender.handOver(batch);
      }
      sender.awaitInserted();
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

    /** Rows not yet flushed belong to an unfinished checkpoint: they will be replayed, not inserted. */
    @Override
    public void close() throws Exception {
      closed = true;
      if (timer != null) {
        timer.cancel(false);
        timer = null;
      }
      sender.close();
    }
  }
}
