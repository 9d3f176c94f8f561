package org.cpi2.flink;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.cpi2.flink.correlate.DecisionPolicy;
import org.cpi2.flink.signal.Signal;

/**
 * Every tunable of the jobs (paper Table 2, ARCHITECTURE.md "Parameters"), as option names with
 * defaults. Values come from {@code --name value} arguments and, optionally, a properties file
 * given by {@code --config FILE}; arguments win over the file.
 */
public final class Cpi2Options implements Serializable {
  private static final long serialVersionUID = 1L;

  // Spec builder (paper 3.1).
  public static final String SPEC_PERIOD_S = "spec.period-s";

  /**
   * The weight of the previous spec periods' data at each new period; empty (the default): derived
   * from {@link #SPEC_AGE_WEIGHT_PER_DAY}. A value given wins over the per-day weight.
   */
  public static final String SPEC_AGE_WEIGHT = "spec.age-weight";

  /**
   * The weight of a day-old spec's data (the paper's 0.9 for the previous day), applied per spec
   * period as w_day^(period / 1 day).
   */
  public static final String SPEC_AGE_WEIGHT_PER_DAY = "spec.age-weight-per-day";

  public static final String SPEC_MIN_TASKS = "spec.min-tasks";

  /**
   * Job-wide shifts (a release, a new mix of requests): the buckets of event time (the sampling
   * period) in which the spec builder compares each host's samples of a job with the job's spec.
   * The spec period must be a multiple of it.
   */
  public static final String SHIFT_BUCKET_S = "shift.bucket-s";

  /**
   * When at least this share of the hosts that ran a job in one bucket had an outlier of it (or all
   * its samples there under mean - k sigma), and at least {@link #SHIFT_MIN_HOSTS} hosts, the job
   * as a whole has changed: its spec is re-baselined by the ratio of the job's median level to the
   * spec's mean, from the bucket after next. 0 turns it off.
   */
  public static final String SHIFT_MIN_SHARE = "shift.min-share";

  /** The fewest hosts with an outlier of a job in one bucket that make a job-wide shift. */
  public static final String SHIFT_MIN_HOSTS = "shift.min-hosts";

  public static final String SPEC_MIN_SAMPLES_PER_TASK = "spec.min-samples-per-task";
  public static final String MIN_CPU_USAGE = "sample.min-cpu-usage";
  // Outliers and anomalies (paper 4.1).
  public static final String OUTLIER_SIGMAS = "outlier.sigmas";

  /**
   * An outlier's value must also exceed this absolute floor (0 for CPI: the paper's rule alone). A
   * spec of a job whose signal is almost always 0 (an idle job's pressure) has a sigma near 0, and
   * mean + k sigma alone would call any blip an outlier.
   */
  public static final String OUTLIER_FLOOR = "outlier.floor";

  /**
   * An outlier's value must also exceed the spec's mean times this ratio (0: no such gate, CPI's
   * default). For the signals in the service's own units (CPU per unit of work, latency) no
   * absolute floor fits every job, and a very steady job's sigma is so small that mean + k sigma
   * alone would call a rise of a few percent an outlier.
   */
  public static final String OUTLIER_MIN_RATIO = "outlier.min-ratio";

  /**
   * A value at or above this passes the {@link #OUTLIER_MIN_RATIO} gate whatever the spec's mean
   * (0: none): for a share of the window, waiting a quarter of it is always enough, while a task
   * that usually waits little is an outlier at a few times its usual share already.
   */
  public static final String OUTLIER_MIN_RATIO_CAP = "outlier.min-ratio-cap";

  public static final String ANOMALY_OUTLIERS = "anomaly.outliers";

  /**
   * The signals detection runs on (Signal names, comma-separated): each one its own spec builder,
   * detector and correlator, CPI in the operators it always had.
   */
  public static final String SIGNALS = "signals";

  /** A signal's own CPU floor, outlier sigmas and floor: {@code signal.NAME.} + these. */
  public static final String SIGNAL_PREFIX = "signal.";

  public static final String SIGNAL_MIN_CPU = ".min-cpu-usage";
  public static final String SIGNAL_SIGMAS = ".outlier-sigmas";
  public static final String SIGNAL_FLOOR = ".outlier-floor";
  public static final String SIGNAL_MIN_RATIO = ".outlier-min-ratio";
  public static final String SIGNAL_MIN_RATIO_CAP = ".outlier-min-ratio-cap";

