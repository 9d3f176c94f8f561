package org.cpi2.flink.correlate;

/**
 * How likely a correlation over a handful of samples is by chance (issue 35: every rule deciding on
 * a few samples states its error rate at that count and uses a test that controls it). A Pearson
 * correlation r of n pairs is tested with Student's t, t = r sqrt(df / (1 - r^2)), one-sided: under
 * no relation and independent normal samples, P(T >= t) is exactly the chance of an r this large.
 * Samples of a minute apart are not independent: a task's usage that bursts for minutes, a CPI that
 * steps up and stays, carry fewer independent values than samples. With the lag-1 autocorrelations
 * of the two series, rho_x and rho_y, the effective count is n (1 - rho_x rho_y) / (1 + rho_x
 * rho_y) (Bartlett's variance of r between two AR(1) series), never more than n; a series whose
 * changes are slow (a step, a long burst) leaves few, and the test asks for more. Of the victim's
 * CPI, the autocorrelation that counts is that of what the suspect's usage does not explain (the
 * residuals of the CPI's line on the usage, AntagonistCorrelation): its own slow moves, not those
 * it makes with the suspect. With too few effective samples no r is significant at the usual
 * levels: the rule abstains. SignificanceTest measures the error rate this gives at 5 to 20
 * samples, on independent and on autocorrelated unrelated series.
 */
public final class Significance {
  private Significance() {}

  /**
   * The effective number of independent pairs of {@code n} pairs of two series whose sample lag-1
   * autocorrelations are {@code rhoX} and {@code rhoY} (NaN counts as 0). A sample lag-1
   * autocorrelation of few values is biased low, by about (1 + 4 rho) / n (Kendall), which would
   * leave the test too bold on slow series: each is corrected first, to (n rho + 1) / (n - 4),
   * within [0, 0.99]. Only persistence counts: a negative lag-1 autocorrelation is an oscillation,
   * which the AR(1) model would extend to every lag (rho^k), and two series oscillating at
   * different rates do not move together more for it.
   */
  public static double effectivePairs(int n, double rhoX, double rhoY) {
    double p = unbiased(rhoX, n) * unbiased(rhoY, n);
    if (!(p > 0)) {
      return n;
    }
    p = Math.min(p, 0.99);
    return n * (1 - p) / (1 + p);
  }

  private static double unbiased(double rho, int n) {
    if (Double.isNaN(rho)) {
      return 0;
    }
    double r = n > 4 ? (n * rho + 1) / (n - 4) : rho;
    return Math.max(0, Math.min(0.99, r));
  }

  /**
   * The one-sided chance that a correlation (Pearson's, or a partial one) reaches {@code r} over
   * {@code effectivePairs} pairs when there is no relation; {@code lost} degrees of freedom are
   * those of the means and of each variable held fixed (2 for Pearson's r, 3 for a partial r with
   * one variable held). 1 when the degrees of freedom are under 1 or r is not positive.
   */
  public static double pValue(double r, double effectivePairs, int lost) {
    double df = effectivePairs - lost;
    if (!(r > 0) || df < 1) {
      return 1;
    }
    if (r >= 1) {
      return 0;
    }
    double t = r * Math.sqrt(df / (1 - r * r));
    return studentTail(t, df);
  }

  /** P(T >= t) for Student's t with {@code df} degrees of freedom, t >= 0. */
  public static double studentTail(double t, double df) {
    if (t <= 0) {
      return 0.5;
    }
    return 0.5 * regularizedBeta(df / (df + t * t), df / 2, 0.5);
  }

  /** I_x(a, b), the regularized incomplete beta function (Numerical Recipes 6.4). */
  static double regularizedBeta(double x, double a, double b) {
    if (x <= 0) {
      return 0;
    }
    if (x >= 1) {
      return 1;
    }
    double front =
        Math.exp(
            logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log1p(-x));
    if (x < (a + 1) / (a + b + 2)) {
      return front * betaFraction(x, a, b) / a;
    }
    return 1 - front * betaFraction(1 - x, b, a) / b;
  }

  /** The continued fraction of I_x(a, b), modified Lentz's method. */
  private static double betaFraction(double x, double a, double b) {
    double tiny = 1e-300;
    double c = 1;
    double d = 1 - (a + b) * x / (a + 1);
    d = 1 / (Math.abs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 300; m++) {
      int m2 = 2 * m;
      double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
      d = 1 + aa * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + aa / c;
      c = Math.abs(c) < tiny ? tiny : c;
      h *= d * c;
      aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
      d = 1 + aa * d;
      d = 1 / (Math.abs(d) < tiny ? tiny : d);
      c = 1 + aa / c;
      c = Math.abs(c) < tiny ? tiny : c;
      double del = d * c;
      h *= del;
      if (Math.abs(del - 1) < 1e-12) {
        break;
      }
    }
    return h;
  }

  /** ln Gamma(x), Lanczos (g = 7, 9 terms), for x > 0. */
  static double logGamma(double x) {
    if (x < 0.5) {
      return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
    }
    double[] g = {
      0.99999999999980993,
      676.5203681218851,
      -1259.1392167224028,
      771.32342877765313,
      -176.61502916214059,
      12.507343278686905,
      -0.13857109526572012,
      9.9843695780195716e-6,
      1.5056327351493116e-7
    };
    double y = x - 1;
    double a = g[0];
    double t = y + 7.5;
    for (int i = 1; i < 9; i++) {
      a += g[i] / (y + i);
    }
    return 0.5 * Math.log(2 * Math.PI) + (y + 0.5) * Math.log(t) - t + Math.log(a);
  }
}
