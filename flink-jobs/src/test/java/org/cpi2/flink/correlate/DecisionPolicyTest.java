package org.cpi2.flink.correlate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.cpi2.flink.Cpi2Options;
import org.cpi2.schema.Decision;
import org.cpi2.schema.Suspect;
import org.cpi2.schema.TaskClass;
import org.junit.jupiter.api.Test;

class DecisionPolicyTest {
  private final DecisionPolicy policy =
      new DecisionPolicy(DecisionPolicy.Rules.PROJECT, 0.35, 0.05, 0.2, 0.25, 0.1, 0.01, 300);

  private static Suspect s(String task, TaskClass c, double corr) {
    return s(task, c, corr, 0.2);
  }

  private static Suspect s(String task, TaskClass c, double corr, Double lift) {
    return s(task, c, corr, lift, null);
  }

  private static Suspect s(String task, TaskClass c, double corr, Double lift, Double comoving) {
    return Suspect.newBuilder()
        .setTask(task)
        .setJob("j")
        .setTaskClass(c)
        .setCorrelation(corr)
        .setLift(lift)
        .setComovingCpu(comoving)
        .setCpuUsage(1)
        .build();
  }

  private Decision decide(
      TaskClass victim, boolean prot, boolean usable, double cpu, List<Suspect> ranked) {
    return policy.decide(victim, prot, usable, cpu, ranked).decision();
  }

  @Test
  void batchAntagonistOfLatencySensitiveVictimGetsBatchCap() {
    DecisionPolicy.Verdict v =
        policy.decide(
            TaskClass.LATENCY_SENSITIVE, false, true, 1, List.of(s("a", TaskClass.BATCH, 0.35)));
    assertEquals(Decision.THROTTLE, v.decision());
    assertEquals(0.1, v.capCpu(), 0);
    assertEquals(300, v.capDurationS());
  }

  @Test
  void protectedBatchVictimIsDefended() {
    assertEquals(
        Decision.THROTTLE,
        decide(TaskClass.BATCH, true, true, 1, List.of(s("a", TaskClass.BEST_EFFORT, 0.9))));
    assertEquals(
        Decision.VICTIM_NOT_PROTECTED,
        decide(TaskClass.BATCH, false, true, 1, List.of(s("a", TaskClass.BEST_EFFORT, 0.9))));
  }

  @Test
  void reasonsForDoingNothing() {
    List<Suspect> good = List.of(s("a", TaskClass.BATCH, 0.9));
    assertEquals(
        Decision.SPEC_NOT_USABLE, decide(TaskClass.LATENCY_SENSITIVE, false, false, 1, good));
    assertEquals(
        Decision.VICTIM_CPU_TOO_LOW, decide(TaskClass.LATENCY_SENSITIVE, false, true, 0.24, good));
    assertEquals(
        Decision.NO_SUSPECTS, decide(TaskClass.LATENCY_SENSITIVE, false, true, 1, List.of()));
    assertEquals(
        Decision.NO_SUSPECT_ABOVE_THRESHOLD,
        decide(
            TaskClass.LATENCY_SENSITIVE, false, true, 1, List.of(s("a", TaskClass.BATCH, 0.3499))));
    assertEquals(
        Decision.ONLY_LATENCY_SENSITIVE_SUSPECTS,
        decide(
            TaskClass.LATENCY_SENSITIVE,
            false,
            true,
            1,
            List.of(
                s("a", TaskClass.LATENCY_SENSITIVE, 0.8),
                s("u", TaskClass.UNKNOWN, 0.5),
                s("b", TaskClass.BATCH, 0.2))));
  }

  @Test
  void onlyASuspectThatStandsOutIsCapped() {
    // Above the threshold, eligible, but with the lift of a bystander: nobody is capped.
    assertEquals(
        Decision.NO_SUSPECT_STANDS_OUT,
        decide(
            TaskClass.LATENCY_SENSITIVE,
            false,
            true,
            1,
            List.of(
                s("a", TaskClass.BATCH, 0.6, 0.0499),
                s("b", TaskClass.BEST_EFFORT, 0.55, null),
                s("c", TaskClass.BATCH, 0.2))));
    // The first eligible suspect that stands out is named, below one that does not.
    DecisionPolicy.Verdict v =
        policy.decide(
            TaskClass.LATENCY_SENSITIVE,
            false,
            true,
            1,
            List.of(
                s("ls", TaskClass.LATENCY_SENSITIVE, 0.7, 0.3),
                s("a", TaskClass.BATCH, 0.6, 0.01),
                s("b", TaskClass.BEST_EFFORT, 0.5, 0.05)));
    assertEquals(Decision.THROTTLE, v.decision());
    assertEquals("b", v.antagonist().getTask());
    assertEquals(0.01, v.capCpu(), 0);
  }