  public static final String ANOMALY_WINDOW_S = "anomaly.window-s";
  // Correlator and policy (paper 4.2, 5).
  public static final String CORRELATION_WINDOW_S = "correlation.window-s";
  public static final String CORRELATION_THRESHOLD = "correlation.threshold";

  /** A capped suspect's usage must have risen and fallen with the victim's CPI (its lift). */
  public static final String CORRELATION_MIN_LIFT = "correlation.min-lift";

  /**
   * Or a suspect stands out when this much of its CPU usage (CPU-sec/sec) moves with the victim's
   * CPI. Bystanders in the simulated fleets reached at most 0.16 (0.11 above the correlation
   * threshold) over 14,000 analyses; antagonists 0.2 to 2.5.
   */
  public static final String CORRELATION_MIN_COMOVING_CPU = "correlation.min-comoving-cpu";

  /**
   * The stand-out gate's test (project policy): the largest chance per analysis that a suspect
   * unrelated to the victim's CPI stands out (org.cpi2.flink.correlate.Significance), shared among
   * the eligible suspects at or above the threshold; 1 turns the test off.
   */
  public static final String CORRELATION_STAND_OUT_P = "correlation.stand-out-p";

  /**
   * The window's ceiling (project policy): {@code true} judges a suspect's correlation against the
   * threshold times the highest correlation the victim's CPI allows in the window, a bar under the
   * paper's; {@code false} (the default) keeps the paper's threshold.
   */
  public static final String CORRELATION_SCALE_BY_CEILING = "correlation.scale-by-ceiling";

  /**
   * The decision policy: {@code project} (the paper's rules with the stand-out gate of {@link
   * #CORRELATION_MIN_LIFT} and {@link #CORRELATION_MIN_COMOVING_CPU}) or {@code paper} (the paper's
   * rules alone: the top correlated batch suspect at or above the threshold is capped).
   */
  public static final String CORRELATION_POLICY = "correlation.policy";

  /**
   * The self-inflicted rule (project policy): a victim whose CPI falls with its own CPU usage at
   * Pearson r at or below minus this over the window has self-inflicted spikes (paper 6.1, case 3);
   * 0 turns the rule off.
   */
  public static final String CORRELATION_SELF_INFLICTED_R = "correlation.self-inflicted-r";

  /**
   * Then a suspect is capped only if its usage still correlates this much with the victim's CPI
   * once the victim's own usage is accounted for (partial correlation).
   */
  public static final String CORRELATION_MIN_BEYOND_OWN_USAGE = "correlation.min-beyond-own-usage";

  /**
   * Early analysis (project policy): a victim's first analysis of an episode that names nobody over
   * the correlation window is done again over this many seconds before the anomaly, where the onset
   * is not diluted by the quiet minutes before it; 0 turns it off.
   */
  public static final String CORRELATION_EARLY_WINDOW_S = "correlation.early-window-s";

  public static final String ANALYSIS_MIN_INTERVAL_MS = "correlation.min-interval-ms";
  public static final String CAP_BATCH = "cap.batch-cpu";
  public static final String CAP_BEST_EFFORT = "cap.best-effort-cpu";
  public static final String CAP_DURATION_S = "cap.duration-s";
  // Outcome judge (paper 7.2).
  public static final String JUDGE_BEFORE_S = "judge.before-s";
  // Time, state and runtime.
  public static final String OUT_OF_ORDERNESS_S = "time.out-of-orderness-s";
  public static final String SOURCE_IDLENESS_S = "time.source-idleness-s";
  public static final String TASK_TTL_S = "state.task-ttl-s";
  public static final String CHECKPOINT_INTERVAL_MS = "checkpoint.interval-ms";

  /** Where checkpoints go (a file:// URI); empty: the cluster's own setting. */
  public static final String CHECKPOINT_DIR = "checkpoint.dir";

  public static final String JOB_NAME = "job.name";

  /** Parallelism of every operator; 0 leaves it to the cluster (parallelism.default). */
  public static final String JOB_PARALLELISM = "job.parallelism";

  public static final String KAFKA_BOOTSTRAP = "kafka.bootstrap";
  public static final String KAFKA_GROUP = "kafka.group";

