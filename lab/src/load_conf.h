/* load_conf: every setting of cpi2-lab-load, one field each (the key table in load_conf.c gives
 * the defaults, the config file keys, the command-line options and --help). */
#ifndef LAB_LOAD_CONF_H
#define LAB_LOAD_CONF_H

#include <cpi2/config.h>

#include <stdbool.h>

#define LOAD_MAX_TARGETS 64

enum load_protocol { LOAD_REDIS, LOAD_HTTP };

struct load_conf {
	char targets[4096]; /* host:port[,host:port...] */
	char protocol[16];  /* redis or http */
	double rate;	    /* requests per second to each target */
	char arrivals[16];  /* poisson or uniform */
	double duration_s;  /* stop sending after this long (0: until SIGTERM or SIGINT) */
	long connections;   /* per target */
	char path[1024];    /* http: the path each GET asks for */
	long keys;	    /* redis: GET over this many keys, SET at the start */
	long value_bytes;   /* redis: the size of each key's value */
	double drain_s;	    /* after the last request: wait this long for its answers */
	long cpu;	    /* pin to this CPU (-1: not pinned) */
	long rt_priority;   /* SCHED_FIFO priority (0: the normal scheduler) */
	long seed;	    /* of the arrivals and the keys */
	char out[4096];	    /* one CSV line per request ("" = none) */
	char report[16];    /* json or text */
	char log_level[16]; /* error, warn, info, debug */
	const char *props[CPI2_CONFIG_MAX_PROPS]; /* -X: refused */

	/* derived by load_conf_parse */
	enum load_protocol proto;
	bool poisson;
	int ntargets;
	char host[LOAD_MAX_TARGETS][64];
	int port[LOAD_MAX_TARGETS];
};

/* Defaults, --config FILE, then the options; values checked against each other and the targets
 * split. Returns 0, 1 after --help, or -EINVAL with a reason. */
int load_conf_parse(struct load_conf *c, int argc, char **argv, char *err, size_t errsz);

#endif
