package org.cpi2.loader.clickhouse;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The local stack's ClickHouse (HTTP on 127.0.0.1:$CLICKHOUSE_HTTP_PORT, 8123 by default). If it
 * does not answer, {@link #ensureUp} runs {@code make -C $ROOT up} once, as the project's tests do.
 */
final class LocalClickHouse {
  static final String URL =
      "http://127.0.0.1:" + System.getenv().getOrDefault("CLICKHOUSE_HTTP_PORT", "8123");
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(3)).build();

  private LocalClickHouse() {}

  static boolean answers() {
    try {
      return query("SELECT 1").strip().equals("1");
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }

  /** Why ClickHouse is not usable here, or null when it answers (after trying to start it). */
  static String ensureUp() throws InterruptedException {
    if (answers()) {
      return null;
    }
    File root = new File(System.getProperty("user.dir")).getParentFile();
    try {
      Process p = new ProcessBuilder("make", "-C", root.getPath(), "up").inheritIO().start();
      if (!p.waitFor(5, TimeUnit.MINUTES)) {
        p.destroy();
        return "`make -C " + root + " up` did not finish within 5 minutes";
      }
    } catch (IOException e) {
      return "cannot run `make -C " + root + " up`: " + e;
    }
    return answers() ? null : "ClickHouse does not answer at " + URL + " even after `make up`";
  }

  /** Runs one statement; returns the body, throws with ClickHouse's message on an error. */
  static String query(String sql) throws IOException, InterruptedException {
    return query(sql, "");
  }

  /**
   * {@code settings}: {@code name=value&...} for the statement, e.g.
   * output_format_json_quote_64bit_integers=0.
   */
  static String query(String sql, String settings) throws IOException, InterruptedException {
    HttpRequest req =
        HttpRequest.newBuilder(
                URI.create(
                    URL
                        + "/?"
                        + (settings.isEmpty() ? "" : settings + "&")
                        + "query="
                        + URLEncoder.encode(sql, StandardCharsets.UTF_8)))
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.noBody())
            .build();
    HttpResponse<String> resp = HTTP.send(req, HttpResponse.BodyHandlers.ofString());
    if (resp.statusCode() != 200) {
      throw new IOException(
          "clickhouse: " + sql + ": HTTP " + resp.statusCode() + ": " + resp.body());
    }
    return resp.body();
  }
}