  /** Where a fresh start (no checkpoint or savepoint) reads samples and actions from. */
  public static final String KAFKA_START = "kafka.start";

  /**
   * The Kafka principal's client file (librdkafka properties: security.protocol, sasl.mechanisms,
   * sasl.username, sasl.password, ssl.ca.location; stack/README.md), on the machines that run the
   * job; empty: PLAINTEXT. Only its path is in the job: each Kafka client reads the password from
   * the file when it starts (KafkaIo.clientProperties).
   */
  public static final String KAFKA_CLIENT_FILE = "kafka.client-file";

  /**
   * The hosts' master keys (a file of {@code ID=HEX} lines, on the machines that run the job;
   * stack/README.md): samples and actions that the host they name did not sign are refused
   * (kafka/HostAuth). Empty: not checked (a warning at start: any agent's credentials then write
   * for any host).
   */
  public static final String KAFKA_HOST_KEYS = "kafka.host-keys";

  /**
   * How the detection job writes its topics: {@code at-least-once} (a record may be written again
   * after a restart; consumers deduplicate by the records' ids) or {@code exactly-once} (each sink
   * writes in Kafka transactions committed when a checkpoint completes: read_committed consumers
   * see a record once, and only after that checkpoint).
   */
  public static final String KAFKA_DELIVERY = "kafka.delivery";

  /**
   * exactly-once: the producers' transaction.timeout.ms, at most the brokers'
   * transaction.max.timeout.ms (Kafka's default, 15 min, which the stack keeps), above twice the
   * checkpoint interval (checked), and longer than a restart: the broker aborts a transaction still
   * open after it, and the records of a checkpoint not committed by then are lost.
   */
  public static final String KAFKA_TRANSACTION_TIMEOUT_MS = "kafka.transaction-timeout-ms";

  /**
   * The loader's ClickHouse (its HTTP interface, e.g. http://127.0.0.1:8123), or the nodes of a
   * ClickHouse cluster, comma separated (a request that fails on one goes to the next); required by
   * the loader.
   */
  public static final String CLICKHOUSE_URL = "clickhouse.url";

  public static final String CLICKHOUSE_DATABASE = "clickhouse.database";

  /** The loader's ClickHouse user. */
  public static final String CLICKHOUSE_USER = "clickhouse.user";

  /**
   * A file whose first line is that user's password (empty: no password); read on each TaskManager,
   * so the password is in no argument.
   */
  public static final String CLICKHOUSE_PASSWORD_FILE = "clickhouse.password-file";

  /** For https URLs: the CA file of the server's certificate (empty: the JVM's trusted CAs). */
  public static final String CLICKHOUSE_CA_FILE = "clickhouse.ca-file";

  /**
   * A ClickHouse table's writer inserts its batch at whichever comes first: this many rows, this
   * many bytes, or its oldest row this old. ClickHouse's CPU per row falls with the size of an
   * insert, and fewer, larger parts mean less merging afterwards, so batches are large.
   */
  public static final String CLICKHOUSE_BATCH = "clickhouse.batch-rows";

  /**
   * Bounds a table writer's memory: it holds three batches, one filling, one being inserted and one
   * waiting.
   */
  public static final String CLICKHOUSE_BATCH_BYTES = "clickhouse.batch-bytes";

  /** Rows reach ClickHouse within about this long, even when no further record comes. */
  public static final String CLICKHOUSE_MAX_DELAY_MS = "clickhouse.max-delay-ms";

  /** The detection job's options. */
  private static final Map<String, String> DEFAULTS = new LinkedHashMap<>();

  /** The loader's options (org.cpi2.loader.LoaderJob). */
  private static final Map<String, String> LOADER_DEFAULTS = new LinkedHashMap<>();

