package org.cpi2.flink.judge;

import org.cpi2.schema.Verdict;

/**
 * Paper section 7.2: relative CPI = mean victim CPI while the antagonist is capped / mean CPI
 * before the cap. A drop by more than the spec's σ is a true positive, a rise by more than σ a
 * false positive, anything else noise; with no samples before or during, inconclusive.
 */
public final class OutcomeJudgement {
  private OutcomeJudgement() {}

  /** The judged figures of one cap. Means are NaN when their side had no samples. */
  public record Result(
      double cpiBefore,
      double cpiDuring,
      double relative,
      int before,
      int during,
      Verdict verdict) {}

  public static Result judge(double[] before, double[] during, double sigma) {
    double b = mean(before);
    double d = mean(during);
    if (Double.isNaN(b) || Double.isNaN(d) || b <= 0) {
      return new Result(b, d, Double.NaN, count(before), count(during), Verdict.INCONCLUSIVE);
    }
    Verdict v;
    if (d < b - sigma) {
      v = Verdict.TRUE_POSITIVE;
    } else if (d > b + sigma) {
      v = Verdict.FALSE_POSITIVE;
    } else {
      v = Verdict.NOISE;
    }
    return new Result(b, d, d / b, count(before), count(during), v);
  }

  private static double mean(double[] xs) {
    double sum = 0;
    int n = 0;
    for (double x : xs) {
      if (Double.isFinite(x)) {
        sum += x;
        n++;
      }
    }
    return n == 0 ? Double.NaN : sum / n;
  }

  private static int count(double[] xs) {
    int n = 0;
    for (double x : xs) {
      if (Double.isFinite(x)) {
        n++;
      }
    }
    return n;
  }
}
