package org.cpi2.flink.io;

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
 * Batched inserts over ClickHouse's HTTP interface ({@code INSERT INTO db.table FORMAT
 * JSONEachRow}, rows in the body), with retries and exponential backoff. Works with ClickHouse
 * 18.16 and current versions: only the query parameter and {@code input_format_skip_unknown_fields}
 * are used, so extra fields are ignored and columns the rows lack take their defaults.
 */
public final class ClickHouseHttp {
  private static final Logger LOG = LoggerFactory.getLogger(ClickHouseHttp.class);

  private final HttpClient client;
  private final URI insertUri;
  private final String table;
  private final int attempts;
  private final long firstBackoffMs;

  public ClickHouseHttp(String baseUrl, String database, String table, int attempts, long firstBackoffMs) {
    this.client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    this.table = database + "." + table;
    String query = "INSERT INTO " + this.table + " FORMAT JSONEachRow";
    String base = baseUrl.endsWith("/") ? baseUrl : baseUrl + "/";
    this.insertUri =
        URI.create(
            base + "?input_format_skip_unknown_fields=1&query=" + URLEncoder.encode(query, StandardCharsets.UTF_8));
    this.attempts = attempts;
    this.firstBackoffMs = firstBackoffMs;
  }

  /**
   * Inserts the rows ({@code body[0, length)}, one JSON object per line, UTF-8); throws once every
   * attempt failed. Each attempt reads the array again (HttpClient copies it into 16 KiB buffers
   * to send it): the caller must not touch it until this returns.
   */
  public void insert(byte[] body, int length, int rows) throws IOException, InterruptedException {
    long backoff = firstBackoffMs;
    String last = "";
    for (int attempt = 1; attempt <= attempts; attempt++) {
      try {
        HttpRequest req =
            HttpRequest.newBuilder(insertUri)
                .timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body, 0, length))
                .build();
        HttpResponse<String> resp = client.send(req, HttpResponse.BodyHandlers.ofString());
        if (resp.statusCode() == 200) {
          return;
        }
        last = "HTTP " + resp.statusCode() + ": " + resp.body().strip();
        if (resp.statusCode() >= 400 && resp.statusCode() < 500 && !last.contains("TOO_MANY")) {
          // The rows or the table are wrong: retrying will not help.
          throw new IOException("clickhouse: insert into " + table + " refused: " + last);
        }
      } catch (IOException e) {
        if (e.getMessage() != null && e.getMessage().startsWith("clickhouse: ")) {
          throw e;
        }
        last = e.toString();
      }
      LOG.warn("clickhouse: insert of {} rows into {} failed (attempt {}/{}): {}", rows, table, attempt, attempts, last);
      if (attempt < attempts) {
        Thread.sleep(backoff);
        backoff = Math.min(backoff * 2, 30_000);
      }
    }
    throw new IOException("clickhouse: insert into " + table + " failed after " + attempts + " attempts: " + last);
  }
}
