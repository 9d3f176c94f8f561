/* resources: a task's signals beside its perf counts, read from files at the start and the end
 * of a window: CPU and memory pressure (PSI) from the task's cgroup v2 directory, and LLC
 * occupancy and memory bandwidth from its resctrl monitoring group. Every file is hostile: a
 * file that is absent, unreadable or malformed leaves its signal null, never 0. */
#ifndef COLLECTOR_RESOURCES_H
#define COLLECTOR_RESOURCES_H

#include <cpi2/sample.h>

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* What one read found; has_* false where the signal could not be read. */
struct res_reading {
	bool has_cpu_some, has_mem_some, has_mem_full, has_llc, has_mbm;
	uint64_t cpu_some_us, mem_some_us, mem_full_us; /* PSI totals */
	int64_t llc_bytes;				/* llc_occupancy, summed over domains */
	uint64_t mbm_bytes;				/* mbm_total_bytes, summed over domains */
};

/* Why a read left signals null: 0, or -errno of the first failure (-EINVAL: malformed). */
struct res_errors {
	int psi, resctrl;
};

/* A task's files, opened once and read every window: its pressure files stay open (read
 * again from their start), its resctrl domains are read by path. */
struct res_files {
	int cpu_fd, mem_fd; /* cpu.pressure, memory.pressure, or -1 */
	int psi_err;	    /* why one is not open: 0 or -errno */
	char *mon_dir;	    /* the resctrl mon_data directory (owned), or NULL */
};

/* Descriptors res_files_open holds for a task when pressure is read. */
#define RES_FDS_PSI 2

/* The task's cgroup v2 directory, for psi_base (the root's directory in the v2 hierarchy, "" if
 * none) and the task's path below it: psi_base/task when that directory exists. Otherwise, for a
 * task of a v1 root (v1_dir: its v1 directory; NULL for a v2 root), the v2 cgroup (under
 * unified, the v2 mount) of the first process in v1_dir's cgroup.procs, but only when every
 * process of that v2 cgroup is in the v1 cgroup too (so its pressure is this task's alone) and
 * it is not the v2 root. out is "" when there is none. */
void res_find_v2_dir(const char *psi_base, const char *task, const char *v1_dir,
		     const char *unified, char *out, size_t size);

/* The mon_data directory of the resctrl monitoring group of a task: resctrl/mon_groups/NAME/
 * mon_data, NAME the task's path with each '/' replaced by ':'; "" when it does not exist or
 * resctrl is "". */
void res_find_mon_dir(const char *resctrl, const char *task, char *out, size_t size);

/* Open a task's files: psi_dir's cpu.pressure and memory.pressure (never through a symlink),
 * and remember mon_dir; either "" when not read. */
void res_files_open(struct res_files *f, const char *psi_dir, const char *mon_dir);

/* Close them. */
void res_files_close(struct res_files *f);

/* Read the files into r (signals not found stay has_* = false); err says why some were not
 * read. */
void res_read(const struct res_files *f, struct res_reading *r, struct res_errors *err);

/* The sample's signals from the readings at the window's start (a) and end (b) over window_us:
 * pressure = increase of the PSI total / window, at most 1; memory bandwidth = increase of
 * mbm_total_bytes / window in seconds; LLC occupancy = the end's. A total that went backwards (a
 * cgroup or group made anew) leaves its signal null. */
void res_apply(const struct res_reading *a, const struct res_reading *b, int64_t window_us,
	       struct cpi2_sample *s);

#endif
