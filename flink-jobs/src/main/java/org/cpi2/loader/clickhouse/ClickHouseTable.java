package org.cpi2.loader.clickhouse;

import com.clickhouse.client.api.Client;
import com.clickhouse.client.api.ServerException;
import com.clickhouse.client.api.insert.InsertSettings;
import com.clickhouse.client.api.query.QueryResponse;
import com.clickhouse.data.ClickHouseFormat;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One table of a ClickHouse server through ClickHouse's Java client (client-v2, over HTTP): its
 * columns, and RowBinary inserts of whole batches, with retries and exponential backoff. Works with
 * ClickHouse 18.16 and current servers: requests are uncompressed, and the one query reads raw
 * TabSeparated text (the client's typed results use a format 18.16 does not have). A server that
 * refuses a request (HTTP 4xx other than TOO_MANY_*) fails it at once: the rows, the statement or
 * the table are wrong and retrying will not help.
 *
 * <p>The URL may list several servers, comma separated: the nodes of a ClickHouse cluster, any of
 * which takes an insert into a Distributed table for the whole cluster. Requests go to the first; a
 * request that fails there (unreachable, timeout, a server error) is retried on the next one, which
 * requests then keep going to.
 */
public final class ClickHouseTable implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ClickHouseTable.class);

  /** How long one attempt may take, connecting included. */
  private static final long REQUEST_TIMEOUT_S = 30;

  private final List<Client> clients;
  private final List<String> urls;
  private int current;
  private final String database;
  private final String table;
  private final int attempts;
  private final long firstBackoffMs;

  /**
   * {@code urls}: one server's HTTP URL, or several comma separated (see the class comment); {@code
   * attempts} per server, with a backoff from {@code firstBackoffMs}, doubling, after each round
   * over the servers.
   */
  public ClickHouseTable(
      String urls, String database, String table, int attempts, long firstBackoffMs) {
    this(ClickHouseServer.anonymous(urls), database, table, attempts, firstBackoffMs);
  }

  /** The same, signed in as {@code server}'s user. */
  public ClickHouseTable(
      ClickHouseServer server, String database, String table, int attempts, long firstBackoffMs) {
    String urls = server.urls();
    this.urls = Arrays.stream(urls.split(",")).map(String::trim).filter(u -> !u.isEmpty()).toList();
    if (this.urls.isEmpty()) {
      throw new IllegalArgumentException("clickhouse: no URL in '" + urls + "'");
    }
    this.clients = new ArrayList<>();
    for (String url : this.urls) {
      clients.add(
          server
              .builder(url)
              .setDefaultDatabase(database)
              .compressClientRequest(false)
              .compressServerResponse(false)
              .setMaxRetries(0) // retried here, with backoff
              .setConnectTimeout(5, ChronoUnit.SECONDS)
              .setSocketTimeout(REQUEST_TIMEOUT_S, ChronoUnit.SECONDS)
              .build());
    }
    this.database = database;
    this.table = table;
    this.attempts = attempts * this.urls.size();
    this.firstBackoffMs = firstBackoffMs;
  }

  /** db.table, as in statements and messages. */
  public String name() {
    return database + "." + table;
  }

  /** The table's columns, in its order; none if there is no such table. */
  public List<TableColumn> columns() throws IOException, InterruptedException {
    String sql =
        "SELECT name, type, default_kind FROM system.columns WHERE database = "
            + TableColumn.quote(database)
            + " AND table = "
            + TableColumn.quote(table)
            + " FORMAT TabSeparatedRaw";
    return TableColumn.parse(
        send(
            () -> {
              try (QueryResponse r = wait(clients.get(current).query(sql))) {
                return new String(r.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
              }
            },
            "query on"));
  }

  /**
   * Inserts the RowBinary rows {@code body[0, length)} for {@code columns}; throws once every
   * attempt failed. Each attempt writes from the array itself: the caller must not touch it until
   * this returns.
   */
  public void insert(List<String> columns, byte[] body, int length, int rows)
      throws IOException, InterruptedException {
    send(
        () ->
            wait(
                clients
                    .get(current)
                    .insert(
                        name(),
                        columns,
                        out -> out.write(body, 0, length),
                        ClickHouseFormat.RowBinary,
                        new InsertSettings())),
        "insert of " + rows + " rows into");
  }

  private interface Request<R> {
    R call() throws Exception;
  }

  private static <R> R wait(CompletableFuture<R> f) throws Exception {
    try {
      return f.get(REQUEST_TIMEOUT_S + 5, TimeUnit.SECONDS);
    } catch (ExecutionException e) {
      throw e.getCause() instanceof Exception c ? c : e;
    } catch (TimeoutException e) {
      f.cancel(true);
      throw e;
    }
  }

  /** {@code what}: for messages, followed by the table. */
  private <R> R send(Request<R> request, String what) throws IOException, InterruptedException {
    long backoff = firstBackoffMs;
    String last = "";
    for (int attempt = 1; attempt <= attempts; attempt++) {
      try {
        return request.call();
      } catch (InterruptedException e) {
        throw e;
      } catch (ServerException e) {
        last = "HTTP " + e.getTransportProtocolCode() + ": " + e.getMessage();
        int status = e.getTransportProtocolCode();
        if (status >= 400 && status < 500 && !e.getMessage().contains("TOO_MANY")) {
          throw new IOException("clickhouse: " + what + " " + name() + " refused: " + last, e);
        }
      } catch (Exception e) {
        last = e.toString();
      }
      LOG.warn(
          "clickhouse: {} {} at {} failed (attempt {}/{}): {}",
          what,
          name(),
          urls.get(current),
          attempt,
          attempts,
          last);
      current = (current + 1) % urls.size();
      if (attempt < attempts && attempt % urls.size() != 0) {
        continue; // the next server at once; the backoff once each has failed
      }
      if (attempt < attempts) {
        Thread.sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
    throw new IOException(
        "clickhouse: " + what + " " + name() + " failed after " + attempts + " attempts: " + last);
  }

  @Override
  public void close() {
    clients.forEach(Client::close);
  }
}
