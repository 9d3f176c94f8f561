/* sim: what the enforcer needs to act for a fleet simulator's hosts (cpi2-fleetsim
 * --cgroup-root DIR) instead of its own: every folder under sim_hosts_root is a host whose
 * cgroup root is that folder, and the clock is the simulated time in clock_file. Without those
 * two options, the one host of the configuration and the wall clock. */
#ifndef CPI2_ENFORCER_SIM_H
#define CPI2_ENFORCER_SIM_H

#include <stdint.h>

#include "conf.h"

#define SIM_MAX_HOSTS 4096 /* host folders served at most */

/* A host to serve: its name and its cgroup root (malloc'd, the caller's). */
struct sim_host {
	char name[256];
	char *root;
};

/* The hosts this process serves, in *out (malloc'd to their number, the caller's; NULL when
 * none): conf's host at cgroup_root, or with sim_hosts_root every folder under it (at most
 * SIM_MAX_HOSTS). Returns their number or -errno (err says why; *out may hold the hosts read
 * before the failure, roots included, for the caller to free). */
int sim_hosts(const struct conf *c, struct sim_host **out, char *err, size_t errsz);

/* Now in microseconds since the epoch: the wall clock, or with clock_file the number in that
 * file (the wall clock, with one warning, while the file cannot be read). */
int64_t sim_now_us(const struct conf *c);

#endif
