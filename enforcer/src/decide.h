/* decide: what the enforcer does with an incident, an operator command, the clock, or a
 * shutdown, for one host. No Kafka, no Avro: plain structs in, an action out, so every rule
 * is unit-tested against fake cgroup trees. */
#ifndef CPI2_ENFORCER_DECIDE_H
#define CPI2_ENFORCER_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "caps.h"

/* Mirrors the ActionKind and ActionCause enums of schemas/avro/EnforcementAction.avsc. */
enum action_kind { ACT_APPLIED, ACT_RENEWED, ACT_RELEASED, ACT_REFUSED, ACT_FAILED, ACT_DRY_RUN };
enum action_cause { CAUSE_INCIDENT, CAUSE_OPERATOR, CAUSE_EXPIRY, CAUSE_SHUTDOWN, CAUSE_RECOVERY,
		    CAUSE_PROTECTION_OFF };
extern const char *const action_kind_names[];
extern const char *const action_cause_names[];

/* Mirrors CommandKind of ControlCommand.avsc. */
enum command_kind { CMD_CAP, CMD_UNCAP, CMD_PROTECTION_OFF, CMD_PROTECTION_ON };

/* The fields of an Incident the enforcer uses (strings with lengths: they come from the network). */
struct incident_in {
	const char *incident_id;
	const char *host;
	bool throttle;              /* decision == THROTTLE */
	const char *antagonist_task; /* NULL if absent */
	size_t antagonist_len;
	const char *victim_task, *victim_job;
	bool has_cap;
	double cap_cpu;
	bool has_duration;
	int cap_duration_s;
};

struct command_in {
	const char *command_id;
	enum command_kind command;
	const char *host;           /* NULL = the whole cluster */
	const char *task;
	size_t task_len;
	bool has_cap;
	double cap_cpu;
	bool has_duration;
	int duration_s;
};

/* One EnforcementAction to publish. Strings point into the host's own buffers. */
struct action {
	enum action_kind kind;
	enum action_cause cause;
	char task[CGPATH_MAX_TASK + 1];
	const char *incident_id, *command_id, *victim_task, *victim_job; /* NULL = absent */
	bool has_cap;
	double cap_cpu;
	long period_us;
	int64_t expires_at_us;      /* 0 = absent */
	char previous_limit[LIMIT_TEXT_MAX]; /* "" = absent */
	char reason[512];
};

/* The enforcer of one host. */
struct host_enforcer {
	char host[256];
	struct cgpath_policy policy;
	struct capset caps;
	int version;                /* LIMITS_AUTO, LIMITS_V1 or LIMITS_V2 */
	long period_us;             /* cap period, e.g. 250000 (paper: 25 ms in 250 ms) */
	int default_duration_s;     /* when a message names none */
	double default_cap_cpu;     /* operator cap without a value */
	bool protection_off;        /* kill switch for this host */
	bool *cluster_protection_off; /* shared kill switch of the cluster */
	char protection_path[PATH_MAX]; /* where the host's kill switch is remembered, or "" */
};

/* Act on an incident for this host (the caller checked the host). Returns 1 if *out is an
 * action to publish, 0 if there is nothing to do (not a THROTTLE decision). */
int decide_incident(struct host_enforcer *h, const struct incident_in *in, int64_t now_us, struct action *out);

/* Act on an operator command addressed to this host or the cluster. Appends up to max
 * actions to out (PROTECTION_OFF releases every cap). Returns the number of actions. */
int decide_command(struct host_enforcer *h, const struct command_in *in, int64_t now_us, struct action *out, int max);

/* Release the next cap whose expiry has passed. Returns 1 with *out, or 0 if none is due. */
int decide_expiry(struct host_enforcer *h, int64_t now_us, struct action *out);

/* Release every cap (shutdown or protection off). Returns the number of actions written. */
int decide_release_all(struct host_enforcer *h, enum action_cause cause, struct action *out, int max);

/* After a restart: read the state file, release the caps that expired while we were down
 * and put the others back in force. Returns the number of actions, or -errno (err says why). */
int decide_recover(struct host_enforcer *h, int64_t now_us, struct action *out, int max, char *err, size_t errsz);

/* Remember / read the host's kill switch next to its state file. */
int decide_save_protection(const struct host_enforcer *h);
void decide_load_protection(struct host_enforcer *h);

#endif
