package org.cpi2.loader.clickhouse;

import java.io.IOException;
import java.io.Serializable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableFuture;
import org.apache.flink.api.common.operators.ProcessingTimeService;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.api.operators.OperatorSnapshotFutures;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;
import org.apache.flink.util.concurrent.FutureUtils;

/**
 * The operator of a {@link ClickHouseSink}: it writes every record into the table and emits
 * nothing.
 *
 * <p>A checkpoint must not complete before the rows written ahead of its barrier are in ClickHouse
 * (at-least-once). A Sink v2 writer waits for that in the task thread, before the barrier; chained
 * to the Kafka source, that stops reading for the whole insert. Here the checkpoint's synchronous
 * part only hands the batch over ({@link ClickHouseSink.Writer#checkpoint}), and the wait for its
 * insert runs first in the asynchronous part, ahead of the operator's (empty) state: the task
 * acknowledges the checkpoint only after that, and goes on reading meanwhile. A failed insert fails
 * the asynchronous part, so the checkpoint does not complete, and the next record fails the task.
 */
public class ClickHouseSinkOperator<T> extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<T, Void> {
  private static final long serialVersionUID = 1L;

  /** Makes the writer, in the task: ClickHouseSink#createWriter; tests give fakes. */
  @FunctionalInterface
  public interface Writers<T> extends Serializable {
    ClickHouseSink.Writer<T> create(int subtask, ProcessingTimeService time) throws IOException;
  }

  private final Writers<T> writers;
  private transient ClickHouseSink.Writer<T> writer;

  public ClickHouseSinkOperator(Writers<T> writers) {
    this.writers = writers;
  }

  @Override
  public void open() throws Exception {
    super.open();
    writer =
        writers.create(
            getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), getProcessingTimeService());
  }

  @Override
  public void processElement(StreamRecord<T> element) throws Exception {
    writer.write(element.getValue());
  }

  @Override
  public OperatorSnapshotFutures snapshotState(
      long checkpointId, long timestamp, CheckpointOptions options, CheckpointStreamFactory storage)
      throws Exception {
    long batch = writer.checkpoint();
    OperatorSnapshotFutures futures =
        super.snapshotState(checkpointId, timestamp, options, storage);
    RunnableFuture<SnapshotResult<OperatorStateHandle>> state =
        futures.getOperatorStateManagedFuture();
    futures.setOperatorStateManagedFuture(
        new FutureTask<>(
            () -> {
              writer.awaitInserted(batch);
              return FutureUtils.runIfNotDoneAndGet(state);
            }));
    return futures;
  }

  /** The end of input: everything written goes in before the operator finishes. */
  @Override
  public void finish() throws Exception {
    writer.flush();
    super.finish();
  }

  /**
   * Rows not yet handed to a checkpoint belong to one that did not complete: they will be replayed.
   */
  @Override
  public void close() throws Exception {
    try {
      if (writer != null) {
        writer.close();
      }
    } finally {
      super.close();
    }
  }
}
