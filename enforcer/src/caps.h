/* caps: the caps in force on this host, their previous limits, identity and expiry, the time
 * each task spent capped today, and the state file that lets a restarted enforcer (after a
 * crash or kill -9) restore or resume every one.
 *
 * The state file is rewritten atomically (statefile.c) BEFORE a cap is written to a cgroup,
 * before it is lifted (naming it releasing) and after, so at every instant the file names every
 * cap that may be in force, with the limit to restore and the identity (st_dev, inode) of the
 * directory it was written to, and no lifted cap as one to resume. Where the state file cannot
 * be rewritten before a release (a full disk, a folder made read-only), the release is recorded
 * in the release journal instead: a small file beside it, its space written at start, where a
 * record (the cap's serial and a check) needs no new block; with neither, the cap is not lifted
 * (a retry follows). A restart finishes every release begun, and resumes none of them.
 *
 * With cap_weight, a new cap also lowers the task's CPU priority: its CPU weight (v1 cpu.shares
 * to 2, v2 cpu.weight to 1) when it is above that, and, where the kernel has cpu.idle, that flag
 * to 1 when it is 0 (limits.h says why both): a capped task that still has quota left in a
 * period no longer delays a latency-sensitive task that wakes beside it. Each value found is
 * kept with the cap (state file "cap5" lines; "cap4" lines load as caps that set no idle flag,
 * "cap3" and older ones as caps that lowered nothing) and put back exactly at release, restart
 * or drop, unless another writer changed it under the cap: then that value is left as it is and
 * the cap forgets its own. */
#ifndef CPI2_ENFORCER_CAPS_H
#define CPI2_ENFORCER_CAPS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgpath.h"
#include "limits.h"

#define CAPS_MAX 256
#define CAPS_ID_MAX 128
#define CAPS_BUDGET_MAX 1024 /* tasks whose capped time today is remembered */
#define CAPS_DAY_US (86400LL * 1000000)

/* A priority knob a cap lowered with the limit: the value found, to restore, and the one the
 * enforcer wrote (another is not ours); written 0: not lowered. */
struct cap_lowered {
	long previous;
	long written;
};

struct cap {
	char task[CGPATH_MAX_TASK + 1]; /* as named in the message (printable) */
	char dir[PATH_MAX];		/* canonical cgroup directory */
	dev_t dev;			/* its identity when capped (ino 0: unknown, older file) */
	ino_t ino;
	int version;		       /* LIMITS_V1 or LIMITS_V2 */
	char previous[LIMIT_TEXT_MAX]; /* the limit to restore */
	char written[LIMIT_TEXT_MAX];  /* the limit the enforcer wrote: another is not ours */
	double cpu;		       /* cap in force, CPU-sec/sec */
	long period_us;
	int64_t expires_us;	       /* the enforcer's clock, microseconds since the epoch */
	char incident_id[CAPS_ID_MAX]; /* or the operator command's id */
	char victim_task[CGPATH_MAX_TASK + 1];
	struct cap_lowered weight; /* the CPU weight (v1 cpu.shares, v2 cpu.weight) */
	struct cap_lowered idle;   /* cpu.idle */
	bool loaded;	 /* read from the state file and not written since: a crash may have left
			  * the cgroup at the previous limit, the cap, or (v1) one file of each */
	uint64_t serial; /* this cap's own id (never reused): the release journal names it */
	bool releasing;	 /* a release began: never resumed, a restart finishes it */
	bool release_loaded;	  /* ... before the restart (the state file or the journal) */
	int64_t deadline_mono_us; /* expiry by the monotonic clock (mono_clock_us), 0: none */
	int64_t retry_mono_us;	  /* a failed release is tried again from then (not saved) */
};

/* Time a task (a cgroup's identity) was granted caps in the day that began at window_us. */
struct cap_budget {
	dev_t dev;
	ino_t ino;
	int64_t window_us;
	int64_t used_us;
};

struct capset {
	struct cap caps[CAPS_MAX];
	int n;
	int max_caps;	 /* at most this many caps at once on this host */
	bool dry_run;	 /* decide and report, write nothing to cgroups */
	bool cap_weight; /* a new cap also lowers the task's CPU weight to the lowest and sets
			  * cpu.idle, restored with the limit (only lowered, never fought: see
			  * priority_hold in caps.c) */
	bool cap_idle;	 /* with cap_weight: cpu.idle too (the kernel refuses other writers'
			  * weight writes while it is set) */
	const char *state_path;
	const struct cgpath_policy *policy; /* to open a capped directory again (release) */
	struct cap_budget budget[CAPS_BUDGET_MAX];
	int n_budget;
	/* The clock that bounds a cap's duration with the wall clock (CLOCK_BOOTTIME, us; NULL:
	 * the wall clock alone, as in simulated time): a clock set back does not lengthen a cap.
	 * A restart on the same boot (boot_id) keeps the deadlines of the state file. */
	const int64_t *mono_clock_us;
	char boot_id[40];
	uint64_t next_serial;
	int journal_used;	 /* release journal slots written since the last state file write */
	struct persist *persist; /* writes the state file (slot persist_slot); NULL: directly */
	int persist_slot;
};

