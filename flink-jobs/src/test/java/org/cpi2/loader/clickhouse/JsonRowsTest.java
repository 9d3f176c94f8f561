package org.cpi2.loader.clickhouse;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.cpi2.flink.Fixtures;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Incident;
import org.junit.jupiter.api.Test;

class JsonRowsTest {
  @Test
  void sampleRowFollowsTheColumnContract() throws Exception {
    CpiSample s =
        Fixtures.sample("h\"1", "web/0", org.cpi2.schema.TaskClass.BATCH, 60_000_000L, null, 0.5);
    String row = JsonRows.row(s, Set.of());
    assertEquals(
        "{\"host\":\"h\\\"1\",\"task\":\"web/0\",\"job\":\"web\",\"task_id\":\"0\",\"platform\":\"p1\","
            + "\"task_class\":\"BATCH\",\"is_protected\":0,\"window_start_us\":60000000,\"window_us\":10000000,"
            + "\"cycles\":1000,\"instructions\":1000,\"counter_source\":\"SIMULATED\",\"time_running_ratio\":1.0,"
            + "\"cpu_usage\":0.5,\"cpi\":null,\"llc_misses\":null,\"numa_score\":null,\"threads\":null}",
        row);
    write("samples", List.of(row));
  }

  @Test
  void incidentRowsSplitIntoIncidentAndSuspects() throws Exception {
    Incident i = ClickHouseSinkIT.incident("web/0");
    String row = JsonRows.row(i, Set.of("suspects"));
    List<String> suspects = JsonRows.suspects(i);
    assertEquals(2, suspects.size());
    assertEquals(
        "{\"incident_id\":\""
            + i.getIncidentId()
            + "\",\"host\":\"h1\",\"detected_at_us\":600000000,\"rank\":2,"
            + "\"task\":\"mr \\\"quoted\\\"/1\",\"job\":\"mr\",\"task_class\":\"BATCH\",\"correlation\":-0.25,\"cpu_usage\":0.5,\"lift\":null,\"comoving_cpu\":null}",
        suspects.get(1));
    assertEquals(true, row.contains("\"excluded_tasks\":[\"old/1\"]"), row);
    assertEquals(false, row.contains("suspects\""), row);
    write("incidents", List.of(row));
    write("incident_suspects", suspects);
  }

  @Test
  void deadLetterPayloadIsBase64AndControlCharactersAreEscaped() throws Exception {
    DeadLetter d =
        DeadLetter.newBuilder()
            .setAtUs(1)
            .setComponent("c")
            .setSourceTopic("t")
            .setPartition(0)
            .setOffset(7)
            .setReason("a\tb\u0001")
            .setPayload(ByteBuffer.wrap(new byte[] {(byte) 0xC3, 1, 0}))
            .build();
    String row = JsonRows.row(d, Set.of());
    assertEquals(
        "{\"at_us\":1,\"component\":\"c\",\"source_topic\":\"t\",\"partition\":0,\"offset\":7,"
            + "\"reason\":\"a\\tb\\u0001\",\"payload\":\"wwEA\"}",
        row);
    write("dead_letters", List.of(row));
  }

  /** The rows also go to target/json-rows/, to load them into another ClickHouse by hand. */
  private static void write(String table, List<String> rows) throws Exception {
    Path dir = Path.of("target", "json-rows");
    Files.createDirectories(dir);
    Files.write(dir.resolve(table + ".jsonl"), rows);
  }
}
