/* Deterministic random numbers for the fleet simulator (xoshiro256**, seeded by splitmix64). */
#ifndef FLEETSIM_RNG_H
#define FLEETSIM_RNG_H

#include <stdint.h>

struct rng {
	uint64_t s[4];
};

/* Seeds the generator; the same seed always gives the same stream. */
void rng_seed(struct rng *r, uint64_t seed);
/* Next 64 random bits. */
uint64_t rng_next(struct rng *r);
/* Uniform double in the open interval (0, 1). */
double rng_uniform(struct rng *r);
/* Standard normal deviate (Box-Muller, one value per call). */
double rng_normal(struct rng *r);
/* Generalised extreme value deviate with location 0, scale 1 and shape xi (inverse CDF). */
double rng_gev(struct rng *r, double xi);
/* Mixes several numbers into one seed, so sub-streams (per host, per task) are independent. */
uint64_t rng_mix(uint64_t a, uint64_t b);

#endif
