package org.cpi2.flink.io;

import java.util.List;
import java.util.Set;
import org.apache.avro.specific.SpecificRecord;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.util.function.SerializableFunction;
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
  private static final long MAX_DELAY_MS = 1000;

  private final String url;
  private final String database;
  private final int batch;

  public ClickHouseSinks(Cpi2Options o) {
    this(o.get(Cpi2Options.CLICKHOUSE_URL), o.get(Cpi2Options.CLICKHOUSE_DATABASE), o.getInt(Cpi2Options.CLICKHOUSE_BATCH));
  }

  public ClickHouseSinks(String url, String database, int batch) {
    this.url = url;
    this.database = database;
    this.batch = batch;
  }

  @Override
  public void samples(DataStream<CpiSample> s) {
    to(s, "samples", JsonRowsOf.<CpiSample>all());
  }

  @Override
  public void specs(DataStream<CpiSpec> s) {
    to(s, "specs", JsonRowsOf.<CpiSpec>all());
  }

  @Override
  public void incidents(DataStream<Incident> s) {
    to(s, "incidents", i -> List.of(JsonRows.row(i, Set.of("suspects"))));
    to(s, "incident_suspects", JsonRows::suspects);
  }

  @Override
  public void actions(DataStream<EnforcementAction> s) {
    to(s, "actions", JsonRowsOf.<EnforcementAction>all());
  }

  @Override
  public void outcomes(DataStream<CapOutcome> s) {
    to(s, "outcomes", JsonRowsOf.<CapOutcome>all());
  }

  @Override
  public void deadLetters(DataStream<DeadLetter> s) {
    to(s, "dead_letters", JsonRowsOf.<DeadLetter>all());
  }

  private <T> void to(DataStream<T> s, String table, SerializableFunction<T, List<String>> rows) {
    s.sinkTo(new ClickHouseSink<>(url, database, table, batch, MAX_DELAY_MS, rows))
        .uid("clickhouse-" + table)
        .name("ClickHouse " + database + "." + table);
  }

  /** A record as one row with all its fields. */
  static final class JsonRowsOf {
    private JsonRowsOf() {}

    static <T extends SpecificRecord> SerializableFunction<T, List<String>> all() {
      return r -> List.of(JsonRows.row(r, Set.of()));
    }
  }
}
