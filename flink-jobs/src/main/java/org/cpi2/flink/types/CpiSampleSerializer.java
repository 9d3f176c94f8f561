package org.cpi2.flink.types;

import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.cpi2.schema.CounterSource;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.TaskClass;

/**
 * Decoded samples in flight, field by field, where flink-avro's AvroSerializer (resolving decoder,
 * Utf8, enums by name) cost several times more. The job itself no longer sends whole samples
 * through a shuffle (the spec builder gets combined SpecInputs, the detector the fields it reads);
 * this serves where a sample crosses a network edge or is copied. Never used for state: state keeps
 * AvroSerializer, which resolves older schemas in savepoints. A field added to CpiSample must be
 * added here (CpiSampleSerializerTest fills every field of the schema and compares after a round
 * trip).
 */
public final class CpiSampleSerializer extends TypeSerializerSingleton<CpiSample> {
  private static final long serialVersionUID = 1L;

  public static final CpiSampleSerializer INSTANCE = new CpiSampleSerializer();

  private static final TaskClass[] CLASSES = TaskClass.values();
  private static final CounterSource[] SOURCES = CounterSource.values();
  // Flags: is_protected, then presence of the optional fields.
  private static final int PROTECTED = 1;
  private static final int CPI = 2;
  private static final int LLC_MISSES = 4;
  private static final int NUMA_SCORE = 8;
  private static final int THREADS = 16;
  private static final int COUNTER_SOURCE = 32;
  // Second flags byte: presence of the signals beside CPI.
  private static final int CPU_PRESSURE = 1;
  private static final int MEMORY_PRESSURE = 2;
  private static final int MEMORY_PRESSURE_FULL = 4;
  private static final int LLC_OCCUPANCY = 8;
  private static final int MEMORY_BANDWIDTH = 16;
  private static final int LLC_MPKI = 32;
  // host_cpus (CpiSample v3): a bit of the second byte that earlier state never sets.
  private static final int HOST_CPUS = 64;
  // Third flags byte (CpiSample v4): the service's own signals, from its metrics endpoint.
  private static final int CPU_PER_OP = 1;
  private static final int LATENCY = 2;

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public CpiSample createInstance() {
    return new CpiSample();
  }

  @Override
  public CpiSample copy(CpiSample from) {
    // Every field is immutable (String, primitive, boxed, enum): a field-by-field copy is deep.
    CpiSample o = new CpiSample();
    o.setHost(from.getHost());
    o.setTask(from.getTask());
    o.setJob(from.getJob());
    o.setTaskId(from.getTaskId());
    o.setPlatform(from.getPlatform());
    o.setTaskClass(from.getTaskClass());
    o.setIsProtected(from.getIsProtected());
    o.setWindowStartUs(from.getWindowStartUs());
    o.setWindowUs(from.getWindowUs());
    o.setCycles(from.getCycles());
    o.setInstructions(from.getInstructions());
    o.setCounterSource(from.getCounterSource());
    o.setTimeRunningRatio(from.getTimeRunningRatio());
    o.setCpuUsage(from.getCpuUsage());
    o.setCpi(from.getCpi());
    o.setLlcMisses(from.getLlcMisses());
    o.setNumaScore(from.getNumaScore());
    o.setThreads(from.getThreads());
    o.setCpuPressure(from.getCpuPressure());
    o.setMemoryPressure(from.getMemoryPressure());
    o.setMemoryPressureFull(from.getMemoryPressureFull());
    o.setLlcOccupancyBytes(from.getLlcOccupancyBytes());
    o.setMemoryBandwidthBytesPerS(from.getMemoryBandwidthBytesPerS());
    o.setLlcMpki(from.getLlcMpki());
    o.setHostCpus(from.getHostCpus());
    o.setCpuPerOp(from.getCpuPerOp());
    o.setLatency(from.getLatency());
    return o;
  }

