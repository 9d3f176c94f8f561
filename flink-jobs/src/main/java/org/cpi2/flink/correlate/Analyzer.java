package org.cpi2.flink.correlate;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.cpi2.flink.signal.Signal;
import org.cpi2.schema.Incident;
import org.cpi2.schema.Suspect;
import org.cpi2.schema.TaskClass;

/**
 * One antagonist analysis (paper 4.2 and 5): correlates the victim's CPI with every other task's
 * CPU usage over the window ending at the detection time, ranks the suspects and applies the {@link
 * DecisionPolicy}. Victim samples below the minimum CPU usage are left out of the correlation, as
 * they are out of outlier detection: their CPI is self-inflicted (paper 6.1, case 3), not caused by
 * a neighbour.
 */
public final class Analyzer {
  /** Highest correlation first; ties by task name, so that a replay ranks alike. */
  private static final Comparator<Suspect> BY_CORRELATION_THEN_TASK =
      (a, b) -> {
        int byCorrelation = Double.compare(b.getCorrelation(), a.getCorrelation());
        return byCorrelation != 0
            ? byCorrelation
            : a.getTask().toString().compareTo(b.getTask().toString());
      };

  private final long windowUs;
  private final double minCpuUsage;
  private final DecisionPolicy policy;
  private final Signal signal;

  public Analyzer(long windowUs, double minCpuUsage, DecisionPolicy policy) {
    this(windowUs, minCpuUsage, policy, Signal.CPI);
  }

  /**
   * An analyser of {@code signal}: the series' values are that signal's, correlated with the
   * suspects' CPU usage as the paper does CPI; its incidents name the signal.
   */
  public Analyzer(long windowUs, double minCpuUsage, DecisionPolicy policy, Signal signal) {
    this.windowUs = windowUs;
    this.minCpuUsage = minCpuUsage;
    this.policy = policy;
    this.signal = signal;
  }

  /**
   * Analyses {@code victim} on {@code host} at event time {@code detectedAtUs}, leaving out the
   * tasks in {@code excluded} (already capped). {@code others} may contain the victim itself.
   */
  public Incident analyse(
      String host,
      TaskSeries victim,
      Collection<TaskSeries> others,
      Set<String> excluded,
      long detectedAtUs,
      int round) {
    return analyse(host, victim, others, excluded, detectedAtUs, round, windowUs, false);
  }

  /**
   * As {@link #analyse(String, TaskSeries, Collection, Set, long, int)}; with {@code jobShifted}
   * the victim's anomaly is its job's shift (a re-baselined spec): the suspects are ranked for the
   * record, and the decision is JOB_WIDE_SHIFT.
   */
  public Incident analyse(
      String host,
      TaskSeries victim,
      Collection<TaskSeries> others,
      Set<String> excluded,
      long detectedAtUs,
      int round,
      boolean jobShifted) {
    return analyse(host, victim, others, excluded, detectedAtUs, round, windowUs, jobShifted);
  }

  /**
   * As {@link #analyse(String, TaskSeries, Collection, Set, long, int)} over a window of {@code
   * windowLengthUs} ending at the detection time instead of the analyser's own.
   */
  public Incident analyse(
      String host,
      TaskSeries victim,
      Collection<TaskSeries> others,
      Set<String> excluded,
      long detectedAtUs,
      int round,
      long windowLengthUs) {
    return analyse(host, victim, others, excluded, detectedAtUs, round, windowLengthUs, false);
  }

