package org.cpi2.flink.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer.PartitionOffsetsRetriever;
import org.apache.kafka.clients.consumer.OffsetAndTimestamp;
import org.apache.kafka.clients.consumer.OffsetResetStrategy;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Test;

class CommittedOrTimestampTest {
  private static final TopicPartition P0 = new TopicPartition("t", 0);
  private static final TopicPartition P1 = new TopicPartition("t", 1);
  private static final TopicPartition P2 = new TopicPartition("t", 2);

  /** P0 has a committed offset, P1 a record after the time, P2 none (its end is 70). */
  private static final class Retriever implements PartitionOffsetsRetriever {
    final Map<TopicPartition, Long> searched = new HashMap<>();

    @Override
    public Map<TopicPartition, Long> committedOffsets(Collection<TopicPartition> partitions) {
      return Map.of(P0, 42L);
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
      return Map.of(P0, 50L, P1, 60L, P2, 70L);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
      throw new AssertionError("not asked");
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
        Map<TopicPartition, Long> times) {
      searched.putAll(times);
      Map<TopicPartition, OffsetAndTimestamp> out = new HashMap<>();
      out.put(P1, new OffsetAndTimestamp(7L, 1_000L));
      out.put(P2, null); // Kafka's answer for a partition with no record that late
      return out;
    }
  }

  /** P2's records arrive while the offsets are looked up: its end is 70, then 80. */
  private static final class Growing implements PartitionOffsetsRetriever {
    boolean searched;

    @Override
    public Map<TopicPartition, Long> committedOffsets(Collection<TopicPartition> partitions) {
      return Map.of();
    }

    @Override
    public Map<TopicPartition, Long> endOffsets(Collection<TopicPartition> partitions) {
      return Map.of(P2, searched ? 80L : 70L);
    }

    @Override
    public Map<TopicPartition, Long> beginningOffsets(Collection<TopicPartition> partitions) {
      throw new AssertionError("not asked");
    }

    @Override
    public Map<TopicPartition, OffsetAndTimestamp> offsetsForTimes(
        Map<TopicPartition, Long> times) {
      searched = true;
      Map<TopicPartition, OffsetAndTimestamp> out = new HashMap<>();
      out.put(P2, null); // none late enough yet (or not yet replicated)
      return out;
    }
  }

  @Test
  void theEndIsReadBeforeTheSearchSoRecordsArrivingMeanwhileAreKept() {
    assertEquals(
        Map.of(P2, 70L),
        new CommittedOrTimestamp(999L).getPartitionOffsets(List.of(P2), new Growing()));
  }

  @Test
  void committedWinsElseTheFirstRecordAtTheTimeElseTheEnd() {
    Retriever r = new Retriever();
    Map<TopicPartition, Long> got =
        new CommittedOrTimestamp(999L).getPartitionOffsets(List.of(P0, P1, P2), r);
    assertEquals(Map.of(P0, 42L, P1, 7L, P2, 70L), got);
    assertEquals(
        Map.of(P1, 999L, P2, 999L),
        r.searched,
        "only partitions without a committed offset are searched, at the fixed time");
    assertEquals(
        OffsetResetStrategy.EARLIEST, new CommittedOrTimestamp(0).getAutoOffsetResetStrategy());
  }
}
