package org.cpi2.flink.io;

import java.io.IOException;
import java.util.List;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.util.function.SerializableFunction;

/**
 * A Sink v2 into one ClickHouse table. Rows are buffered and inserted in batches of
 * {@code batchRows}, and whatever is buffered is inserted before every checkpoint completes
 * ({@code flush}) and at the end of input: at-least-once. Replays after a restore insert rows
 * again; the tables (ReplacingMergeTree on each record's natural identity, queried with FINAL)
 * make that idempotent for what queries see.
 */
public class ClickHouseSink<T> implements Sink<T> {
  private static final long serialVersionUID = 1L;

  private final String url;
  private final String database;
  private final String table;
  private final int batchRows;
  private final long maxDelayMs;
  private final SerializableFunction<T, List<String>> rows;

  public ClickHouseSink(
      String url, String database, String table, int batchRows, long maxDelayMs, SerializableFunction<T, List<String>> rows) {
    this.url = url;
    this.database = database;
    this.table = table;
    this.batchRows = batchRows;
    this.maxDelayMs = maxDelayMs;
    this.rows = rows;
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) {
    return new Writer<>(new ClickHouseHttp(url, database, table, 6, 200), batchRows, maxDelayMs, rows);
  }

  static final class Writer<T> implements SinkWriter<T> {
    private final ClickHouseHttp http;
    private final int batchRows;
    private final long maxDelayMs;
    private final SerializableFunction<T, List<String>> rows;
    private final StringBuilder buffer = new StringBuilder();
    private int buffered;
    private long firstBufferedAt;

    Writer(ClickHouseHttp http, int batchRows, long maxDelayMs, SerializableFunction<T, List<String>> rows) {
      this.http = http;
      this.batchRows = batchRows;
      this.maxDelayMs = maxDelayMs;
      this.rows = rows;
    }

    @Override
    public void write(T element, Context context) throws IOException, InterruptedException {
      for (String row : rows.apply(element)) {
        if (buffered == 0) {
          firstBufferedAt = System.currentTimeMillis();
        }
        buffer.append(row).append('\n');
        buffered++;
      }
      if (buffered >= batchRows || (buffered > 0 && System.currentTimeMillis() - firstBufferedAt >= maxDelayMs)) {
        send();
      }
    }

    @Override
    public void flush(boolean endOfInput) throws IOException, InterruptedException {
      send();
    }

    private void send() throws IOException, InterruptedException {
      if (buffered == 0) {
        return;
      }
      http.insert(buffer.toString(), buffered);
      buffer.setLength(0);
      buffered = 0;
    }

    @Override
    public void close() throws Exception {
      // Rows not yet flushed belong to an unfinished checkpoint: they will be replayed.
    }
  }
}
