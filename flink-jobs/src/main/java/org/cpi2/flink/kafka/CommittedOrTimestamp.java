package org.cpi2.flink.kafka;

import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;

/**
 * A partition's committed offset, or else its first record at or after a fixed time (its end when
 * there is none). Unlike "latest", the time is fixed when the job is built: a job that fails before
 * its first checkpoint, so before it committed anything, starts again from the same offsets, not
 * from the end of the topic at its restart (which would skip what came between).
 */
final class CommittedOrTimestamp implements OffsetsInitializer {
  private static final long serialVersionUID = 1L;

  private final long timestampMs;

  CommittedOrTimestamp(long timestampMs) {
    this.timestampMs = timestampMs;
  }

  @Override
  public Map<TopicPartition, Long> getPartitionOffsets(
      Collection<TopicPartition> partitions, PartitionOffsetsRetriever retriever) {
    Map<TopicPartition, Long> out = new HashMap<>();
    Map<TopicPartition, Long> search = new HashMap<>();
    Map<TopicPartition, Long> committed = retriever.committedOffsets(partitions);
    for (TopicPartition p : partitions) {
      Long offset = committed.get(p);
      if (offset != null && offset >= 0) {
        out.put(p, offset);
      } else {
        search.put(p, timestampMs);
      }
    }
    if (!search.isEmpty()) {
      // The ends first: a record that lands after them is later than the time, so starting at
      // them loses nothing; an end read after the search would skip what arrived in between.
      Map<TopicPartition, Long> ends = retriever.endOffsets(search.keySet());
      Map<TopicPartition, OffsetAndTimestamp> found = retriever.offsetsForTimes(search);
      for (TopicPartition p : search.keySet()) {
        OffsetAndTimestamp at = found.get(p);
        out.put(p, at != null ? at.offset() : ends.get(p));
      }
    }
    return out;
  }

  /** A committed offset that retention has deleted: the oldest record left, lose no more. */
  @Override
  public OffsetResetStrategy getAutoOffsetResetStrategy() {
    return OffsetResetStrategy.EARLIEST;
  }
}
