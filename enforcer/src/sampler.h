/* sampler: a bound on repeated reports (dead letters, refusals of stale or duplicate messages):
 * at most per_min a minute per class of reason; the ones left out are counted, and the count is
 * handed back when the class's minute is over, for one log line. */
#ifndef CPI2_ENFORCER_SAMPLER_H
#define CPI2_ENFORCER_SAMPLER_H

#include <stdbool.h>
#include <stdint.h>

#define SAMPLER_SLOTS 32
#define SAMPLER_KEY 48

struct sampler {
	int per_min; /* <= 0: no bound */
	struct sampler_slot {
		char key[SAMPLER_KEY];
		int64_t start_us;
		int sent;
		long suppressed;
	} slot[SAMPLER_SLOTS];
};

/* The class of a reason: its text up to the first digit (so "at byte 17" and "at byte 18" are
 * one class), at most SAMPLER_KEY - 1 bytes. */
void sampler_class(const char *reason, char *key);

/* May a report of class key go out at now_us? The reports left out are counted. */
bool sampler_allow(struct sampler *s, const char *key, int64_t now_us);

/* A class whose minute is over with reports left out: returns 1 with its key (SAMPLER_KEY
 * bytes) and their count (then zeroed), or 0 when there is none. Call until it returns 0. */
int sampler_due(struct sampler *s, int64_t now_us, char *key, long *suppressed);

#endif
