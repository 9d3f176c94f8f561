package org.cpi2.flink;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.PipelineOptions;
import org.apache.flink.streaming.api.datastream.BroadcastStream;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.cpi2.flink.correlate.CorrelatorFunction;
import org.cpi2.flink.detect.AnomalyDetectorFunction;
import org.cpi2.flink.detect.HostEvent;
import org.cpi2.flink.kafka.HostAuth;
import org.cpi2.flink.kafka.KafkaIo;
import org.cpi2.flink.signal.Signal;
import org.cpi2.flink.spec.SpecBuilderFunction;
import org.cpi2.flink.spec.SpecInput;
import org.cpi2.flink.spec.SpecInputCombiner;
import org.cpi2.flink.stream.DecodeFunction;
import org.cpi2.flink.stream.RecordTypes;
import org.cpi2.flink.stream.Validators;
import org.cpi2.flink.stream.Watermarks;
import org.cpi2.schema.CapOutcome;
import org.cpi2.schema.CpiSample;
import org.cpi2.schema.CpiSpec;
import org.cpi2.schema.DeadLetter;
import org.cpi2.schema.EnforcementAction;
import org.cpi2.schema.Incident;
import org.slf4j.LoggerFactory;

/**
 * The CPI² streaming job: samples → specs (job × platform) → outliers and anomalies, antagonist
 * analyses and incidents, cap outcomes (host). Reads Kafka and writes Kafka only: storing
 * everything in ClickHouse is the loader's job (org.cpi2.loader.LoaderJob), so a slow or stopped
 * ClickHouse never delays a cap. Sources and sinks are given, so tests run the same graph on
 * in-memory data. Operator uids are stable: do not change them, savepoints map state by uid.
 */
public final class Cpi2Job {
  public static final String COMPONENT = "flink-jobs";
  public static final int MAX_PARALLELISM = 128;

  private final Cpi2Options options;
  private final Cpi2Sources sources;
  private final Cpi2Sinks sinks;

  public Cpi2Job(Cpi2Options options, Cpi2Sources sources, Cpi2Sinks sinks) {
    this.options = options;
    this.sources = sources;
    this.sinks = sinks;
  }

  public static void main(String[] args) throws Exception {
    Cpi2Options options = Cpi2Options.fromArgs(args);
    if (options.get(Cpi2Options.KAFKA_HOST_KEYS).isEmpty()) {
      LoggerFactory.getLogger(Cpi2Job.class)
          .warn(
              "{} is not set: samples and actions are not checked for their host's signature,"
                  + " so any agent's Kafka credentials write for any host",
              Cpi2Options.KAFKA_HOST_KEYS);
    }
    new Cpi2Job(options, KafkaIo.sources(options), KafkaIo.sinks(options))
        .execute(options.get(Cpi2Options.JOB_NAME));
  }

