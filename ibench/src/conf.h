/* conf: cpi2-ibench's options (one table: defaults, config file, command line, --help). */
#ifndef IBENCH_CONF_H
#define IBENCH_CONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include <cpi2/config.h>

struct conf {
	char kernel[16];	  /* a kernel name or "probe"; also the first argument */
	long intensity;		  /* 0-100: duty cycle and footprint */
	double duration_s;	  /* of the run after setup; 0: until SIGTERM or SIGINT */
	long threads;		  /* threads of the kernel */
	long cpu;		  /* first CPU to pin to (thread t on cpu + t); -1: not pinned */
	char report[8];		  /* json or text */
	long period_ms;		  /* duty period */
	char cache_dir[PATH_MAX]; /* cache sizes; "": /sys/devices/system/cpu/cpuN/cache */
	char meminfo[PATH_MAX];	  /* MemAvailable from here */
	double memcap_fraction;	  /* memcap at 100: this share of MemAvailable */
	char kind[8];		  /* probe: cache, cpu or mem */
	long units;		  /* probe: units to run (0: until the duration or a signal) */
	long unit_ops; /* probe: loads or multiply-adds per unit (0: the kind's default) */
	char log_level[16];
	const char *props[CPI2_CONFIG_MAX_PROPS]; /* -X: refused */
	int kernel_id;				  /* enum ibench_kernel, or -1 for the probe */
	int probe_kind;				  /* IBENCH_PROBE_* when kernel_id is -1 */
};

/* Parse "cpi2-ibench [KERNEL] [options]": KERNEL, when given, is the first argument and wins
 * over a kernel key in --config. Checks every value. Returns 0, 1 after --help, or -EINVAL
 * with the reason in err. */
int conf_parse(struct conf *c, int argc, char **argv, char *err, size_t errsz);

#endif
