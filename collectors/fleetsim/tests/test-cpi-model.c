/* The CPI model: mean and spread as configured, right skew, diurnal drift of the configured
 * coefficient of variation, interference scaling. */
#include <math.h>
#include <stdlib.h>

#include "../src/cpi_model.h"
#include "check.h"

struct moments {
	double mean, sd, skew;
};

static struct moments sample_moments(const struct cpi_model *m, struct rng *r, double t_s,
				     double interference, int n)
{
	double s1 = 0, s2 = 0, s3 = 0, *x = malloc((size_t)n * sizeof(double));
	struct moments mo;

	for (int i = 0; i < n; i++) {
		x[i] = cpi_model_sample(m, r, t_s, interference, 1.0);
		s1 += x[i];
	}
	mo.mean = s1 / n;
	for (int i = 0; i < n; i++) {
		double d = x[i] - mo.mean;
		s2 += d * d;
		s3 += d * d * d;
	}
	mo.sd = sqrt(s2 / n);
	mo.skew = (s3 / n) / (mo.sd * mo.sd * mo.sd);
	free(x);
	return mo;
}

static void test_spread_and_skew(void)
{
	static const struct {
		double mean, sd, shape;
	} jobs[] = {{0.88, 0.09, 0.0}, {1.36, 0.26, 0.2}, {2.03, 0.20, 0.1}}; /* paper Table 1 */
	struct rng r;

	rng_seed(&r, 42);
	for (unsigned i = 0; i < sizeof(jobs) / sizeof(jobs[0]); i++) {
		struct cpi_model m;
		cpi_model_init(&m, jobs[i].mean, jobs[i].sd, jobs[i].shape, 0.0, 0.0);
		struct moments mo = sample_moments(&m, &r, 0, 0, 200000);
		CHECK(fabs(mo.mean - jobs[i].mean) < 0.01 * jobs[i].mean, "mean %f, want %f",
		      mo.mean, jobs[i].mean);
		CHECK(fabs(mo.sd - jobs[i].sd) < 0.05 * jobs[i].sd, "sd %f, want %f", mo.sd,
		      jobs[i].sd);
		CHECK(mo.skew > 0.5, "skew %f, want right-skewed (> 0.5)", mo.skew);
	}
}

static void test_more_shape_more_skew(void)
{
	struct cpi_model a, b;
	struct rng r;

	rng_seed(&r, 7);
	cpi_model_init(&a, 1.0, 0.1, 0.0, 0, 0);
	cpi_model_init(&b, 1.0, 0.1, 0.3, 0, 0);
	double ska = sample_moments(&a, &r, 0, 0, 200000).skew;
	double skb = sample_moments(&b, &r, 0, 0, 200000).skew;
	CHECK(skb > ska + 0.5, "skew with shape 0.3 (%f) must exceed Gumbel's (%f)", skb, ska);
}

static void test_diurnal_drift(void)
{
	struct cpi_model m;
	double s1 = 0, s2 = 0, lo = 1e9, hi = 0;
	int n = 1440;

	cpi_model_init(&m, 1.0, 0.1, 0.1, 0.04, 1.0);
	for (int i = 0; i < n; i++) { /* one value a minute over a day */
		double b = cpi_model_baseline(&m, 1700000000.0 + 60.0 * i);
		s1 += b, s2 += b * b;
		lo = b < lo ? b : lo, hi = b > hi ? b : hi;
	}
	double mean = s1 / n, cv = sqrt(s2 / n - mean * mean) / mean;
	CHECK(fabs(mean - 1.0) < 0.001, "daily mean %f, want 1.0", mean);
	CHECK(fabs(cv - 0.04) < 0.002, "diurnal coefficient of variation %f, want 0.04", cv);
	CHECK(hi - lo > 0.1, "daily swing %f too small", hi - lo);
	/* the drift is slow: one minute apart, the baseline moves less than 0.1% */
	double d =
	    fabs(cpi_model_baseline(&m, 1700000060.0) - cpi_model_baseline(&m, 1700000000.0));
	CHECK(d < 0.001, "baseline moved %f in a minute", d);

	/* and it shows in samples: means at the daily peak and trough differ by ~2 amplitudes */
	struct rng r;
	rng_seed(&r, 3);
	double peak_t = 0, trough_t = 0, best = 0, worst = 9;
	for (int i = 0; i < n; i++) {
		double t = 1700000000.0 + 60.0 * i, b = cpi_model_baseline(&m, t);
		if (b > best)
			best = b, peak_t = t;
		if (b < worst)
			worst = b, trough_t = t;
	}
	double mp = sample_moments(&m, &r, peak_t, 0, 50000).mean;
	double mt = sample_moments(&m, &r, trough_t, 0, 50000).mean;
	CHECK(mp / mt > 1.09 && mp / mt < 1.14, "peak/trough sample means %f / %f", mp, mt);
}

static void test_interference(void)
{
	struct cpi_model m;
	struct rng r;

	rng_seed(&r, 5);
	cpi_model_init(&m, 1.2, 0.1, 0.1, 0.0, 0.0);
	double base = sample_moments(&m, &r, 0, 0, 50000).mean;
	double hurt = sample_moments(&m, &r, 0, 1.0, 50000).mean;
	CHECK(fabs(hurt / base - 2.0) < 0.02, "interference 1.0 gives x%f, want x2", hurt / base);
}

int main(void)
{
	test_spread_and_skew();
	test_more_shape_more_skew();
	test_diurnal_drift();
	test_interference();
	printf("test-cpi-model: ok\n");
	return 0;
}