  static {
    DEFAULTS.put(SPEC_PERIOD_S, "3600");
    DEFAULTS.put(SPEC_AGE_WEIGHT, "");
    DEFAULTS.put(SPEC_AGE_WEIGHT_PER_DAY, "0.9");
    DEFAULTS.put(SPEC_MIN_TASKS, "5");
    DEFAULTS.put(SHIFT_BUCKET_S, "60");
    DEFAULTS.put(SHIFT_MIN_SHARE, "0.5");
    DEFAULTS.put(SHIFT_MIN_HOSTS, "5");
    DEFAULTS.put(SPEC_MIN_SAMPLES_PER_TASK, "100");
    DEFAULTS.put(MIN_CPU_USAGE, "0.25");
    DEFAULTS.put(OUTLIER_SIGMAS, "2.0");
    DEFAULTS.put(OUTLIER_FLOOR, "0");
    DEFAULTS.put(OUTLIER_MIN_RATIO, "0");
    DEFAULTS.put(OUTLIER_MIN_RATIO_CAP, "0");
    // cpu_per_op and latency are asked for (--signals): their detector and correlator take every
    // sample of the fleet, the neighbours of services too (Signal.perTask).
    DEFAULTS.put(SIGNALS, "cpi,cpu_pressure,memory_pressure,llc_mpki");
    // Defaults of the signals other than CPI: flink-jobs/README.md "Signals" says why.
    signal(Signal.CPU_PRESSURE, "0.01", "2.0", "0.05", "2", "0.25");
    signal(Signal.MEMORY_PRESSURE, "0.01", "2.0", "0.02", "0", "0");
    signal(Signal.LLC_MPKI, "0.25", "2.0", "1.0", "0", "0");
    signal(Signal.CPU_PER_OP, "0.005", "2.0", "0", "1.2", "0");
    signal(Signal.LATENCY, "0.005", "2.0", "0", "1.5", "0");
    DEFAULTS.put(ANOMALY_OUTLIERS, "3");
    DEFAULTS.put(ANOMALY_WINDOW_S, "300");
    DEFAULTS.put(CORRELATION_WINDOW_S, "600");
    DEFAULTS.put(CORRELATION_THRESHOLD, "0.35");
    DEFAULTS.put(CORRELATION_MIN_LIFT, "0.05");
    DEFAULTS.put(CORRELATION_MIN_COMOVING_CPU, "0.2");
    DEFAULTS.put(CORRELATION_POLICY, "project");
    DEFAULTS.put(CORRELATION_STAND_OUT_P, "0.001");
    DEFAULTS.put(CORRELATION_SCALE_BY_CEILING, "false");
    DEFAULTS.put(CORRELATION_SELF_INFLICTED_R, "0.5");
    DEFAULTS.put(CORRELATION_EARLY_WINDOW_S, "300");
    DEFAULTS.put(CORRELATION_MIN_BEYOND_OWN_USAGE, "0.3");
    DEFAULTS.put(ANALYSIS_MIN_INTERVAL_MS, "1000");
    DEFAULTS.put(CAP_BATCH, "0.1");
    DEFAULTS.put(CAP_BEST_EFFORT, "0.01");
    DEFAULTS.put(CAP_DURATION_S, "300");
    DEFAULTS.put(JUDGE_BEFORE_S, "600");
    DEFAULTS.put(OUT_OF_ORDERNESS_S, "30");
    DEFAULTS.put(SOURCE_IDLENESS_S, "60");
    DEFAULTS.put(TASK_TTL_S, "3600");
    DEFAULTS.put(CHECKPOINT_INTERVAL_MS, "30000");
    DEFAULTS.put(CHECKPOINT_DIR, "");
    DEFAULTS.put(JOB_NAME, "cpi2-flink-jobs");
    DEFAULTS.put(JOB_PARALLELISM, "0");
    DEFAULTS.put(KAFKA_BOOTSTRAP, "127.0.0.1:9092");
    DEFAULTS.put(KAFKA_GROUP, "cpi2-flink-jobs");
    DEFAULTS.put(KAFKA_START, "committed-or-earliest"); // or earliest, latest, timestamp-ms:<ms>
    DEFAULTS.put(KAFKA_CLIENT_FILE, "");
    DEFAULTS.put(KAFKA_HOST_KEYS, "");
    DEFAULTS.put(KAFKA_DELIVERY, "at-least-once"); // or exactly-once
    DEFAULTS.put(KAFKA_TRANSACTION_TIMEOUT_MS, "900000");

    LOADER_DEFAULTS.put(CHECKPOINT_INTERVAL_MS, "30000");
    LOADER_DEFAULTS.put(CHECKPOINT_DIR, "");
    LOADER_DEFAULTS.put(JOB_NAME, "cpi2-loader");
    LOADER_DEFAULTS.put(JOB_PARALLELISM, "0");
    LOADER_DEFAULTS.put(KAFKA_BOOTSTRAP, "127.0.0.1:9092");
    LOADER_DEFAULTS.put(KAFKA_GROUP, "cpi2-loader");
    // a new group's start; a group with committed offsets always resumes from them
    LOADER_DEFAULTS.put(KAFKA_START, "committed-or-earliest"); // or committed-or-latest
    LOADER_DEFAULTS.put(KAFKA_CLIENT_FILE, "");
    LOADER_DEFAULTS.put(CLICKHOUSE_URL, "");
    LOADER_DEFAULTS.put(CLICKHOUSE_DATABASE, "cpi2");
    LOADER_DEFAULTS.put(CLICKHOUSE_USER, "default");
    LOADER_DEFAULTS.put(CLICKHOUSE_PASSWORD_FILE, "");
    LOADER_DEFAULTS.put(CLICKHOUSE_CA_FILE, "");
    LOADER_DEFAULTS.put(CLICKHOUSE_BATCH, "500000");
    LOADER_DEFAULTS.put(CLICKHOUSE_BATCH_BYTES, "67108864"); // 64 MiB
    LOADER_DEFAULTS.put(CLICKHOUSE_MAX_DELAY_MS, "5000");
  }

