/* The host enforcer of the enforcer's tests: "host-1"-like, on a fake tree, system.slice
 * protected, 250 ms periods, 300 s default caps, the 0.01 CPU floor, no rate limit; and an
 * incident for it. */
#ifndef CPI2_ENFORCER_TESTHOST_H
#define CPI2_ENFORCER_TESTHOST_H
#include <stdio.h>
#include <string.h>

#include "../src/decide.h"

static inline void test_host_init(struct host_enforcer *h, const char *host, const char *root,
				  const char *state, const char *prot, bool *cluster_off)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->host, sizeof(h->host), "%s", host);
	h->policy.root = root;
	h->policy.protected_names[0] = "system.slice";
	h->policy.n_protected = 1;
	h->caps.max_caps = 3;
	h->caps.state_path = state;
	h->caps.policy = &h->policy;
	h->period_us = 250000;
	h->default_duration_s = 300;
	h->default_cap_cpu = 0.1;
	h->min_cap_cpu = 0.01;
	decide_bucket_init(&h->new_caps, 0, 1); /* rate 0: no limit */
	decide_bucket_init(&h->renewals, 0, 1);
	h->cluster_protection_off = cluster_off;
	snprintf(h->protection_path, sizeof(h->protection_path), "%s", prot);
}

/* A THROTTLE incident of host-1 for task (a literal: its length is strlen). */
static inline struct incident_in test_incident(const char *task, double cap, int dur)
{
	struct incident_in in = {.incident_id = "inc",
				 .host = "host-1",
				 .throttle = true,
				 .antagonist_task = task,
				 .antagonist_len = strlen(task),
				 .victim_task = "ls/v",
				 .victim_job = "ls",
				 .has_cap = true,
				 .cap_cpu = cap,
				 .has_duration = true,
				 .cap_duration_s = dur};
	return in;
}
#endif
