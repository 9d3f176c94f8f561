package org.cpi2.flink.correlate;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.schema.Decision;
import org.cpi2.schema.Suspect;
import org.cpi2.schema.TaskClass;

/**
 * Paper section 5: a latency-sensitive or explicitly protected victim with a usable spec is
 * protected by hard-capping the highest-correlated batch or best-effort suspect whose correlation
 * reaches the threshold (under PROJECT, the threshold times the window's ceiling, {@link
 * #threshold(double)}; best-effort to {@code capBestEffort}, other batch to {@code capBatch}) and
 * that stands out: its lift reaches {@code minLift} or its co-moving CPU reaches {@code
 * minComovingCpu}. When the victim's CPI stays above its threshold through the window, every
 * tenant's correlation is about the same, and only a suspect whose usage rose and fell with the
 * victim's CPI is named ({@link AntagonistCorrelation.Measure}): in shape (the lift), or in
 * CPU-sec/sec (the co-moving CPU, which a big antagonist ramping slowly, or whose own jitter shows
 * in the victim's CPI, reaches while small tenants cannot). Latency-sensitive suspects are never
 * capped automatically; suspects of UNKNOWN class are not capped either (their class is not known
 * to be batch). Otherwise the decision says why not.
 *
 * <p>That is the {@link Rules#PROJECT} policy. {@link Rules#PAPER} is the paper's own: no stand-out
 * gate, the highest-correlated batch or best-effort suspect at or above the threshold is capped.
 */
public final class DecisionPolicy {
  /** The named decision policies ({@link Cpi2Options#CORRELATION_POLICY}). */
  public enum Rules {
    /** The paper's rules and the stand-out gate (lift or co-moving CPU). */
    PROJECT,
    /** The paper's rules alone. */
    PAPER;

    /** The policy of an option value ({@code project}, {@code paper}). */
    public static Rules parse(String name) {
      for (Rules r : values()) {
        if (r.optionName().equals(name)) {
          return r;
        }
      }
      throw new IllegalArgumentException(
          "unknown " + Cpi2Options.CORRELATION_POLICY + " " + name + "; known: project, paper");
    }

    /** Its name as an option value. */
    public String optionName() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  private final Rules rules;
  private final double threshold;
  private final double minLift;
  private final double minComovingCpu;
  private final double minCpuUsage;
  private final double capBatch;
  private final double capBestEffort;
  private final int capDurationS;
  private double selfInflictedR;
  private double minBeyondOwnUsage;
  private double standOutP = 1;
  private boolean scaleByCeiling = true;

  /** A policy of {@code rules}; {@code minLift} and {@code minComovingCpu} serve only PROJECT. */
  public DecisionPolicy(
      Rules rules,
      double threshold,
      double minLift,
      double minComovingCpu,
      double minCpuUsage,
      double capBatch,
      double capBestEffort,
      int capDurationS) {
    this.rules = rules;
    this.threshold = threshold;
    this.minLift = minLift;
    this.minComovingCpu = minComovingCpu;
    this.minCpuUsage = minCpuUsage;
    this.capBatch = capBatch;
    this.capBestEffort = capBestEffort;
    this.capDurationS = capDurationS;
  }

  /**
   * The policy the options name, with their threshold, stand-out gate, self-inflicted rule, CPU
   * floor and caps.
   */
  public static DecisionPolicy of(Cpi2Options o) {
    return withOptions(o)
        .withSelfInflicted(
            o.getDouble(Cpi2Options.CORRELATION_SELF_INFLICTED_R),
            o.getDouble(Cpi2Options.CORRELATION_MIN_BEYOND_OWN_USAGE))
        .withStandOutP(o.getDouble(Cpi2Options.CORRELATION_STAND_OUT_P))
        .withCeiling(Boolean.parseBoolean(o.get(Cpi2Options.CORRELATION_SCALE_BY_CEILING)));
  }

