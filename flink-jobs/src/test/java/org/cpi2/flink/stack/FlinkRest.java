package org.cpi2.flink.stack;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The Flink REST API calls the stack tests need: upload, run, wait, stop with savepoint, cancel.
 */
final class FlinkRest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final String base;

  FlinkRest(String base) {
    this.base = base;
  }

  boolean answers() {
    try {
      get("/config");
      return true;
    } catch (IOException | InterruptedException e) {
      return false;
    }
  }

  JsonNode get(String path) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
  }

  JsonNode post(String path, JsonNode body) throws IOException, InterruptedException {
    return send(
        HttpRequest.newBuilder(URI.create(base + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))));
  }

  private JsonNode send(HttpRequest.Builder b) throws IOException, InterruptedException {
    HttpResponse<String> r =
        http.send(b.timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() / 100 != 2) {
      throw new IOException("flink REST " + r.uri() + ": HTTP " + r.statusCode() + ": " + r.body());
    }
    return JSON.readTree(r.body().isEmpty() ? "{}" : r.body());
  }

  /** Uploads a jar (multipart/form-data, field jarfile); returns its id on the cluster. */
  String upload(Path jar) throws IOException, InterruptedException {
    String boundary = "cpi2-" + UUID.randomUUID();
    byte[] head =
        ("--"
                + boundary
                + "\r\nContent-Disposition: form-data; name=\"jarfile\"; filename=\""
                + jar.getFileName()
                + "\"\r\nContent-Type: application/x-java-archive\r\n\r\n")
            .getBytes(StandardCharsets.UTF_8);
    byte[] tail = ("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8);
    JsonNode r =
        send(
            HttpRequest.newBuilder(URI.create(base + "/jars/upload"))
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(
                    HttpRequest.BodyPublishers.ofByteArrays(
                        List.of(head, Files.readAllBytes(jar), tail))));
    String name = r.path("filename").asText();
    return name.substring(name.lastIndexOf('/') + 1);
  }

  static final String DETECTION = "org.cpi2.flink.Cpi2Job";
  static final String LOADER = "org.cpi2.loader.LoaderJob";

  /** Runs the detection job of an uploaded jar; returns the job id. */
  String run(String jarId, List<String> args, String savepoint)
      throws IOException, InterruptedException {
    return run(jarId, DETECTION, args, savepoint);
  }

  /** Runs the entry class of an uploaded jar; returns the job id. */
  String run(String jarId, String entryClass, List<String> args, String savepoint)
      throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode();
    body.put("entryClass", entryClass);
    body.set("programArgsList", JSON.valueToTree(args));
    body.put("allowNonRestoredState", false);
    if (savepoint != null) {
      body.put("savepointPath", savepoint);
    }
    return post("/jars/" + jarId + "/run", body).path("jobid").asText();
  }

  void waitRunning(String jobId, Duration max) throws IOException, InterruptedException {
    long end = System.nanoTime() + max.toNanos();
    while (System.nanoTime() < end) {
      JsonNode job = get("/jobs/" + jobId);
      String state = job.path("state").asText();
      boolean allRunning = true;
      for (JsonNode v : job.path("vertices")) {
        allRunning &= v.path("status").asText().equals("RUNNING");
      }
      if (state.equals("RUNNING") && allRunning) {
        return;
      }
      if (state.equals("FAILED") || state.equals("CANCELED") || state.equals("FINISHED")) {
        throw new IOException(
            "job " + jobId + " is " + state + ": " + get("/jobs/" + jobId + "/exceptions"));
      }
      Thread.sleep(500);
    }
    throw new IOException("job " + jobId + " not running after " + max);
  }

  /** Stops the job with a savepoint into {@code dir}; returns the savepoint's location. */
  String stopWithSavepoint(String jobId, Path dir) throws IOException, InterruptedException {
    ObjectNode body = JSON.createObjectNode();
    body.put("targetDirectory", dir.toUri().toString());
    body.put("drain", false);
    String trigger = post("/jobs/" + jobId + "/stop", body).path("request-id").asText();
    for (int i = 0; i < 240; i++) {
      JsonNode r = get("/jobs/" + jobId + "/savepoints/" + trigger);
      if (r.path("status").path("id").asText().equals("COMPLETED")) {
        JsonNode loc = r.path("operation").path("location");
        if (loc.isMissingNode() || loc.isNull()) {
          throw new IOException("savepoint failed: " + r.path("operation").path("failure-cause"));
        }
        return loc.asText();
      }
      Thread.sleep(500);
    }
    throw new IOException("savepoint of " + jobId + " did not complete");
  }

  /** Cancels the job; for finally blocks: reports a failure instead of hiding the test's own. */
  void cancel(String jobId) {
    try {
      send(
          HttpRequest.newBuilder(URI.create(base + "/jobs/" + jobId + "?mode=cancel"))
              .method("PATCH", HttpRequest.BodyPublishers.noBody()));
    } catch (IOException | InterruptedException e) {
      System.err.println("flink-jobs test: could not cancel job " + jobId + ": " + e);
    }
  }
}
