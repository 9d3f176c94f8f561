package org.cpi2.flink;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.cpi2.flink.kafka.RawRecord;

/** Where the job's input comes from: Kafka in production, in-memory data in tests. */
public interface Cpi2Sources {
  /**
   * cpi2.samples: CpiSample values, with event time and watermarks from {@code watermarks} applied
   * where the records enter (per partition for Kafka).
   */
  DataStream<RawRecord> samples(
      StreamExecutionEnvironment env, WatermarkStrategy<RawRecord> watermarks);

  /** cpi2.actions: EnforcementAction values. */
  DataStream<RawRecord> actions(StreamExecutionEnvironment env);

  /** cpi2.specs from the beginning: CpiSpec values that seed a fresh deployment. */
  DataStream<RawRecord> specSeeds(StreamExecutionEnvironment env);
}
