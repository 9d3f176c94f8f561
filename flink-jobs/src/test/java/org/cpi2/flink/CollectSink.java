package org.cpi2.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;

/** A Sink v2 that collects into a static queue by name, for MiniCluster tests in this JVM. */
public class CollectSink<T> implements Sink<T> {
  private static final long serialVersionUID = 1L;
  private static final Map<String, ConcurrentLinkedQueue<Object>> QUEUES =
      new ConcurrentHashMap<>();

  private final String name;

  public CollectSink(String name) {
    this.name = name;
    QUEUES.put(name, new ConcurrentLinkedQueue<>());
  }

  @SuppressWarnings("unchecked")
  public List<T> values() {
    return new ArrayList<>((ConcurrentLinkedQueue<T>) (ConcurrentLinkedQueue<?>) QUEUES.get(name));
  }

  @Override
  public SinkWriter<T> createWriter(WriterInitContext context) {
    ConcurrentLinkedQueue<Object> queue = QUEUES.get(name);
    return new SinkWriter<>() {
      @Override
      public void write(T element, Context ctx) {
        queue.add(element);
      }

      @Override
      public void flush(boolean endOfInput) {}

      @Override
      public void close() {}
    };
  }
}
