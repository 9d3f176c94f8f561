/* A job's CPI on one platform: right-skewed (GEV) spread around a mean with a slow diurnal
 * drift (paper figures 5 and 7), raised by interference from neighbours. */
#ifndef FLEETSIM_CPI_MODEL_H
#define FLEETSIM_CPI_MODEL_H

#include "rng.h"

struct cpi_model {
	double mean;	    /* CPI without interference, averaged over a day */
	double rel_sd;	    /* standard deviation / mean of one sample */
	double shape;	    /* GEV shape xi, 0 <= xi < 0.45 (0 = Gumbel); > 0 skews further right */
	double diurnal_amp; /* amplitude of the daily sine, = coefficient of variation * sqrt(2) */
	double diurnal_phase; /* radians */
	double gev_mean;      /* mean and standard deviation of GEV(0, 1, shape): to standardise */
	double gev_sd;
};

/* Sets up a model; diurnal_cv is the coefficient of variation of the daily drift (paper: ~0.04). */
void cpi_model_init(struct cpi_model *m, double mean, double sd, double shape, double diurnal_cv,
		    double diurnal_phase);
/* Mean CPI at simulated time t (seconds since the epoch), without interference or noise. */
double cpi_model_baseline(const struct cpi_model *m, double t_s);
/* One CPI sample: baseline(t) * (1 + interference) * self_factor, with multiplicative GEV noise. */
double cpi_model_sample(const struct cpi_model *m, struct rng *r, double t_s, double interference,
			double self_factor);

#endif
