/* limits: read, write and restore a cgroup's CPU bandwidth limit, on cgroup v2 (cpu.max) or
 * v1 (cpu.cfs_quota_us + cpu.cfs_period_us), through a directory descriptor that cgpath opened
 * (the files are opened with O_NOFOLLOW relative to it: never through a symlink). A limit is
 * kept as text exactly as it must be written back: v2 "max 100000" or "25000 250000"; v1
 * "<quota> <period>" e.g. "-1 100000".
 *
 * Caps only lower: limits_plan_cap says whether a cap is below the limit in force at all.
 * On v1 the two files are written in an order the kernel accepts at every step (quota >= 1 ms,
 * a child's quota/period not above its limited parent's), and a refused write puts back what
 * the first one changed, so a refused cap leaves the task's own limit exactly as it was. */
#ifndef CPI2_ENFORCER_LIMITS_H
#define CPI2_ENFORCER_LIMITS_H

#include <stddef.h>

#define LIMIT_TEXT_MAX 64
#define LIMITS_MIN_QUOTA_US 1000     /* the kernel's smallest quota and period */
#define LIMITS_MAX_PERIOD_US 1000000 /* the kernel's largest period */

enum limits_version { LIMITS_AUTO = 0, LIMITS_V1 = 1, LIMITS_V2 = 2 };

/* Which interface the cgroup directory dirfd has: LIMITS_V2 if it has cpu.max, LIMITS_V1 if it
 * has cpu.cfs_quota_us, or -ENOENT. */
int limits_detect(int dirfd);

/* Read the limit in force into text (LIMIT_TEXT_MAX). Returns 0 or -errno (-EINVAL when the
 * files' content is malformed). */
int limits_read(int dirfd, int version, char *text, size_t textsz);

/* Parse limit text into quota (-1 = unlimited) and period. Returns 0 or -EINVAL. */
int limits_parse(int version, const char *text, long *quota_us, long *period_us);

/* CPU-sec/sec of a limit text (quota/period), or a negative value for no limit. */
double limits_cpu(int version, const char *text);

/* Plan a cap of cpu CPU-sec/sec over period_us on a cgroup whose limit in force is current:
 * the quota and period to write (quota never above cpu * period; the period is lengthened when
 * cpu * period_us is under the kernel's 1 ms minimum quota). Returns 0 (write *quota, *period),
 * 1 when the limit in force is already at or below that cap (nothing to write: a cap never
 * raises a limit), or -EINVAL for a malformed current limit or a cap out of range. */
int limits_plan_cap(int version, const char *current, double cpu, long period_us, long *quota,
		    long *period);

/* Write quota/period (quota -1 = no limit) over the limit current read from the same cgroup.
 * v1: in the order the kernel accepts; when the second file is refused the first is put back.
 * Returns 0 or -errno with a reason (saying whether the old limit is intact) in err. */
int limits_write(int dirfd, int version, const char *current, long quota, long period, char *err,
		 size_t errsz);

/* Write back a limit previously read with limits_read (the one in force is read first, for the
 * order of the v1 writes). Returns 0 or -errno with a reason. */
int limits_restore(int dirfd, int version, const char *saved, char *err, size_t errsz);

/* The CPU weight a cap lowers with the limit (cgroup v1 cpu.shares, v2 cpu.weight): while a
 * capped task is runnable in its quota, it gets the smallest share beside tasks of the normal
 * weight. The lowest weight the kernel takes: */
#define LIMITS_V1_MIN_WEIGHT 2 /* cpu.shares */
#define LIMITS_V2_MIN_WEIGHT 1 /* cpu.weight */

/* The lowest weight of version's interface. */
long limits_min_weight(int version);

/* The weight the kernel gives a cgroup when its cpu.idle is cleared (its default: v1 cpu.shares
 * 1024, v2 cpu.weight 100), whatever it had before cpu.idle was set. */
#define LIMITS_V1_DEFAULT_WEIGHT 1024
#define LIMITS_V2_DEFAULT_WEIGHT 100
long limits_default_weight(int version);

/* Read the CPU weight in force (v1 cpu.shares, v2 cpu.weight) into *weight. Returns 0 or
 * -errno: -ENOENT when the cgroup has no such file, -EINVAL when its content is malformed. */
int limits_weight_read(int dirfd, int version, long *weight);

/* Write the CPU weight (within the kernel's bounds). Returns 0 or -errno with a reason in err;
 * the kernel applies the write whole or not at all. */
int limits_weight_write(int dirfd, int version, long weight, char *err, size_t errsz);

/* cpu.idle (v1 and v2 alike, kernels from 5.15), which a cap sets with the weight: 1 makes the
 * cgroup's tasks SCHED_IDLE against their siblings, so a task that wakes beside a running capped
 * one preempts it at once. A low weight alone does not ensure that: the EEVDF scheduler (kernels
 * from 6.6) may let the running task finish its slice first. The value a cap writes: */
#define LIMITS_IDLE 1

/* LIMITS_IDLE, for any version (the knob has one name in both interfaces). */
long limits_idle_lowest(int version);

/* Read cpu.idle into *idle (0 or 1). Returns 0 or -errno: -ENOENT when the kernel has no such
 * file (before 5.15), -EINVAL when its content is malformed. */
int limits_idle_read(int dirfd, int version, long *idle);

/* Write cpu.idle (0 or 1). Returns 0 or -errno with a reason in err. */
int limits_idle_write(int dirfd, int version, long idle, char *err, size_t errsz);

#endif
