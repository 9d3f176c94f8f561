/* caps: the caps in force on this host, their previous limits and expiry, and the state file
 * that lets a restarted enforcer (after a crash or kill -9) restore or resume every one.
 *
 * The state file is rewritten atomically (temp file, fsync, rename, fsync of the folder)
 * BEFORE a cap is written to a cgroup and after it is lifted, so at every instant the file
 * names every cap that may be in force, with the limit to restore. */
#ifndef CPI2_ENFORCER_CAPS_H
#define CPI2_ENFORCER_CAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "cgpath.h"
#include "limits.h"

#define CAPS_MAX 256
#define CAPS_ID_MAX 128

struct cap {
	char task[CGPATH_MAX_TASK + 1];   /* as named in the message */
	char dir[PATH_MAX];               /* resolved cgroup directory */
	int version;                      /* LIMITS_V1 or LIMITS_V2 */
	char previous[LIMIT_TEXT_MAX];    /* the limit to restore */
	double cpu;                       /* cap, CPU-sec/sec */
	long period_us;
	int64_t expires_us;               /* wall clock, microseconds since the epoch */
	char incident_id[CAPS_ID_MAX];    /* or the operator command's id */
	char victim_task[CGPATH_MAX_TASK + 1];
};

struct capset {
	struct cap caps[CAPS_MAX];
	int n;
	int max_caps;        /* at most this many caps at once on this host */
	bool dry_run;        /* decide and report, write nothing to cgroups */
	const char *state_path;
};

enum caps_outcome { CAPS_APPLIED, CAPS_RENEWED, CAPS_DRY_RUN };

/* Apply (or renew: a cap on the same cgroup already in force gets the new expiry and cap, and
 * keeps the original previous limit) a cap on resolved cgroup dir. On success *outcome says
 * which, and *cap points to the entry. Returns 0, -EBUSY when max_caps are in force, or
 * -errno with a reason in err. */
int caps_apply(struct capset *s, const char *task, const char *dir, int version, double cpu,
	       long period_us, int64_t expires_us, const char *incident_id, const char *victim_task,
	       enum caps_outcome *outcome, struct cap **cap, char *err, size_t errsz);

/* Index of the cap on dir, or -1. */
int caps_find(const struct capset *s, const char *dir);

/* Restore entry i's previous limit and forget it. The released entry is copied to *out
 * (may be NULL). Returns 0 or -errno with a reason (the entry is kept if the write failed
 * for any reason but the cgroup having gone away). */
int caps_release(struct capset *s, int i, struct cap *out, char *err, size_t errsz);

/* Index of a cap whose expiry is at or before now_us, or -1. */
int caps_next_expired(const struct capset *s, int64_t now_us);

/* Earliest expiry among the caps, or INT64_MAX. */
int64_t caps_next_expiry(const struct capset *s);

/* Write the state file atomically. Returns 0 or -errno. */
int caps_save(const struct capset *s, char *err, size_t errsz);

/* Read the state file (missing file = no caps). Returns 0, or -EINVAL naming the bad line. */
int caps_load(struct capset *s, char *err, size_t errsz);

#endif
