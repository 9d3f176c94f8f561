package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Batched inserts into one table over ClickHouse's HTTP interface (the statement in the query
 * parameter, rows in the body), and the queries a sink needs first (the table's columns), with
 * retries and exponential backoff. Works with ClickHouse 18.16 and current versions: only the query
 * parameter is used.
 */
public final class ClickHouseHttp {
  private static final Logger LOG = LoggerFactory.getLogger(ClickHouseHttp.class);

  private final HttpClient client;
  private final String base;
  private final URI insertUri;
  private final String table;
  private final int attempts;
  private final long firstBackoffMs;

  /** Queries for {@code database.table}; {@link #inserting} for its inserts. */
  public ClickHouseHttp(
      String baseUrl, String database, String table, int attempts, long firstBackoffMs) {
    this(
        HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build(),
        baseUrl.endsWith("/") ? baseUrl : baseUrl + "/",
        database + "." + table,
        "INSERT INTO " + database + "." + table + " FORMAT " + InsertPlan.ROW_BINARY,
        attempts,
        firstBackoffMs);
  }

  private ClickHouseHttp(
      HttpClient client,
      String base,
      String table,
      String statement,
      int attempts,
      long firstBackoffMs) {
    this.client = client;
    this.base = base;
    this.table = table;
    this.insertUri =
        URI.create(base + "?query=" + URLEncoder.encode(statement, StandardCharsets.UTF_8));
    this.attempts = attempts;
    this.firstBackoffMs = firstBackoffMs;
  }

  /**
   * The same server, table and retries, inserting with {@code statement} (InsertPlan#statement).
   */
  public ClickHouseHttp inserting(String statement) {
    return new ClickHouseHttp(client, base, table, statement, attempts, firstBackoffMs);
  }

  /** db.table, as in the statements. */
  public String table() {
    return table;
  }

  /**
   * Inserts the rows ({@code body[0, length)}); throws once every attempt failed. Each attempt
   * sends from the array itself ({@link ArrayBodyPublisher}): the caller must not touch it until
   * this returns.
   */
  public void insert(byte[] body, int length, int rows) throws IOException, InterruptedException {
    send(
        () -> HttpRequest.newBuilder(insertUri).POST(new ArrayBodyPublisher(body, length)),
        "insert of " + rows + " rows into");
  }

  /** The result of a statement that reads (in the format it names), retried like inserts. */
  public String query(String sql) throws IOException, InterruptedException {
    return send(
        () ->
            HttpRequest.newBuilder(URI.create(base)).POST(HttpRequest.BodyPublishers.ofString(sql)),
        "query on");
  }

  private interface Request {
    HttpRequest.Builder build();
  }

  /** {@code what}: for messages, followed by the table. */
  private String send(Request request, String what) throws IOException, InterruptedException {
    long backoff = firstBackoffMs;
    String last = "";
    for (int attempt = 1; attempt <= attempts; attempt++) {
      try {
        HttpResponse<String> resp =
            client.send(
                request.build().timeout(Duration.ofSeconds(30)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() == 200) {
          return resp.body();
        }
        last = "HTTP " + resp.statusCode() + ": " + resp.body().strip();
        if (resp.statusCode() >= 400 && resp.statusCode() < 500 && !last.contains("TOO_MANY")) {
          // The rows, the statement or the table are wrong: retrying will not help.
          throw new IOException("clickhouse: " + what + " " + table + " refused: " + last);
        }
      } catch (IOException e) {
        if (e.getMessage() != null && e.getMessage().startsWith("clickhouse: ")) {
          throw e;
        }
        last = e.toString();
      }
      LOG.warn(
          "clickhouse: {} {} failed (attempt {}/{}): {}", what, table, attempt, attempts, last);
      if (attempt < attempts) {
        Thread.sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
    throw new IOException(
        "clickhouse: " + what + " " + table + " failed after " + attempts + " attempts: " + last);
  }
}