  @Test
  void aSuspectStandsOutByItsLiftOrByItsCoMovingCpu() {
    // A big antagonist ramping slowly: its lift is a bystander's, 0.3 of its CPU moves with the
    // CPI.
    DecisionPolicy.Verdict v =
        policy.decide(
            TaskClass.LATENCY_SENSITIVE,
            false,
            true,
            1,
            List.of(
                s("tenant", TaskClass.BATCH, 0.47, 0.001, 0.05),
                s("sim", TaskClass.BATCH, 0.46, 0.0, 0.3)));
    assertEquals(Decision.THROTTLE, v.decision());
    assertEquals("sim", v.antagonist().getTask());
    // Neither enough lift nor enough co-moving CPU, or none known (writers before v3): nobody.
    assertEquals(
        Decision.NO_SUSPECT_STANDS_OUT,
        decide(
            TaskClass.LATENCY_SENSITIVE,
            false,
            true,
            1,
            List.of(
                s("a", TaskClass.BATCH, 0.6, 0.01, 0.1999),
                s("b", TaskClass.BATCH, 0.5, 0.0, null))));
    // Co-moving CPU does not open the correlation gate.
    assertEquals(
        Decision.NO_SUSPECT_ABOVE_THRESHOLD,
        decide(
            TaskClass.LATENCY_SENSITIVE,
            false,
            true,
            1,
            List.of(s("a", TaskClass.BATCH, 0.34, 0.0, 2.0))));
  }

  @Test
  void thePapersPolicyCapsTheTopBatchSuspectAboveTheThresholdWithoutTheStandOutGate() {
    DecisionPolicy paper =
        DecisionPolicy.of(Cpi2Options.defaults().with("correlation.policy", "paper"));
    assertEquals(DecisionPolicy.Rules.PAPER, paper.rules());
    List<Suspect> steady =
        List.of(
            s("ls", TaskClass.LATENCY_SENSITIVE, 0.7, 0.3),
            s("a", TaskClass.BATCH, 0.6, 0.0, 0.0),
            s("b", TaskClass.BEST_EFFORT, 0.5, 0.2));
    DecisionPolicy.Verdict v = paper.decide(TaskClass.LATENCY_SENSITIVE, false, true, 1, steady);
    assertEquals(Decision.THROTTLE, v.decision());
    assertEquals("a", v.antagonist().getTask());
    assertEquals(0.1, v.capCpu(), 0);
    // The project's policy wants the steady suspect to stand out and names the one that does.
    assertEquals(
        "b",
        policy.decide(TaskClass.LATENCY_SENSITIVE, false, true, 1, steady).antagonist().getTask());
    // The threshold, the latency-sensitive and UNKNOWN suspects hold under both.
    assertEquals(
        Decision.NO_SUSPECT_ABOVE_THRESHOLD,
        paper
            .decide(
                TaskClass.LATENCY_SENSITIVE,
                false,
                true,
                1,
                List.of(s("a", TaskClass.BATCH, 0.3499, 1.0, 1.0)))
            .decision());
    assertEquals(
        Decision.ONLY_LATENCY_SENSITIVE_SUSPECTS,
        paper
            .decide(
                TaskClass.LATENCY_SENSITIVE,
                false,
                true,
                1,
                List.of(s("l", TaskClass.LATENCY_SENSITIVE, 0.9), s("u", TaskClass.UNKNOWN, 0.8)))
            .decision());
  }

  @Test
  void anUnknownPolicyIsRefused() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> Cpi2Options.fromArgs(new String[] {"--correlation.policy", "papers"}));
    assertTrue(e.getMessage().contains("project, paper"));
  }
}