/* What caps_apply asks for: a directory cgpath_open returned, and the cap. */
struct cap_request {
	int64_t duration_us; /* from now (the monotonic deadline); expires_us is now + that */
	const char *task;    /* as named in the message */
	size_t task_len;
	const struct cgpath_target *target;
	int version;
	double cpu;
	long period_us;
	int64_t expires_us;
	const char *incident_id, *victim_task; /* NULL = none */
};

enum caps_outcome {
	CAPS_APPLIED,	  /* a new cap, written */
	CAPS_RENEWED,	  /* the cap in force on the cgroup got the new expiry (and a lower cap) */
	CAPS_DRY_RUN,	  /* nothing written: dry run */
	CAPS_AT_OR_BELOW, /* nothing written: the limit in force is already at or below the cap */
	CAPS_CHANGED	  /* nothing written: another writer changed the limit under the cap in
			     force, which is dropped (*cap is the dropped entry, err says why) */
};

/* Apply a cap (or renew the one in force on the same cgroup: new expiry, the lower of the two
 * caps, the original previous limit kept). A cap only lowers: when the limit in force is at or
 * below the request, nothing is written (CAPS_AT_OR_BELOW; a renewal keeps the lower cap in
 * force). A renewal that finds a limit another writer set (e.g. the kubelet's resize) writes
 * nothing and drops the cap (CAPS_CHANGED). On success *outcome says which, and *cap points to the
 * entry (the request's values for CAPS_AT_OR_BELOW and a dry run, not kept). Returns 0, -EBUSY when
 * max_caps are in force, or -errno with a reason in err (a refused write leaves the cgroup's limit
 * as it was). */
int caps_apply(struct capset *s, const struct cap_request *r, enum caps_outcome *outcome,
	       struct cap **cap, char *err, size_t errsz);

/* Index of the cap on dir, or -1. */
int caps_find(const struct capset *s, const char *dir);

/* Restore entry i's previous limit and forget it. The state file (or, when it cannot be written,
 * the release journal) names the cap as releasing before anything is written, so a restart after
 * a crash at any point finishes the release and never puts the cap back; when neither can be
 * written nothing is (-EROFS-like -errno, the cap stays in force, err says why). The released entry
 * is copied to *out (may be NULL). Returns 0, with a note in err when nothing was written: the
 * cgroup is gone, or was replaced by another directory under the same name (its limit is not ours
 * to restore); or when the state file could not be rewritten afterwards. Returns 1 when another
 * writer changed the limit under the cap: it is left as that writer set it, the cap forgotten, and
 * err says what changed. Or -errno with a reason (the entry is kept, due in the state file). */
int caps_release(struct capset *s, int i, struct cap *out, char *err, size_t errsz);

/* After a restart: put entry i back in force where it is not (a crash may have come between
 * the state file and the cgroup write), only lowering, and only on the directory capped.
 * Returns 0; 1 when another writer changed the limit meanwhile (the entry is forgotten with
 * nothing written, err says what changed); -ENOENT or -ESTALE when the cgroup is gone or was
 * replaced (the entry is then forgotten, err says why); or -errno with a reason. */
int caps_resume(struct capset *s, int i, char *err, size_t errsz);

/* Is entry i's cap still the limit in force? Returns 1 when another writer (the kubelet at a
 * resize, an operator) changed it: the cap is forgotten without a write (neither fought nor
 * its stale previous limit restored later), copied to *out (may be NULL), and err says what
 * changed. Returns 0 when it holds, or when the cgroup cannot be read now (its expiry deals
 * with a cgroup gone or replaced). */
int caps_check(struct capset *s, int i, struct cap *out, char *err, size_t errsz);

/* Index of a cap whose expiry is at or before now_us, or whose monotonic deadline has passed,
 * or -1. */
int caps_next_expired(const struct capset *s, int64_t now_us);

/* Earliest expiry among the caps, or INT64_MAX. */
int64_t caps_next_expiry(const struct capset *s);

/* Entry i's release failed (the entry is kept): try it again after delay_us. */
void caps_retry_later(struct capset *s, int i, int64_t delay_us);

/* Capped time (us) left today for the cgroup (dev, ino), out of per_day_us. */
int64_t caps_budget_left(const struct capset *s, dev_t dev, ino_t ino, int64_t now_us,
			 int64_t per_day_us);

/* Count granted_us of capped time for (dev, ino) (saved with the next caps_save). */
void caps_budget_charge(struct capset *s, dev_t dev, ino_t ino, int64_t now_us, int64_t granted_us);

/* Write the state file atomically, before returning. Returns 0 or -errno. */
int caps_save(struct capset *s, char *err, size_t errsz);

/* Read the state file (missing file = no caps) and the release journal (the caps it names are
 * releasing, due now); make the journal's space when it has none yet. A malformed line is
 * skipped and named in err (the others are loaded: one bad line must not keep every other cap in
 * force). Returns the number of lines skipped (0 when all were read), or -errno when the file
 * cannot be read. */
int caps_load(struct capset *s, char *err, size_t errsz);

#endif
