/* decide: what the enforcer does with an incident, an operator command, the clock, or a
 * shutdown, for one host. No Kafka, no Avro: plain structs in, an action out, so every rule
 * is unit-tested against fake cgroup trees. */
#ifndef CPI2_ENFORCER_DECIDE_H
#define CPI2_ENFORCER_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cpi2/names.h>

#include "caps.h"
#include "cgpath.h"
#include "optin.h"

/* ActionKind, ActionCause (EnforcementAction) and CommandKind (ControlCommand): enum
 * cpi2_action_kind, cpi2_action_cause, cpi2_command_kind and their symbols, from cpi2/names.h. */

/* The fields of an Incident the enforcer uses (strings with lengths: they come from the network).
 */
struct incident_in {
	const char *incident_id;
	const char *host;
	bool throttle;		     /* decision == THROTTLE */
	const char *antagonist_task; /* NULL if absent */
	size_t antagonist_len;
	const char *victim_task, *victim_job;
	bool has_cap;
	double cap_cpu;
	bool has_duration;
	int cap_duration_s;
	int64_t detected_at_us; /* 0 if absent */
};

struct command_in {
	const char *command_id;
	enum cpi2_command_kind command;
	const char *host; /* NULL = the whole cluster */
	const char *task;
	size_t task_len;
	bool has_cap;
	double cap_cpu;
	bool has_duration;
	int duration_s;
	int64_t issued_at_us; /* 0 if absent */
};

/* One EnforcementAction to publish. Strings point into the host's own buffers. */
struct action {
	enum cpi2_action_kind kind;
	enum cpi2_action_cause cause;
	char task[CGPATH_MAX_TASK + 1];
	const char *incident_id, *command_id, *victim_task, *victim_job; /* NULL = absent */
	bool has_cap;
	double cap_cpu;
	long period_us;
	int64_t expires_at_us;		     /* 0 = absent */
	char previous_limit[LIMIT_TEXT_MAX]; /* "" = absent */
	char reason[512];
};

/* A token bucket: rate tokens a second, at most burst saved up. */
struct bucket {
	double rate, burst, tokens;
	int64_t last_us; /* 0: full */
};

/* The enforcer of one host. */
struct host_enforcer {
	char host[256];
	struct cgpath_policy policy;
	struct capset caps;
	int version;		    /* LIMITS_AUTO, LIMITS_V1 or LIMITS_V2 */
	long period_us;		    /* cap period, e.g. 250000 (paper: 25 ms in 250 ms) */
	int default_duration_s;	    /* when a message names none */
	double default_cap_cpu;	    /* operator cap without a value */
	double min_cap_cpu;	    /* the floor: a lower request is raised to it */
	int64_t max_cap_us_per_day; /* capped time a task may be granted in a day (0: no bound) */
	struct bucket new_caps, renewals; /* per-host rate limits */
	const int64_t *rate_clock_us; /* monotonic clock of the buckets (NULL: the now_us given) */
	const struct optin *optin;    /* the cgroups incidents may cap (NULL: every one) */
	bool protection_off;	      /* kill switch for this host */
	bool *cluster_protection_off; /* shared kill switch of the cluster */
	char protection_path[PATH_MAX]; /* where the host's kill switch is remembered, or "" */
};

/* How old and how far ahead a message's timestamps may be. */
struct freshness {
	long stale_after_s; /* Kafka timestamp: at most this old */
	long
	    max_age_s; /* the message's own time (detected_at_us, issued_at_us): at most this old */
	long skew_s;   /* either may be this far ahead of our clock */
};

/* Set a bucket's rate and burst, full. */
void decide_bucket_init(struct bucket *b, double rate, double burst);

/* Is a message fresh: its Kafka timestamp (ms, <= 0 = missing) against the wall clock, its own
 * time own_us (<= 0 = missing) against own_now_us (the clock the sender used)? Returns 0, or
 * -ESTALE with the reason (missing, in the future, too old). */
int decide_check_fresh(const struct freshness *f, int64_t kafka_ms, int64_t wall_us,
		       const char *own_name, int64_t own_us, int64_t own_now_us, char *reason,
		       size_t reasonsz);

/* Act on an incident for this host (the caller checked the host). Returns 1 if *out is an
 * action to publish, 0 if there is nothing to do (not a THROTTLE decision). */
int decide_incident(struct host_enforcer *h, const struct incident_in *in, int64_t now_us,
		    struct action *out);

/* Act on an operator command addressed to this host or the cluster (a CAP that names no host is
 * refused: it would cap the task on every host). Appends up to max
 * actions to out (PROTECTION_OFF releases every cap: max >= CAPS_MAX releases them all).
 * Returns the number of actions. */
int decide_command(struct host_enforcer *h, const struct command_in *in, int64_t now_us,
		   struct action *out, int max);

/* Release the next cap whose expiry has passed. Returns 1 with *out, or 0 if none is due. */
int decide_expiry(struct host_enforcer *h, int64_t now_us, struct action *out);

/* The caps whose limit another writer changed since the enforcer wrote it (the kubelet's
 * resize, ...): each is dropped with nothing written, the other limit left in force, and
 * reported RELEASED (cause EXPIRY: it ends early) with what changed. Returns the number of
 * actions written (at most max). */
int decide_check_limits(struct host_enforcer *h, struct action *out, int max);

/* Release every cap (shutdown or protection off), at most max of them (CAPS_MAX: all). Returns
 * the number of actions written. */
int decide_release_all(struct host_enforcer *h, enum cpi2_action_cause cause, struct action *out,
		       int max);

/* After a restart: read the state file, release the caps that expired while we were down
 * and put the others back in force (only lowering, and only on the very directory capped); with
 * the host's or the cluster's kill switch off, release every one instead.
 * Malformed lines of the state file are skipped and named in err (which is "" otherwise).
 * Returns the number of actions (max >= CAPS_MAX: every cap), or -errno (err says why). */
int decide_recover(struct host_enforcer *h, int64_t now_us, struct action *out, int max, char *err,
		   size_t errsz);

/* Remember (atomically) / read the host's kill switch next to its state file. */
int decide_save_protection(const struct host_enforcer *h);
void decide_load_protection(struct host_enforcer *h);

#endif