  @Override
  public CpiSample copy(CpiSample from, CpiSample reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(CpiSample s, DataOutputView out) throws IOException {
    Strings.write(s.getHost(), out);
    Strings.write(s.getTask(), out);
    Strings.write(s.getJob(), out);
    Strings.write(s.getTaskId(), out);
    Strings.write(s.getPlatform(), out);
    Double cpi = s.getCpi();
    Long llc = s.getLlcMisses();
    Double numa = s.getNumaScore();
    Integer threads = s.getThreads();
    CounterSource source = s.getCounterSource();
    out.writeByte(
        (s.getIsProtected() ? PROTECTED : 0)
            | (cpi != null ? CPI : 0)
            | (llc != null ? LLC_MISSES : 0)
            | (numa != null ? NUMA_SCORE : 0)
            | (threads != null ? THREADS : 0)
            | (source != null ? COUNTER_SOURCE : 0));
    Double cpuPressure = s.getCpuPressure();
    Double memPressure = s.getMemoryPressure();
    Double memPressureFull = s.getMemoryPressureFull();
    Long llcOccupancy = s.getLlcOccupancyBytes();
    Double memBandwidth = s.getMemoryBandwidthBytesPerS();
    Double llcMpki = s.getLlcMpki();
    Integer hostCpus = s.getHostCpus();
    out.writeByte(
        (cpuPressure != null ? CPU_PRESSURE : 0)
            | (memPressure != null ? MEMORY_PRESSURE : 0)
            | (memPressureFull != null ? MEMORY_PRESSURE_FULL : 0)
            | (llcOccupancy != null ? LLC_OCCUPANCY : 0)
            | (memBandwidth != null ? MEMORY_BANDWIDTH : 0)
            | (llcMpki != null ? LLC_MPKI : 0)
            | (hostCpus != null ? HOST_CPUS : 0));
    Double cpuPerOp = s.getCpuPerOp();
    Double latency = s.getLatency();
    out.writeByte((cpuPerOp != null ? CPU_PER_OP : 0) | (latency != null ? LATENCY : 0));
    out.writeByte(s.getTaskClass() == null ? -1 : s.getTaskClass().ordinal());
    if (source != null) {
      out.writeByte(source.ordinal());
    }
    out.writeLong(s.getWindowStartUs());
    out.writeLong(s.getWindowUs());
    out.writeLong(s.getCycles());
    out.writeLong(s.getInstructions());
    out.writeDouble(s.getTimeRunningRatio());
    out.writeDouble(s.getCpuUsage());
    if (cpi != null) {
      out.writeDouble(cpi);
    }
    if (llc != null) {
      out.writeLong(llc);
    }
    if (numa != null) {
      out.writeDouble(numa);
    }
    if (threads != null) {
      out.writeInt(threads);
    }
    if (cpuPressure != null) {
      out.writeDouble(cpuPressure);
    }
    if (memPressure != null) {
      out.writeDouble(memPressure);
    }
    if (memPressureFull != null) {
      out.writeDouble(memPressureFull);
    }
    if (llcOccupancy != null) {
      out.writeLong(llcOccupancy);
    }
    if (memBandwidth != null) {
      out.writeDouble(memBandwidth);
    }
    if (llcMpki != null) {
      out.writeDouble(llcMpki);
    }
    if (hostCpus != null) {
      out.writeInt(hostCpus);
    }
    if (cpuPerOp != null) {
      out.writeDouble(cpuPerOp);
    }
    if (latency != null) {
      out.writeDouble(latency);
    }
  }

  @Override
  public CpiSample deserialize(DataInputView in) throws IOException {
    CpiSample s = new CpiSample();
    s.setHost(Strings.read(in));
    s.setTask(Strings.read(in));
    s.setJob(Strings.read(in));
    s.setTaskId(Strings.read(in));
    s.setPlatform(Strings.read(in));
    int flags = in.readByte();
    int signals = in.readByte();
    int service = in.readByte();
    int taskClass = in.readByte();
    s.setTaskClass(taskClass < 0 ? null : CLASSES[taskClass]);
    s.setIsProtected((flags & PROTECTED) != 0);
    s.setCounterSource((flags & COUNTER_SOURCE) != 0 ? SOURCES[in.readByte()] : null);
    s.setWindowStartUs(in.readLong());
    s.setWindowUs(in.readLong());
    s.setCycles(in.readLong());
    s.setInstructions(in.readLong());
    s.setTimeRunningRatio(in.readDouble());
    s.setCpuUsage(in.readDouble());
    s.setCpi((flags & CPI) != 0 ? in.readDouble() : null);
    s.setLlcMisses((flags & LLC_MISSES) != 0 ? in.readLong() : null);
    s.setNumaScore((flags & NUMA_SCORE) != 0 ? in.readDouble() : null);
    s.setThreads((flags & THREADS) != 0 ? in.readInt() : null);
    s.setCpuPressure((signals & CPU_PRESSURE) != 0 ? in.readDouble() : null);
    s.setMemoryPressure((signals & MEMORY_PRESSURE) != 0 ? in.readDouble() : null);
    s.setMemoryPressureFull((signals & MEMORY_PRESSURE_FULL) != 0 ? in.readDouble() : null);
    s.setLlcOccupancyBytes((signals & LLC_OCCUPANCY) != 0 ? in.readLong() : null);
    s.setMemoryBandwidthBytesPerS((signals & MEMORY_BANDWIDTH) != 0 ? in.readDouble() : null);
    s.setLlcMpki((signals & LLC_MPKI) != 0 ? in.readDouble() : null);
    s.setHostCpus((signals & HOST_CPUS) != 0 ? in.readInt() : null);
    s.setCpuPerOp((service & CPU_PER_OP) != 0 ? in.readDouble() : null);
    s.setLatency((service & LATENCY) != 0 ? in.readDouble() : null);
    return s;
  }

  @Override
  public CpiSample deserialize(CpiSample reuse, DataInputView in) throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    serialize(deserialize(in), out);
  }

  @Override
  public TypeSerializerSnapshot<CpiSample> snapshotConfiguration() {
    return new Snapshot();
  }

  /** No configuration: the format is this class's. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<CpiSample> {
    public Snapshot() {
      super(() -> INSTANCE);
    }
  }
}
