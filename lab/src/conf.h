/* conf: every setting of cpi2-lab-victim, one field each (the key table in conf.c gives the
 * defaults, the config file keys, the command-line options and --help). */
#ifndef LAB_CONF_H
#define LAB_CONF_H

#include <cpi2/config.h>

#include <stdbool.h>

struct victim_conf {
	double rate;	      /* requests per second, arriving at fixed intervals */
	double duration_s;    /* stop after this long (0: until SIGTERM or SIGINT) */
	long cpu_ops;	      /* per request: dependent multiply-adds */
	long cache_loads;     /* per request: dependent loads over the cache buffer */
	long cpu;	      /* pin to this CPU (-1: not pinned) */
	char out[4096];	      /* latency records, CSV ("" = none) */
	char report[16];      /* json or text */
	char cache_dir[4096]; /* sysfs cache directory ("" = the CPU's) */
	char log_level[16];   /* error, warn, info, debug */
	const char *props[CPI2_CONFIG_MAX_PROPS]; /* -X: refused */
};

/* Defaults, --config FILE, then the options; values checked against each other. Returns 0, 1
 * after --help, or -EINVAL with a reason. */
int victim_conf_parse(struct victim_conf *c, int argc, char **argv, char *err, size_t errsz);

#endif
