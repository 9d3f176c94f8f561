package org.cpi2.flink;

import org.apache.flink.streaming.api.datastream.DataStream;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.Incident;

/**
 * Where the detection job's output goes. Every method attaches sinks to a stream (Kafka topics, or
 * a test's collector); the default is to drop it, for sink sets that do not keep it.
 */
public interface Cpi2Sinks {
  default void specs(DataStream<CpiSpec> specs) {}

  default void incidents(DataStream<Incident> incidents) {}

  default void outcomes(DataStream<CapOutcome> outcomes) {}

  default void deadLetters(DataStream<DeadLetter> deadLetters) {}
}
