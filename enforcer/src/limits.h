/* limits: read, write and restore a cgroup's CPU bandwidth limit, on cgroup v2 (cpu.max) or
 * v1 (cpu.cfs_quota_us + cpu.cfs_period_us). A limit is kept as text exactly as it must be
 * written back: v2 "max 100000" or "25000 250000"; v1 "<quota> <period>" e.g. "-1 100000". */
#ifndef CPI2_ENFORCER_LIMITS_H
#define CPI2_ENFORCER_LIMITS_H

#include <stddef.h>

#define LIMIT_TEXT_MAX 64

enum limits_version { LIMITS_AUTO = 0, LIMITS_V1 = 1, LIMITS_V2 = 2 };

/* Which interface the cgroup dir has: LIMITS_V2 if it has cpu.max, LIMITS_V1 if it has
 * cpu.cfs_quota_us, or -ENOENT. */
int limits_detect(const char *dir);

/* Read the limit in force into text (LIMIT_TEXT_MAX). Returns 0 or -errno (-EINVAL when the
 * files' content is malformed). */
int limits_read(int version, const char *dir, char *text, size_t textsz);

/* Write a hard cap of cpu CPU-sec/sec over period_us. Returns 0 or -errno. */
int limits_cap(int version, const char *dir, double cpu, long period_us, char *err, size_t errsz);

/* Write a limit previously read with limits_read back. Returns 0 or -errno. */
int limits_restore(int version, const char *dir, const char *text, char *err, size_t errsz);

/* Parse limit text into quota (-1 = unlimited) and period. Returns 0 or -EINVAL. */
int limits_parse(int version, const char *text, long *quota_us, long *period_us);

#endif