  /**
   * This policy with the stand-out gate's test (PROJECT only): a suspect stands out only if its
   * chance ({@link Suspect#getChance}, {@link Significance}) is at most {@code p} divided by the
   * eligible suspects at or above the bar (Bonferroni: at most {@code p} per analysis that any of
   * them stands out by chance). 1 turns the test off.
   */
  public DecisionPolicy withStandOutP(double p) {
    this.standOutP = p;
    return this;
  }

  /**
   * This policy with or without the window's ceiling (PROJECT only, {@link #threshold(double)}):
   * off, the bar is the paper's threshold.
   */
  public DecisionPolicy withCeiling(boolean on) {
    this.scaleByCeiling = on;
    return this;
  }

  private static DecisionPolicy withOptions(Cpi2Options o) {
    return new DecisionPolicy(
        Rules.parse(o.get(Cpi2Options.CORRELATION_POLICY)),
        o.getDouble(Cpi2Options.CORRELATION_THRESHOLD),
        o.getDouble(Cpi2Options.CORRELATION_MIN_LIFT),
        o.getDouble(Cpi2Options.CORRELATION_MIN_COMOVING_CPU),
        o.getDouble(Cpi2Options.MIN_CPU_USAGE),
        o.getDouble(Cpi2Options.CAP_BATCH),
        o.getDouble(Cpi2Options.CAP_BEST_EFFORT),
        o.getInt(Cpi2Options.CAP_DURATION_S));
  }

  /**
   * This policy with the self-inflicted rule (PROJECT only): when the victim's CPI falls with its
   * own CPU usage at Pearson r at or below {@code -selfInflictedR} over the window, a suspect
   * stands out only if its usage still correlates at least {@code minBeyondOwnUsage} with the
   * victim's CPI once the victim's own usage is accounted for ({@link
   * AntagonistCorrelation.Measure#beyondOwnUsage}). 0 turns it off.
   */
  public DecisionPolicy withSelfInflicted(double selfInflictedR, double minBeyondOwnUsage) {
    this.selfInflictedR = selfInflictedR;
    this.minBeyondOwnUsage = minBeyondOwnUsage;
    return this;
  }

  /**
   * Whether a victim whose CPI moves with its own usage at {@code ownUsageR} has self-inflicted
   * spikes to discount (the suspects' {@link AntagonistCorrelation.Measure#beyondOwnUsage} is then
   * asked).
   */
  public boolean selfInflicted(double ownUsageR) {
    return rules == Rules.PROJECT && selfInflictedR > 0 && ownUsageR <= -selfInflictedR;
  }

  /** Whether a suspect's correlation beyond the victim's own usage leaves it a suspect. */
  public boolean explainsBeyondOwnUsage(double partialR) {
    return partialR >= minBeyondOwnUsage;
  }

  /** Which rules it applies. */
  public Rules rules() {
    return rules;
  }

  /** What to do; {@code antagonist} is set only with THROTTLE. */
  public record Verdict(
      Decision decision, Suspect antagonist, Double capCpu, Integer capDurationS) {}

  /**
   * {@code ranked} is sorted by correlation, highest first. {@code victimPeakCpu} is the victim's
   * highest CPU usage among the window's samples: below the CPU floor, no sample of the window can
   * be judged (paper 4.1 and 6.1 case 3 ignore low-usage samples; there is no gate on the victim's
   * mean usage, which left a victim near the floor undefended).
   */
  public Verdict decide(
      TaskClass victimClass,
      boolean victimProtected,
      boolean specUsable,
      double victimPeakCpu,
      List<Suspect> ranked) {
    return decide(
        victimClass, victimProtected, specUsable, false, victimPeakCpu, ranked, Set.of(), 1);
  }

