/* machine: what the kernels are sized from: the cache sizes of a CPU (sysfs
 * /sys/devices/system/cpu/cpuN/cache/index* /{level,type,size}) and the memory available
 * (/proc/meminfo). Parsers take text or a directory so tests feed them fixtures; malformed
 * content is -EINVAL, never a crash. */
#ifndef IBENCH_MACHINE_H
#define IBENCH_MACHINE_H

#include <stddef.h>
#include <stdint.h>

/* Defaults for a cache level sysfs does not describe (each use is reported). */
#define IBENCH_DEFAULT_L1D (32u << 10)
#define IBENCH_DEFAULT_L1I (32u << 10)
#define IBENCH_DEFAULT_L2 (1u << 20)
#define IBENCH_DEFAULT_LLC (8u << 20)

enum { IBENCH_CACHE_L1D = 1, IBENCH_CACHE_L1I = 2, IBENCH_CACHE_L2 = 4, IBENCH_CACHE_LLC = 8 };

struct ibench_caches {
	uint64_t l1d, l1i, l2, llc; /* bytes */
	int llc_level;		    /* level of the last-level cache (0 when defaulted) */
	unsigned defaulted;	    /* IBENCH_CACHE_* bits of the sizes that are defaults */
};

/* A sysfs cache size: "32K", "1024K", "8M", "1G" or plain bytes "32768", an optional final
 * newline. Returns 0, or -EINVAL (empty, zero, unknown suffix, trailing junk) or -ERANGE. */
int ibench_parse_size(const char *text, uint64_t *bytes);

/* Read the cache sizes under dir (a cpuN/cache directory): L1 data and instruction (a unified
 * L1 counts as both), L2, and the last level (the highest level of 2 or more that holds data).
 * Sizes sysfs does not give (a missing or malformed file, no such level) get the defaults
 * above. Returns 0 when every size came from sysfs, otherwise -ENOENT with what was defaulted
 * and why in err; out is filled in both cases. */
int ibench_caches_read(const char *dir, struct ibench_caches *out, char *err, size_t errsz);

/* MemAvailable from the text of /proc/meminfo, in bytes. Returns 0 or -EINVAL. */
int ibench_parse_meminfo(const char *text, uint64_t *available);

#endif
