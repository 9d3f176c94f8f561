package org.cpi2.flink.records;

import org.apache.flink.api.common.typeinfo.TypeInfo;
import org.cpi2.flink.types.SerializerTypeInfo;

/**
 * What the spec builder needs of a sample that counts towards its job's spec: the spec's key (job
 * and platform), the task, the time, CPI and CPU usage. Projected before the shuffle to the spec
 * builder, so that a few fields cross it instead of the whole sample. Travels with its own
 * serializer ({@link org.cpi2.flink.types.SpecInputSerializer}); never in state.
 */
@TypeInfo(SerializerTypeInfo.SpecInputFactory.class)
public final class SpecInput {
  public String key;
  public String task;
  public long timeUs;
  public double cpi;
  public double cpu;

  public SpecInput() {}

  public SpecInput(String key, String task, long timeUs, double cpi, double cpu) {
    this.key = key;
    this.task = task;
    this.timeUs = timeUs;
    this.cpi = cpi;
    this.cpu = cpu;
  }
}
