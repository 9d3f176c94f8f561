/* sampler: see sampler.h. */
#include "sampler.h"

#include <stdio.h>
#include <string.h>

#define MINUTE_US (60LL * 1000000)

void sampler_class(const char *reason, char *key)
{
	size_t i;

	for (i = 0; reason[i] && i < SAMPLER_KEY - 1 && (reason[i] < '0' || reason[i] > '9'); i++)
		key[i] = reason[i];
	key[i] = '\0';
}

/* A slot's minute is over: it starts again (its left-out count stays for sampler_due). */
static bool minute_over(const struct sampler_slot *slot, int64_t now_us)
{
	return now_us - slot->start_us >= MINUTE_US || now_us < slot->start_us;
}

bool sampler_allow(struct sampler *s, const char *key, int64_t now_us)
{
	struct sampler_slot *slot = NULL, *oldest = &s->slot[0];

	if (s->per_min <= 0)
		return true;
	for (int i = 0; i < SAMPLER_SLOTS; i++) {
		if (s->slot[i].start_us && strncmp(s->slot[i].key, key, SAMPLER_KEY - 1) == 0) {
			slot = &s->slot[i];
			break;
		}
		if (s->slot[i].start_us < oldest->start_us)
			oldest = &s->slot[i];
	}
	if (!slot) {
		/* a new class takes the slot unused longest; what it left out is lost from the log
		 * only if 32 classes came within its minute */
		slot = oldest;
		snprintf(slot->key, sizeof(slot->key), "%s", key);
		slot->start_us = now_us;
		slot->sent = 0;
		slot->suppressed = 0;
	} else if (minute_over(slot, now_us) && slot->suppressed == 0) {
		slot->start_us = now_us;
		slot->sent = 0;
	}
	if (slot->sent < s->per_min && !minute_over(slot, now_us)) {
		slot->sent++;
		return true;
	}
	slot->suppressed++;
	return false;
}

int sampler_due(struct sampler *s, int64_t now_us, char *key, long *suppressed)
{
	for (int i = 0; i < SAMPLER_SLOTS; i++) {
		struct sampler_slot *slot = &s->slot[i];

		if (slot->start_us && slot->suppressed > 0 && minute_over(slot, now_us)) {
			snprintf(key, SAMPLER_KEY, "%s", slot->key);
			*suppressed = slot->suppressed;
			slot->suppressed = 0;
			slot->start_us = now_us;
			slot->sent = 0;
			return 1;
		}
	}
	return 0;
}