  /** The environment with this project's settings: no Kryo, checkpoints on. */
  public static StreamExecutionEnvironment environment(Cpi2Options options) {
    Configuration conf = new Configuration();
    conf.set(PipelineOptions.GENERIC_TYPES, false);
    String checkpoints = options.get(Cpi2Options.CHECKPOINT_DIR);
    if (!checkpoints.isEmpty()) {
      conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
      conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpoints);
    }
    // Object reuse: chained operators hand records on instead of deep-copying them through their
    // serializer (copies of every sample in the source thread: to the spec inputs and the host
    // events). Safe here because no function changes a record it was given
    // or keeps one it emitted: decoding creates a new record per message, records from the network
    // are fresh objects, and every sink encodes what it gets at once.
    conf.set(PipelineOptions.OBJECT_REUSE, true);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.enableCheckpointing(options.getLong(Cpi2Options.CHECKPOINT_INTERVAL_MS));
    int parallelism = options.getInt(Cpi2Options.JOB_PARALLELISM);
    if (parallelism > 0) {
      env.setParallelism(parallelism);
    }
    // Fixed, so that savepoints stay restorable whatever parallelism a later run chooses.
    env.setMaxParallelism(MAX_PARALLELISM);
    return env;
  }

  public void execute(String name) throws Exception {
    StreamExecutionEnvironment env = environment(options);
    build(env);
    env.execute(name);
  }

  /** Adds the whole graph to {@code env}. */
  public void build(StreamExecutionEnvironment env) {
    long ooo = options.getLong(Cpi2Options.OUT_OF_ORDERNESS_S);
    long idle = options.getLong(Cpi2Options.SOURCE_IDLENESS_S);
    // samples and actions only from the host they name (its agents' signature), where configured
    HostAuth hostAuth = HostAuth.of(options.get(Cpi2Options.KAFKA_HOST_KEYS));

    // Event time and watermarks come from the source, per partition; decoding keeps both.
    SingleOutputStreamOperator<CpiSample> decodedSamples =
        sources
            .samples(env, Watermarks.samples(ooo, idle))
            .process(
                new DecodeFunction<>(
                    CpiSample.class,
                    COMPONENT + "/decode-samples",
                    Validators::sample,
                    hostAuth,
                    CpiSample::getHost),
                RecordTypes.SAMPLE_STREAM)
            .uid("decode-samples")
            .name("Decode samples");
    DataStream<CpiSample> samples = decodedSamples;

    SingleOutputStreamOperator<EnforcementAction> decodedActions =
        sources
            .actions(env)
            .process(
                new DecodeFunction<>(
                    EnforcementAction.class,
                    COMPONENT + "/decode-actions",
                    Validators::action,
                    hostAuth,
                    EnforcementAction::getHost),
                RecordTypes.ACTION)
            .uid("decode-actions")
            .name("Decode actions");
    DataStream<EnforcementAction> actions =
        decodedActions
            .assignTimestampsAndWatermarks(Watermarks.actions())
            .uid("action-watermarks")
            .name("Action event time");

    SingleOutputStreamOperator<CpiSpec> decodedSeeds =
        sources
            .specSeeds(env)
            .process(
                new DecodeFunction<>(
                    CpiSpec.class,
                    COMPONENT + "/decode-spec-seeds",
                    s -> s.getJob().isEmpty() ? "CpiSpec without job" : null),
                RecordTypes.SPEC)
            .uid("decode-spec-seeds")
            .name("Decode spec seeds");
    DataStream<CpiSpec> seeds =
        decodedSeeds
            .assignTimestampsAndWatermarks(Watermarks.specs())
            .uid("spec-seed-watermarks")
            .name("Spec seed event time");

    // Every signal runs the same machinery in operators of its own: CPI in the ones it always had
    // (their uids unchanged, so savepoints of earlier builds restore), the others beside them.
    DataStream<CpiSpec> specs = null;
    DataStream<Incident> incidents = null;
    DataStream<CapOutcome> outcomes = null;
    for (Signal signal : options.signals()) {
      SignalOutputs o = signalGraph(signal, samples, actions, seeds);
      specs = specs == null ? o.specs : specs.union(o.specs);
      incidents = incidents == null ? o.incidents : incidents.union(o.incidents);
      outcomes = outcomes == null ? o.outcomes : outcomes.union(o.outcomes);
    }

    DataStream<DeadLetter> deadLetters =
        decodedSamples
            .getSideOutput(RecordTypes.DEAD_LETTERS)
            .union(
                decodedActions.getSideOutput(RecordTypes.DEAD_LETTERS),
                decodedSeeds.getSideOutput(RecordTypes.DEAD_LETTERS));

    if (specs != null) {
      sinks.specs(specs);
      sinks.incidents(incidents);
      sinks.outcomes(outcomes);
    }
    sinks.deadLetters(deadLetters);
  }

  /** What one signal's operators put out. */
  private static final class SignalOutputs {
    DataStream<CpiSpec> specs;
    DataStream<Incident> incidents;
    DataStream<CapOutcome> outcomes;
  }

  /** Operator uids and names of {@code signal}: CPI's as they always were, the others suffixed. */
  private static String uid(String base, Signal signal) {
    return signal == Signal.CPI ? base : base + "-" + signal.wireName();
  }

  private static String name(String base, Signal signal) {
    return signal == Signal.CPI ? base : base + " [" + signal.wireName() + "]";
  }

  /**
   * The spec builder, detector and correlator of one signal. A sample without the signal does not
   * enter another signal's spec builder; nor its detector and correlator when a host measures the
   * signal for all its tasks or for none (PSI, resctrl and the PMU are the machine's), so the
   * suspects of its analyses are the host's tasks still. A signal of some tasks only ({@link
   * Signal#perTask}: a service's own metrics) takes every sample into its detector, which passes
   * the neighbours' on unjudged, for their CPU usage.
   */
  private SignalOutputs signalGraph(
      Signal signal,
      DataStream<CpiSample> allSamples,
      DataStream<EnforcementAction> actions,
      DataStream<CpiSpec> allSeeds) {
    Cpi2Options signalOptions = options.forSignal(signal);
    DataStream<CpiSample> samples =
        signal == Signal.CPI
            ? allSamples
            : allSamples
                .filter(s -> signal.value(s) != null)
                .uid(uid("signal-samples", signal))
                .name(name("Samples with the signal", signal));
    String wire = signal.wireName();
    DataStream<CpiSpec> seeds =
        allSeeds
            .filter(s -> wire.equals(s.getSignal()))
            .uid(uid("spec-seeds-of-signal", signal))
            .name(name("Spec seeds of the signal", signal));

    // Specs per job × platform (paper 3.1).
    SingleOutputStreamOperator<CpiSpec> specs =
        samples
            .transform(
                name("Spec inputs", signal),
                TypeInformation.of(SpecInput.class),
                SpecInputCombiner.of(options, signal))
            .uid(uid("spec-inputs", signal))
            .keyBy(s -> s.key, TypeInformation.of(String.class))
            .connect(
                seeds.keyBy(
                    s -> SpecBuilderFunction.key(s.getJob(), s.getPlatform()),
                    TypeInformation.of(String.class)))
            .process(new SpecBuilderFunction(options, signal), RecordTypes.SPEC)
            .uid(uid("spec-builder", signal))
            .name(name("Spec builder (job x platform)", signal));

    // Everything per host runs in one thread after one shuffle: the host's samples and its
    // enforcer's actions go through the detector (paper 4.1; specs broadcast to every instance),
    // which passes the actions on, to the correlator (paper 4.2, 5), which also judges every cap
    // (paper 7.2) from the same series. The correlator reads the detector's output as keyed by
    // host as it is (no second shuffle), so the two are chained.
    DataStream<HostEvent> hostEvents =
        (signal.perTask() ? allSamples : samples)
            .map(s -> HostEvent.of(s, signal), TypeInformation.of(HostEvent.class))
            .uid(uid("host-samples", signal))
            .name(name("Host events: samples", signal))
            .union(
                actions
                    .map(HostEvent::of, TypeInformation.of(HostEvent.class))
                    .uid(uid("host-actions", signal))
                    .name(name("Host events: actions", signal)));
    BroadcastStream<CpiSpec> specBroadcast = specs.broadcast(AnomalyDetectorFunction.SPECS);
    SingleOutputStreamOperator<HostEvent> scored =
        hostEvents
            .keyBy(HostEvent::host, TypeInformation.of(String.class))
            .connect(specBroadcast)
            .process(
                new AnomalyDetectorFunction(signalOptions, signal),
                TypeInformation.of(HostEvent.class))
            .uid(uid("host-detector", signal))
            .name(name("Outlier and anomaly detector (host)", signal));
    SingleOutputStreamOperator<Incident> incidents =
        DataStreamUtils.reinterpretAsKeyedStream(
                scored, HostEvent::host, TypeInformation.of(String.class))
            .process(new CorrelatorFunction(options, signal), RecordTypes.INCIDENT)
            .uid(uid("host-correlator", signal))
            .name(name("Antagonist correlator and cap judge (host)", signal));

    SignalOutputs out = new SignalOutputs();
    out.specs = specs;
    out.incidents = incidents;
    out.outcomes = incidents.getSideOutput(CorrelatorFunction.OUTCOMES);
    return out;
  }
}
