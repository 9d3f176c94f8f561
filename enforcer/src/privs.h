/* privs: the enforcer gives up every capability it does not need once it has started.
 *
 * It stays uid 0: the cgroup files it writes (cpu.max, cpu.cfs_*_us) and its state folder
 * are owned by root and writable by their owner, so writing them takes no capability at all.
 * Everything else root could do is dropped: the effective, permitted, inheritable and ambient
 * sets are emptied (or left with keep_capabilities), the bounding set likewise, and
 * no_new_privs is set, so no exec can gain any back. */
#ifndef CPI2_ENFORCER_PRIVS_H
#define CPI2_ENFORCER_PRIVS_H

#include <stddef.h>
#include <stdint.h>

/* Parse a comma-separated list of capability names ("dac_override", "cap_dac_override") into
 * a mask. Returns 0 or -EINVAL naming the unknown one. */
int privs_parse(const char *list, uint64_t *mask, char *err, size_t errsz);

/* The names in mask, comma-separated ("none" when empty). */
void privs_names(uint64_t mask, char *out, size_t outsz);

/* Keep only the capabilities in keep (in every set, the bounding set included) and set
 * no_new_privs. Returns 0, or -errno with a reason. A process without CAP_SETPCAP (not root)
 * cannot shrink its bounding set: that is reported in err with a return of 0, since it then
 * holds no capability to drop. */
int privs_drop(uint64_t keep, char *err, size_t errsz);

#endif
