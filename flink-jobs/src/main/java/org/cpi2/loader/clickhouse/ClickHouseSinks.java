package org.cpi2.loader.clickhouse;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import org.apache.avro.generic.IndexedRecord;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;

/** Each stream of the loader into its ClickHouse tables (database {@code clickhouse.database}). */
public final class ClickHouseSinks {
  static final RowShape<CpiSample> SAMPLES = RowShape.records(CpiSample.getClassSchema(), Set.of());
  static final RowShape<CpiSpec> SPECS = RowShape.records(CpiSpec.getClassSchema(), Set.of());
  static final RowShape<Incident> INCIDENTS =
      RowShape.records(Incident.getClassSchema(), Set.of("suspects"));
  static final RowShape<Incident> SUSPECTS = RowShape.suspects();
  static final RowShape<EnforcementAction> ACTIONS =
      RowShape.records(EnforcementAction.getClassSchema(), Set.of());
  static final RowShape<CapOutcome> OUTCOMES =
      RowShape.records(CapOutcome.getClassSchema(), Set.of());
  static final RowShape<DeadLetter> DEAD_LETTERS =
      RowShape.records(DeadLetter.getClassSchema(), Set.of());

  /** Every table the job writes and the shape of its rows (tests go through all of them). */
  static final Map<String, RowShape<?>> TABLES = tables();

  private static Map<String, RowShape<?>> tables() {
    Map<String, RowShape<?>> t = new LinkedHashMap<>();
    t.put("samples", SAMPLES);
    t.put("specs", SPECS);
    t.put("incidents", INCIDENTS);
    t.put("incident_suspects", SUSPECTS);
    t.put("actions", ACTIONS);
    t.put("outcomes", OUTCOMES);
    t.put("dead_letters", DEAD_LETTERS);
    return Collections.unmodifiableMap(t);
  }

  private final ClickHouseServer server;
  private final String database;
  private final ClickHouseSink.Batching batching;

  public ClickHouseSinks(Cpi2Options o) {
    this(
        ClickHouseServer.of(o),
        o.get(Cpi2Options.CLICKHOUSE_DATABASE),
        new ClickHouseSink.Batching(
            o.getInt(Cpi2Options.CLICKHOUSE_BATCH),
            o.getLong(Cpi2Options.CLICKHOUSE_BATCH_BYTES),
            o.getLong(Cpi2Options.CLICKHOUSE_MAX_DELAY_MS)));
  }

  public ClickHouseSinks(String url, String database, ClickHouseSink.Batching batching) {
    this(ClickHouseServer.anonymous(url), database, batching);
  }

  public ClickHouseSinks(
      ClickHouseServer server, String database, ClickHouseSink.Batching batching) {
    this.server = server;
    this.database = database;
    this.batching = batching;
  }

  public void samples(DataStream<CpiSample> s) {
    to(s, "samples", SAMPLES);
  }

  public void specs(DataStream<CpiSpec> s) {
    to(s, "specs", SPECS);
  }

  public void incidents(DataStream<Incident> s) {
    to(s, "incidents", INCIDENTS);
    to(s, "incident_suspects", SUSPECTS);
  }

  public void actions(DataStream<EnforcementAction> s) {
    to(s, "actions", ACTIONS);
  }

  public void outcomes(DataStream<CapOutcome> s) {
    to(s, "outcomes", OUTCOMES);
  }

  public void deadLetters(DataStream<DeadLetter> s) {
    to(s, "dead_letters", DEAD_LETTERS);
  }

  private <T extends IndexedRecord> void to(DataStream<T> s, String table, RowShape<T> rows) {
    new ClickHouseSink<>(server, database, table, batching, rows)
        .attachTo(s)
        .uid("clickhouse-" + table);
  }
}
