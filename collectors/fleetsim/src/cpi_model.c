#include "cpi_model.h"

#include <math.h>

#define SECONDS_PER_DAY 86400.0
#define EULER_GAMMA 0.5772156649015329

void cpi_model_init(struct cpi_model *m, double mean, double sd, double shape, double diurnal_cv,
		    double diurnal_phase)
{
	m->mean = mean;
	m->rel_sd = mean > 0 ? sd / mean : 0;
	m->shape = shape;
	m->diurnal_amp = diurnal_cv * sqrt(2.0); /* a sine's standard deviation is amp / sqrt(2) */
	m->diurnal_phase = diurnal_phase;
	if (fabs(shape) < 1e-9) {
		m->gev_mean = EULER_GAMMA;
		m->gev_sd = M_PI / sqrt(6.0);
	} else {
		double g1 = tgamma(1.0 - shape), g2 = tgamma(1.0 - 2.0 * shape);
		m->gev_mean = (g1 - 1.0) / shape;
		m->gev_sd = sqrt(g2 - g1 * g1) / fabs(shape);
	}
}

double cpi_model_baseline(const struct cpi_model *m, double t_s)
{
	double day_angle = 2.0 * M_PI * fmod(t_s, SECONDS_PER_DAY) / SECONDS_PER_DAY;
	return m->mean * (1.0 + m->diurnal_amp * sin(day_angle + m->diurnal_phase));
}

double cpi_model_sample(const struct cpi_model *m, struct rng *r, double t_s, double interference,
			double self_factor)
{
	double z =
	    (rng_gev(r, m->shape) - m->gev_mean) / m->gev_sd; /* mean 0, sd 1, skewed right */
	double noise = 1.0 + m->rel_sd * z;
	double cpi;

	if (noise < 0.2) /* the left tail of a wide spread must not reach zero CPI */
		noise = 0.2;
	cpi = cpi_model_baseline(m, t_s) * (1.0 + interference) * self_factor * noise;
	return cpi;
}
