/* The simulated cgroup tree: one folder per task with cap files an enforcer can write
 * (cgroup v2 cpu.max, cgroup v1 cpu.cfs_quota_us + cpu.cfs_period_us). Changes are noticed
 * with inotify; tasks that get no inotify watch (limit reached) are checked by stat. */
#ifndef FLEETSIM_CAPWATCH_H
#define FLEETSIM_CAPWATCH_H

#include <stddef.h>
#include <stdint.h>

struct capwatch;

/* Called for each task whose cap changed: cap in CPU-sec/sec, INFINITY when uncapped. */
typedef void (*capwatch_cb)(void *ctx, int task, double cap);

#define CAPWATCH_STAT_ONLY 1 /* flag: no inotify, stat every folder at each poll (tests) */

/* Opens a watcher for tasks 0..ntasks-1 under root (created if missing). 0 or -errno. */
int capwatch_new(struct capwatch **out, const char *root, int ntasks, int flags, char *err,
		 size_t errsz);
/* Creates <root>/<rel_dir> with uncapped cap files and starts watching it. 0 or -errno. */
int capwatch_add(struct capwatch *cw, int task, const char *rel_dir, char *err, size_t errsz);
/* Reports every cap change since the last call, without blocking. Returns the number of
 * changes reported. Cheap when nothing changed: one read() on the inotify descriptor. */
int capwatch_poll(struct capwatch *cw, capwatch_cb cb, void *ctx);
/* Writes the simulated time (microseconds since the epoch, one line) to <root>/clock,
 * atomically (temporary file + rename), for enforcers acting for simulated hosts
 * (cpi2-enforcer --clock-file). 0 or -errno. */
int capwatch_write_clock(struct capwatch *cw, int64_t now_us);
/* Number of tasks checked by stat because inotify had no watch left for them. */
int capwatch_polled_by_stat(const struct capwatch *cw);
/* Closes the watcher; the folder tree stays on disk. NULL is fine. */
void capwatch_delete(struct capwatch *cw);

/* "QUOTA PERIOD", "max PERIOD", "max" or "QUOTA" (period 100000 us) -> CPU-sec/sec, INFINITY
 * for max. 0 or -EINVAL. */
int capfile_parse_cpu_max(const char *text, double *cap);
/* cgroup v1: quota "-1" (unlimited) or microseconds, period microseconds. 0 or -EINVAL. */
int capfile_parse_cfs(const char *quota, const char *period, double *cap);
/* Reads the cap in force in one task folder: the newer of cpu.max and cpu.cfs_quota_us wins.
 * 0 or -errno / -EINVAL (malformed). */
int capfile_read_dir(const char *dir, double *cap);

#endif