  private Incident analyse(
      String host,
      TaskSeries victim,
      Collection<TaskSeries> others,
      Set<String> excluded,
      long detectedAtUs,
      int round,
      long windowLengthUs,
      boolean jobShifted) {
    long start = detectedAtUs - windowLengthUs;
    // Victim: every sample in the window for the means, the reliable ones for the correlation.
    int n = victim.size();
    long[] vt = new long[n];
    double[] vc = new double[n];
    double[] vu = new double[n];
    int m = 0;
    double cpiSum = 0;
    int cpiN = 0;
    double cpuSum = 0;
    int cpuN = 0;
    double cpuPeak = 0;
    for (int i = 0; i < n; i++) {
      long t = victim.times[i];
      if (t <= start || t > detectedAtUs) {
        continue;
      }
      cpuSum += victim.cpu[i];
      cpuN++;
      cpuPeak = Math.max(cpuPeak, victim.cpu[i]);
      if (Double.isFinite(victim.cpi[i])) {
        cpiSum += victim.cpi[i];
        cpiN++;
        if (victim.cpu[i] >= minCpuUsage) {
          vt[m] = t;
          vc[m] = victim.cpi[i];
          vu[m] = victim.cpu[i];
          m++;
        }
      }
    }
    double threshold = victim.spec.threshold();
    List<Suspect> suspects = new ArrayList<>();
    boolean selfInflicted = policy.selfInflicted(AntagonistCorrelation.ownUsageR(vu, vc, m));
    Set<String> explainedByVictim = selfInflicted ? new HashSet<>() : Set.of();
    double machineCpu = 0;
    for (TaskSeries s : others) {
      machineCpu += usageAt(s, detectedAtUs);
      if (s.task.equals(victim.task) || excluded.contains(s.task)) {
        continue;
      }
      double usage = meanUsage(s, start, detectedAtUs);
      if (Double.isNaN(usage)) {
        continue; // no sample in the window: not a tenant any more
      }
      // A task whose first sample here is inside the window was not on the host before it.
      long absentBefore = s.size() > 0 && s.times[0] > start ? s.times[0] : Long.MIN_VALUE;
      AntagonistCorrelation.Measure c =
          AntagonistCorrelation.measure(
              vt,
              vc,
              selfInflicted ? vu : null,
              m,
              threshold,
              s.times,
              s.cpu,
              s.size(),
              absentBefore);
      if (selfInflicted && !policy.explainsBeyondOwnUsage(c.beyondOwnUsage())) {
        explainedByVictim.add(s.task);
      }
      // With self-inflicted spikes the victim's own usage moves its CPI too: what the suspect must
      // explain is what is left, its partial correlation (the plain one would count that as noise).
      double chance = selfInflicted ? c.beyondOwnUsageP() : c.pearsonP();
      // The constructor, in schema order (a new field breaks this line at compile time): the
      // builder checks and copies defaults per field, a third of an analysis's time in JMH.
      suspects.add(
          new Suspect(
              s.task,
              s.job,
              taskClass(s.taskClass),
              c.correlation(),
              usage,
              c.lift(),
              c.comovingCpu(),
              chance));
    }
    suspects.sort(BY_CORRELATION_THEN_TASK);
    double victimCpu = cpuN == 0 ? 0 : cpuSum / cpuN;
    TaskClass victimClass = taskClass(victim.taskClass);
    DecisionPolicy.Verdict v =
        policy.decide(
            victimClass,
            victim.isProtected,
            victim.spec.usable(),
            jobShifted,
            cpuPeak,
            suspects,
            explainedByVictim,
            AntagonistCorrelation.ceiling(vc, m, threshold));
    Suspect a = v.antagonist();
    return Incident.newBuilder()
        .setIncidentId(incidentId(signal, host, victim.task, detectedAtUs, round))
        .setHost(host)
        .setDetectedAtUs(detectedAtUs)
        .setRound(round)
        .setVictimTask(victim.task)
        .setVictimJob(victim.job)
        .setVictimPlatform(victim.platform)
        .setVictimClass(victimClass)
        .setVictimProtected(victim.isProtected)
        .setVictimCpi(cpiN == 0 ? 0 : cpiSum / cpiN)
        .setVictimCpuUsage(victimCpu)
        .setCpiThreshold(threshold)
        .setSpecMean(victim.spec.mean())
        .setSpecStddev(victim.spec.stddev())
        .setWindowStartUs(start)
        .setWindowEndUs(detectedAtUs)
        .setSuspects(suspects)
        .setExcludedTasks(new ArrayList<>(excluded))
        .setDecision(v.decision())
        .setAntagonistTask(a == null ? null : a.getTask())
        .setAntagonistJob(a == null ? null : a.getJob())
        .setAntagonistClass(a == null ? null : a.getTaskClass())
        .setCorrelation(a == null ? null : a.getCorrelation())
        .setCapCpu(v.capCpu())
        .setCapDurationS(v.capDurationS())
        .setMachineCpuUtilization(machineCpu)
        .setSignal(signal.wireName())
        .build();
  }

  /**
   * A stable id: the same analysis replayed from a checkpoint gets the same id, so downstream
   * stores can deduplicate it.
   */
  public static String incidentId(String host, String victim, long detectedAtUs, int round) {
    return incidentId(Signal.CPI, host, victim, detectedAtUs, round);
  }

  /**
   * The id of an incident of {@code signal}: CPI's as it always was, another signal's prefixed with
   * its name and a colon ({@link Signal#ofIncident}), from a key that includes the signal.
   */
  public static String incidentId(
      Signal signal, String host, String victim, long detectedAtUs, int round) {
    String key = host + '\u0000' + victim + '\u0000' + detectedAtUs + '\u0000' + round;
    if (signal != Signal.CPI) {
      key += '\u0000' + signal.wireName();
    }
    return signal.incidentPrefix()
        + UUID.nameUUIDFromBytes(key.getBytes(StandardCharsets.UTF_8)).toString();
  }

  static TaskClass taskClass(TaskClass c) {
    return c == null ? TaskClass.UNKNOWN : c;
  }

  private static double meanUsage(TaskSeries s, long start, long end) {
    double sum = 0;
    int n = 0;
    for (int i = 0; i < s.size(); i++) {
      if (s.times[i] > start && s.times[i] <= end) {
        sum += s.cpu[i];
        n++;
      }
    }
    return n == 0 ? Double.NaN : sum / n;
  }

  private static double usageAt(TaskSeries s, long t) {
    for (int i = s.size() - 1; i >= 0; i--) {
      if (s.times[i] == t) {
        return s.cpu[i];
      }
    }
    return 0;
  }
}