  /**
   * As {@link #decide(TaskClass, boolean, boolean, double, List)}; with {@code jobShifted} the
   * victim's anomaly is its job's shift (JOB_WIDE_SHIFT: no cap, whatever the suspects); the
   * suspects named in {@code explainedByVictim} follow the victim's CPI no further than its own
   * usage does (the self-inflicted rule): under PROJECT they do not stand out. With the window's
   * {@code ceiling} ({@link AntagonistCorrelation#ceiling}): under PROJECT a suspect's correlation
   * is judged against the threshold times the ceiling, that is, as a share of the highest
   * correlation the victim's CPI lets any suspect reach. The paper's threshold holds as it is for a
   * victim whose CPI is far above its threshold, where the ceiling nears 1, and a victim whose CPI
   * rose less (the ceiling under the threshold) can still be defended; the stand-out gate still
   * asks every suspect to have risen and fallen with the CPI.
   */
  public Verdict decide(
      TaskClass victimClass,
      boolean victimProtected,
      boolean specUsable,
      boolean jobShifted,
      double victimPeakCpu,
      List<Suspect> ranked,
      Set<String> explainedByVictim,
      double ceiling) {
    if (!specUsable) {
      return none(Decision.SPEC_NOT_USABLE);
    }
    if (jobShifted) {
      return none(Decision.JOB_WIDE_SHIFT); // the spec moved, not a neighbour (JobShift)
    }
    if (victimClass != TaskClass.LATENCY_SENSITIVE && !victimProtected) {
      return none(Decision.VICTIM_NOT_PROTECTED);
    }
    if (victimPeakCpu < minCpuUsage) {
      return none(Decision.VICTIM_CPU_TOO_LOW);
    }
    if (ranked.isEmpty()) {
      return none(Decision.NO_SUSPECTS);
    }
    double bar = threshold(ceiling);
    int tested = 0;
    for (Suspect s : ranked) {
      if (s.getCorrelation() < bar) {
        break;
      }
      tested += capOf(s) != null ? 1 : 0;
    }
    double maxChance = standOutP / Math.max(1, tested);
    boolean anyAbove = false;
    boolean anyEligible = false;
    for (Suspect s : ranked) {
      if (s.getCorrelation() < bar) {
        break;
      }
      anyAbove = true;
      Double cap = capOf(s);
      if (cap == null) {
        continue;
      }
      anyEligible = true;
      if (standsOut(s, maxChance) && !explainedByVictim.contains(s.getTask().toString())) {
        return new Verdict(Decision.THROTTLE, s, cap, capDurationS);
      }
    }
    if (anyEligible) {
      return none(Decision.NO_SUSPECT_STANDS_OUT);
    }
    return none(
        anyAbove ? Decision.ONLY_LATENCY_SENSITIVE_SUSPECTS : Decision.NO_SUSPECT_ABOVE_THRESHOLD);
  }

  /**
   * The correlation a suspect must reach, given the window's ceiling (see {@link #decide}): scaled
   * by it only under PROJECT with {@link #withCeiling} on.
   */
  public double threshold(double ceiling) {
    return rules == Rules.PROJECT && scaleByCeiling && ceiling > 0 && ceiling < 1
        ? threshold * ceiling
        : threshold;
  }

  /** The cap of a batch or best-effort suspect; null for any other class (never capped). */
  private Double capOf(Suspect s) {
    return s.getTaskClass() == TaskClass.BEST_EFFORT
        ? Double.valueOf(capBestEffort)
        : s.getTaskClass() == TaskClass.BATCH ? Double.valueOf(capBatch) : null;
  }

  /**
   * PROJECT: its lift or co-moving CPU is large enough, and its chance at most {@code maxChance} (a
   * suspect without a chance, from a writer before it, passes that test).
   */
  private boolean standsOut(Suspect s, double maxChance) {
    if (rules == Rules.PAPER) {
      return true;
    }
    boolean large =
        (s.getLift() != null && s.getLift() >= minLift)
            || (s.getComovingCpu() != null && s.getComovingCpu() >= minComovingCpu);
    return large && (s.getChance() == null || s.getChance() <= maxChance);
  }

  private static Verdict none(Decision d) {
    return new Verdict(d, null, null, null);
  }
}
