package org.cpi2.flink;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;

/**
 * Where the job's output goes. Every method attaches sinks to a stream (Kafka topics, ClickHouse
 * tables, or a test's collector); the default is to drop it, for sink sets that do not store it.
 */
public interface Cpi2Sinks {
  default void samples(DataStream<CpiSample> samples) {}

  default void specs(DataStream<CpiSpec> specs) {}

  default void incidents(DataStream<Incident> incidents) {}

  default void actions(DataStream<EnforcementAction> actions) {}

  default void outcomes(DataStream<CapOutcome> outcomes) {}

  default void deadLetters(DataStream<DeadLetter> deadLetters) {}

  /** Both sink sets receive every stream. */
  static Cpi2Sinks both(Cpi2Sinks a, Cpi2Sinks b) {
    return new Cpi2Sinks() {
      @Override
      public void samples(DataStream<CpiSample> s) {
        a.samples(s);
        b.samples(s);
      }

      @Override
      public void specs(DataStream<CpiSpec> s) {
        a.specs(s);
        b.specs(s);
      }

      @Override
      public void incidents(DataStream<Incident> s) {
        a.incidents(s);
        b.incidents(s);
      }

      @Override
      public void actions(DataStream<EnforcementAction> s) {
        a.actions(s);
        b.actions(s);
      }

      @Override
      public void outcomes(DataStream<CapOutcome> s) {
        a.outcomes(s);
        b.outcomes(s);
      }

      @Override
      public void deadLetters(DataStream<DeadLetter> s) {
        a.deadLetters(s);
        b.deadLetters(s);
      }
    };
  }
}
