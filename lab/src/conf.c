/* conf: see conf.h. */
#include "conf.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cpi2/log.h>

#include "common.h"

#define STR(f) CPI2_CFG_STR, offsetof(struct victim_conf, f), sizeof(((struct victim_conf *)0)->f)
#define NUM(t, f) t, offsetof(struct victim_conf, f), 0

static const struct cpi2_config_key keys[] = {
    {"rate", NUM(CPI2_CFG_DOUBLE, rate), "100",
     "requests per second, arriving at fixed intervals whether or not the last one is done (open "
     "loop: queueing shows as latency)",
     'r'},
    {"duration_s", NUM(CPI2_CFG_DOUBLE, duration_s), "0",
     "seconds to run; 0 = until SIGTERM or SIGINT", 'd'},
    {"cpu_ops", NUM(CPI2_CFG_INT, cpu_ops), "200000",
     "work per request: dependent 64-bit multiply-adds", 0},
    {"cache_loads", NUM(CPI2_CFG_INT, cache_loads), "2000",
     "work per request: dependent loads chasing a random cycle through a buffer of 4 x L2 (at most "
     "half the LLC), so other tasks' cache use slows it",
     0},
    {"cpu", NUM(CPI2_CFG_INT, cpu), "-1", "pin to this CPU; -1 = not pinned", 0},
    {"out", STR(out), "",
     "write one CSV line per request: arrival_us,latency_us,service_us (from the start; latency = "
     "arrival to completion, service = start to completion)",
     'o'},
    {"report", STR(report), "json", "json (one object on one line) or text", 0},
    {"cache_dir", STR(cache_dir), "",
     "cache sizes from DIR/index*/{level,type,size}; default: this machine's", 0},
    {"log_level", STR(log_level), "info", "error, warn, info or debug", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

static const char usage[] =
    "usage: cpi2-lab-victim [--rate R] [--duration-s S] [--out FILE] [--cpu C] [--config FILE]\n"
    "A latency-sensitive server for the lab: requests arrive at a set rate, each does a fixed\n"
    "amount of work (a CPU part and a cache-sensitive part), and its latency from arrival to\n"
    "completion is recorded; at the end (duration, SIGTERM or SIGINT) it reports p50/p99.";

int victim_conf_parse(struct victim_conf *c, int argc, char **argv, char *err, size_t errsz)
{
	int rc;

	memset(c, 0, sizeof(*c));
	rc = lab_parse_args(keys, c, argc, argv, usage, c->props, "cpi2-lab-victim", err, errsz);
	if (rc)
		return rc;
	rc = lab_check_common(c->rate, c->duration_s, c->cpu, c->report, c->log_level, err, errsz);
	if (rc)
		return rc;
	if (c->cpu_ops < 0 || c->cache_loads < 0 || c->cpu_ops + c->cache_loads == 0 ||
	    c->cpu_ops > 1000000000L || c->cache_loads > 1000000000L) {
		snprintf(err, errsz,
			 "cpu_ops and cache_loads must be 0 to 1e9, and not both 0 (a request "
			 "does some work)");
		return -EINVAL;
	}
	return 0;
}