  private static void signal(
      Signal s, String minCpu, String sigmas, String floor, String ratio, String ratioCap) {
    DEFAULTS.put(SIGNAL_PREFIX + s.wireName() + SIGNAL_MIN_CPU, minCpu);
    DEFAULTS.put(SIGNAL_PREFIX + s.wireName() + SIGNAL_SIGMAS, sigmas);
    DEFAULTS.put(SIGNAL_PREFIX + s.wireName() + SIGNAL_FLOOR, floor);
    DEFAULTS.put(SIGNAL_PREFIX + s.wireName() + SIGNAL_MIN_RATIO, ratio);
    DEFAULTS.put(SIGNAL_PREFIX + s.wireName() + SIGNAL_MIN_RATIO_CAP, ratioCap);
  }

  private final Map<String, String> values;

  private Cpi2Options(Map<String, String> values) {
    this.values = values;
  }

  /** The defaults of every option of the detection job. */
  public static Cpi2Options defaults() {
    return new Cpi2Options(new LinkedHashMap<>(DEFAULTS));
  }

  /** The defaults of every option of the loader. */
  public static Cpi2Options loaderDefaults() {
    return new Cpi2Options(new LinkedHashMap<>(LOADER_DEFAULTS));
  }

  /**
   * The detection job's options from {@code --name value} pairs (see {@link #fromArgs(String[],
   * Cpi2Options)}).
   */
  public static Cpi2Options fromArgs(String[] args) throws IOException {
    return fromArgs(args, defaults());
  }

