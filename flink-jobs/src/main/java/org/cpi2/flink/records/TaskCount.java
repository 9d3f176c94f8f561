package org.cpi2.flink.records;

/** Samples one task contributed to its job's spec over the spec's history, and when it was last seen. */
public class TaskCount {
  public long count;
  public long lastSeenUs;

  public TaskCount() {}
}
