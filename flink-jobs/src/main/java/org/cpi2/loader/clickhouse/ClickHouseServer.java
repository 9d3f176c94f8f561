package org.cpi2.loader.clickhouse;

import com.clickhouse.client.api.Client;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.cpi2.flink.Cpi2Options;

/**
 * Where the loader's ClickHouse is and how it signs in: the HTTP(S) URLs (comma separated: the
 * nodes of a cluster), the user, the file holding its password (read where the client is made, on
 * the TaskManager, so no password is in the job's arguments or graph) and, for https URLs, the CA
 * file that signed the server's certificate (empty: the JVM's trusted CAs).
 */
public record ClickHouseServer(String urls, String user, String passwordFile, String caFile)
    implements Serializable {

  /**
   * The server of options {@code clickhouse.url}, {@code .user}, {@code .password-file}, {@code
   * .ca-file}.
   */
  public static ClickHouseServer of(Cpi2Options o) {
    return new ClickHouseServer(
        o.get(Cpi2Options.CLICKHOUSE_URL),
        o.get(Cpi2Options.CLICKHOUSE_USER),
        o.get(Cpi2Options.CLICKHOUSE_PASSWORD_FILE),
        o.get(Cpi2Options.CLICKHOUSE_CA_FILE));
  }

  /** User {@code default} without a password, as a local server has it. */
  public static ClickHouseServer anonymous(String urls) {
    return new ClickHouseServer(urls, "default", "", "");
  }

  /**
   * The password: the first line of {@code passwordFile}, or none without a file; an unreadable
   * file is an error that names it.
   */
  String password() {
    if (passwordFile.isEmpty()) {
      return "";
    }
    try {
      String text = Files.readString(Path.of(passwordFile), StandardCharsets.UTF_8);
      int nl = text.indexOf('\n');
      return nl < 0 ? text : text.substring(0, nl);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "clickhouse: cannot read the password of user "
              + user
              + " from "
              + passwordFile
              + ": "
              + e,
          e);
    }
  }

  /** A client builder for one of the URLs, signed in as this server's user. */
  Client.Builder builder(String url) {
    Client.Builder b =
        new Client.Builder().addEndpoint(url).setUsername(user).setPassword(password());
    if (!caFile.isEmpty()) {
      if (!url.startsWith("https://")) {
        throw new IllegalArgumentException(
            "clickhouse: --" + Cpi2Options.CLICKHOUSE_CA_FILE + " is for https URLs, not " + url);
      }
      b.setRootCertificate(caFile);
    }
    return b;
  }
}
