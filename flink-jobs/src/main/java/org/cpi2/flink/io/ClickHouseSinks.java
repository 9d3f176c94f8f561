package org.cpi2.flink.io;

import java.util.Set;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.flink.Cpi2Sinks;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;

/** Every stream of the job into its ClickHouse table (database {@code clickhouse.database}). */
public final class ClickHouseSinks implements Cpi2Sinks {
  private final String url;
  private final String database;
  private final ClickHouseSink.Batching batching;

  public ClickHouseSinks(Cpi2Options o) {
    this(
        o.get(Cpi2Options.CLICKHOUSE_URL),
        o.get(Cpi2Options.CLICKHOUSE_DATABASE),
        new ClickHouseSink.Batching(
            o.getInt(Cpi2Options.CLICKHOUSE_BATCH),
            o.getLong(Cpi2Options.CLICKHOUSE_BATCH_BYTES),
            o.getLong(Cpi2Options.CLICKHOUSE_MAX_DELAY_MS)));
  }

  public ClickHouseSinks(String url, String database, ClickHouseSink.Batching batching) {
    this.url = url;
    this.database = database;
    this.batching = batching;
  }

  @Override
  public void samples(DataStream<CpiSample> s) {
    to(s, "samples", JsonRows.records(CpiSample.getClassSchema(), Set.of()));
  }

  @Override
  public void specs(DataStream<CpiSpec> s) {
    to(s, "specs", JsonRows.records(CpiSpec.getClassSchema(), Set.of()));
  }

  @Override
  public void incidents(DataStream<Incident> s) {
    to(s, "incidents", JsonRows.records(Incident.getClassSchema(), Set.of("suspects")));
    to(s, "incident_suspects", JsonRows.suspects());
  }

  @Override
  public void actions(DataStream<EnforcementAction> s) {
    to(s, "actions", JsonRows.records(EnforcementAction.getClassSchema(), Set.of()));
  }

  @Override
  public void outcomes(DataStream<CapOutcome> s) {
    to(s, "outcomes", JsonRows.records(CapOutcome.getClassSchema(), Set.of()));
  }

  @Override
  public void deadLetters(DataStream<DeadLetter> s) {
    to(s, "dead_letters", JsonRows.records(DeadLetter.getClassSchema(), Set.of()));
  }

  private <T> void to(DataStream<T> s, String table, RowEncoder<T> rows) {
    s.sinkTo(new ClickHouseSink<>(url, database, table, batching, rows))
        .uid("clickhouse-" + table)
        .name("ClickHouse " + database + "." + table);
  }
}