  /**
   * {@code defaults} changed by {@code --name value} pairs; {@code --config FILE} loads a
   * properties file first.
   */
  public static Cpi2Options fromArgs(String[] args, Cpi2Options defaults) throws IOException {
    Map<String, String> given = new LinkedHashMap<>();
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (!a.startsWith("--") || i + 1 >= args.length) {
        throw new IllegalArgumentException("expected --name value, got: " + a + " (see --help)");
      }
      given.put(a.substring(2), args[++i]);
    }
    Cpi2Options options = defaults;
    String file = given.remove("config");
    if (file != null) {
      Properties props = new Properties();
      try (InputStream in = new FileInputStream(file)) {
        props.load(in);
      }
      for (String name : props.stringPropertyNames()) {
        options = options.with(name, props.getProperty(name));
      }
    }
    for (Map.Entry<String, String> e : given.entrySet()) {
      options = options.with(e.getKey(), e.getValue());
    }
    if (options.values.containsKey(SIGNALS)) {
      options.signals(); // an unknown signal fails here, not in the job (the loader has none)
    }
    if (options.values.containsKey(KAFKA_DELIVERY)) {
      options.exactlyOnce(); // a misspelt guarantee fails here, not when the sinks are built
    }
    if (options.values.containsKey(CORRELATION_POLICY)) {
      DecisionPolicy.Rules.parse(options.get(CORRELATION_POLICY));
    }
    if (options.values.containsKey(SHIFT_BUCKET_S)) {
      options.shiftBucketUs(); // a spec period that is no multiple of it fails here
    }
    return options;
  }

  /** A copy with one option changed; unknown names are refused so typos do not pass silently. */
  public Cpi2Options with(String name, String value) {
    if (!values.containsKey(name)) {
      throw new IllegalArgumentException("unknown option " + name + "; known: " + values.keySet());
    }
    Map<String, String> copy = new LinkedHashMap<>(values);
    copy.put(name, value);
    return new Cpi2Options(copy);
  }

  /** Whether {@link #KAFKA_DELIVERY} is exactly-once (else at-least-once; anything else fails). */
  public boolean exactlyOnce() {
    String d = get(KAFKA_DELIVERY);
    if (d.equals("exactly-once")) {
      return true;
    }
    if (d.equals("at-least-once")) {
      return false;
    }
    throw new IllegalArgumentException(
        KAFKA_DELIVERY + ": expected at-least-once or exactly-once, got " + d);
  }

  /** The signals detection runs on ({@link #SIGNALS}), CPI first. */
  public List<Signal> signals() {
    return Signal.parseList(get(SIGNALS));
  }

  /**
   * The options the operators of {@code signal} read: CPI's are these; another signal's CPU floor,
   * outlier sigmas and floor are its own {@code signal.NAME.*} options.
   */
  public Cpi2Options forSignal(Signal signal) {
    if (signal == Signal.CPI) {
      return this;
    }
    String p = SIGNAL_PREFIX + signal.wireName();
    Cpi2Options o =
        with(MIN_CPU_USAGE, get(p + SIGNAL_MIN_CPU))
            .with(OUTLIER_SIGMAS, get(p + SIGNAL_SIGMAS))
            .with(OUTLIER_FLOOR, get(p + SIGNAL_FLOOR))
            .with(OUTLIER_MIN_RATIO, get(p + SIGNAL_MIN_RATIO))
            .with(OUTLIER_MIN_RATIO_CAP, get(p + SIGNAL_MIN_RATIO_CAP));
    return signal.selfInflictedByOwnUsage() ? o : o.with(CORRELATION_SELF_INFLICTED_R, "0");
  }

  /**
   * The age weight per spec period: {@link #SPEC_AGE_WEIGHT} when given, else {@link
   * #SPEC_AGE_WEIGHT_PER_DAY} converted to the period, w_day^(period / 86400 s).
   */
  public double specAgeWeight() {
    if (explicitAgeWeight()) {
      return getDouble(SPEC_AGE_WEIGHT);
    }
    double perDay = getDouble(SPEC_AGE_WEIGHT_PER_DAY);
    if (!(perDay >= 0 && perDay <= 1)) {
      throw new IllegalArgumentException(SPEC_AGE_WEIGHT_PER_DAY + " must be in [0, 1]: " + perDay);
    }
    return Math.pow(perDay, getLong(SPEC_PERIOD_S) / 86_400.0);
  }

  /**
   * {@link #SHIFT_BUCKET_S} in microseconds; the spec period must be a positive multiple of it (a
   * spec period ends where a bucket ends).
   */
  public long shiftBucketUs() {
    long bucket = getLong(SHIFT_BUCKET_S);
    long period = getLong(SPEC_PERIOD_S);
    if (bucket <= 0 || period <= 0 || period % bucket != 0) {
      throw new IllegalArgumentException(
          SPEC_PERIOD_S
              + " ("
              + period
              + ") must be a multiple of "
              + SHIFT_BUCKET_S
              + " ("
              + bucket
              + ")");
    }
    return bucket * 1_000_000L;
  }

  /** Whether {@link #SPEC_AGE_WEIGHT} is given (then it wins over the per-day weight). */
  public boolean explicitAgeWeight() {
    String w = get(SPEC_AGE_WEIGHT);
    return w != null && !w.isBlank();
  }

  public String get(String name) {
    return values.get(name);
  }

  public double getDouble(String name) {
    return Double.parseDouble(values.get(name));
  }

  public long getLong(String name) {
    return Long.parseLong(values.get(name));
  }

  public int getInt(String name) {
    return Integer.parseInt(values.get(name));
  }

  /** One line per option with its value, for --help and the startup log. */
  public String describe() {
    StringBuilder sb = new StringBuilder();
    values.forEach((k, v) -> sb.append("  --").append(k).append(' ').append(v).append('\n'));
    return sb.toString();
  }
}
