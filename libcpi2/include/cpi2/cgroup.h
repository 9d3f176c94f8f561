/* cgroup: where the cgroup hierarchies are mounted, and a cgroup's CPU usage. Parsers of
 * /proc and /sys files are strict: malformed content is -EINVAL, never a crash. */
#ifndef CPI2_CGROUP_H
#define CPI2_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cpi2_cgroup_mounts {
	char unified[PATH_MAX];	   /* cgroup v2 mount point, or "" */
	char cpu[PATH_MAX];	   /* cgroup v1 mount with the cpu controller, or "" */
	char cpuacct[PATH_MAX];	   /* cgroup v1 mount with the cpuacct controller, or "" */
	char perf_event[PATH_MAX]; /* cgroup v1 mount with the perf_event controller, or "" */
	char memory[PATH_MAX];	   /* cgroup v1 mount with the memory controller, or "" */
};

/* Parse a mountinfo file (NULL: /proc/self/mountinfo). Returns 0 or -errno/-EINVAL. */
int cpi2_cgroup_mounts(const char *mountinfo, struct cpi2_cgroup_mounts *out);

/* Parse the text of a v2 cpu.stat file: usage_usec. Returns 0 or -EINVAL. */
int cpi2_cgroup_parse_cpu_stat(const char *text, uint64_t *usage_usec);

/* The kernel's CPU bandwidth period when a limit names none, in microseconds. */
#define CPI2_CGROUP_DEFAULT_PERIOD_US 100000

/* Parse the text of a v2 cpu.max file: "QUOTA PERIOD", "max PERIOD", "max" or "QUOTA" (the
 * period then CPI2_CGROUP_DEFAULT_PERIOD_US), blanks around, one line end. *quota_us is -1 for
 * max, else at least 1; *period_us at least 1. Returns 0 or -EINVAL. */
int cpi2_cgroup_parse_cpu_max(const char *text, long *quota_us, long *period_us);

/* Parse the texts of v1 cpu.cfs_quota_us (-1 for no limit, else at least 1) and
 * cpu.cfs_period_us (at least 1). Returns 0 or -EINVAL. */
int cpi2_cgroup_parse_cfs(const char *quota_text, const char *period_text, long *quota_us,
			  long *period_us);

/* The kernel's bounds of a cgroup's CPU weight: v1 cpu.shares and v2 cpu.weight. */
#define CPI2_CGROUP_V1_SHARES_MIN 2
#define CPI2_CGROUP_V1_SHARES_MAX 262144
#define CPI2_CGROUP_V2_WEIGHT_MIN 1
#define CPI2_CGROUP_V2_WEIGHT_MAX 10000

/* Parse the text of a v1 cpu.shares (v2 false) or v2 cpu.weight (v2 true) file: one decimal
 * integer within the kernel's bounds above, blanks around, one line end. Returns 0 or -EINVAL. */
int cpi2_cgroup_parse_cpu_weight(const char *text, bool v2, long *weight);

/* Parse the text of a cpu.idle file (v1 and v2 alike): 0, or 1 when the cgroup's tasks run at
 * SCHED_IDLE priority against their siblings; blanks around, one line end. Returns 0 or
 * -EINVAL. */
int cpi2_cgroup_parse_cpu_idle(const char *text, long *idle);

/* A pressure (PSI) file's totals: cpu.pressure, memory.pressure, io.pressure of a cgroup v2
 * directory or /proc/pressure. Microseconds some (at least one task stalled) and full (every
 * non-idle task stalled at once) of the cgroup's tasks spent stalled since it was created. */
struct cpi2_psi {
	bool has_some, has_full;
	uint64_t some_us, full_us;
};

/* Parse a pressure file: lines "some avg10=A avg60=A avg300=A total=N" and optionally the same
 * with "full" (cpu.pressure has a full line of zeros on kernels from 5.13), each kind at most
 * once, in any order. Anything else (an unknown first word, a missing or malformed total, a
 * missing some line) is -EINVAL. Returns 0 or -EINVAL. */
int cpi2_cgroup_parse_psi(const char *text, struct cpi2_psi *out);

/* CPU time used by a cgroup in nanoseconds: v2 dir (cpu.stat usage_usec) or v1 cpuacct dir
 * (cpuacct.usage). Returns 0 or -errno. */
int cpi2_cgroup_cpu_usage_ns(const char *dir, uint64_t *ns);

#endif
