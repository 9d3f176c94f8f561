package org.cpi2.flink.stream;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.formats.avro.typeutils.AvroTypeInfo;
import org.apache.flink.util.OutputTag;
import org.cpi2.flink.correlate.TaskSeries;
import org.cpi2.flink.detect.ScoredSample;
import org.cpi2.flink.types.CpiSampleSerializer;
import org.cpi2.flink.types.ScoredSampleSerializer;
import org.cpi2.flink.types.SerializerTypeInfo;
import org.cpi2.flink.types.StateStringSerializer;
import org.cpi2.flink.types.TaskSeriesSerializer;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;

/**
 * Type information of every record that crosses an operator boundary or lives in state. Avro
 * records are serialised by flink-avro's AvroSerializer (schema-evolution aware in savepoints),
 * never by Kryo; the sample stream, the job's bulk, travels as {@link #SAMPLE_STREAM}.
 */
public final class RecordTypes {
  /**
   * The detector's samples waiting for their spec: the fields it reads (ScoredSampleSerializer).
   */
  public static final TypeInformation<ScoredSample> WAITING_SAMPLE =
      new SerializerTypeInfo<>(ScoredSample.class, ScoredSampleSerializer.INSTANCE);

  /**
   * Decoded samples in flight: field by field, cheaper than AvroSerializer. What the job does with
   * a sample is chained to its decoder (spec inputs, host events), so this runs only where a sample
   * crosses a network edge or is copied.
   */
  public static final TypeInformation<CpiSample> SAMPLE_STREAM =
      new SerializerTypeInfo<>(CpiSample.class, CpiSampleSerializer.INSTANCE);

  /** Strings as keys of map state (task names): one bulk write each in checkpoints. */
  public static final TypeInformation<String> STATE_STRING =
      new SerializerTypeInfo<>(String.class, StateStringSerializer.INSTANCE);

  /** The correlator's series of a task, packed (the job's largest state). */
  public static final TypeInformation<TaskSeries> TASK_SERIES =
      new SerializerTypeInfo<>(TaskSeries.class, TaskSeriesSerializer.INSTANCE);

  public static final TypeInformation<CpiSpec> SPEC = new AvroTypeInfo<>(CpiSpec.class);
  public static final TypeInformation<Incident> INCIDENT = new AvroTypeInfo<>(Incident.class);
  public static final TypeInformation<EnforcementAction> ACTION =
      new AvroTypeInfo<>(EnforcementAction.class);
  public static final TypeInformation<CapOutcome> OUTCOME = new AvroTypeInfo<>(CapOutcome.class);
  public static final TypeInformation<DeadLetter> DEAD_LETTER =
      new AvroTypeInfo<>(DeadLetter.class);

  /** Side output of every decoder: what could not be used, with the reason. */
  public static final OutputTag<DeadLetter> DEAD_LETTERS =
      new OutputTag<>("dead-letters", DEAD_LETTER);

  private RecordTypes() {}
}
