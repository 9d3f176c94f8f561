/* load_conf: see load_conf.h. */
#include "load_conf.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpi2/log.h>

#include "common.h"

#define STR(f) CPI2_CFG_STR, offsetof(struct load_conf, f), sizeof(((struct load_conf *)0)->f)
#define NUM(t, f) t, offsetof(struct load_conf, f), 0

static const struct cpi2_config_key keys[] = {
    {"targets", STR(targets), "",
     "the servers, host:port[,host:port...] (IPv4 addresses); each gets its own connections and "
     "its own arrivals",
     't'},
    {"protocol", STR(protocol), "redis",
     "redis (GET of a random key, RESP) or http (HTTP/1.1 GET of --path, keep-alive)", 'p'},
    {"rate", NUM(CPI2_CFG_DOUBLE, rate), "1000",
     "requests per second to each target, sent at their scheduled times whether or not the "
     "earlier ones were answered (open loop: a slow server's queue shows as latency)",
     'r'},
    {"arrivals", STR(arrivals), "poisson",
     "poisson (exponential gaps, as independent users arrive) or uniform (fixed gaps)", 0},
    {"duration_s", NUM(CPI2_CFG_DOUBLE, duration_s), "0",
     "seconds to send; 0 = until SIGTERM or SIGINT", 'd'},
    {"connections", NUM(CPI2_CFG_INT, connections), "2",
     "connections to each target; requests go round-robin over them, pipelined when earlier "
     "ones are unanswered",
     'c'},
    {"path", STR(path), "/", "http: the path each GET asks for", 0},
    {"keys", NUM(CPI2_CFG_INT, keys), "10000",
     "redis: each GET asks for one of this many keys, chosen at random; SET on each target "
     "before the first request",
     0},
    {"value_bytes", NUM(CPI2_CFG_INT, value_bytes), "256", "redis: the size of each key's value",
     0},
    {"drain_s", NUM(CPI2_CFG_DOUBLE, drain_s), "2",
     "after the last request is sent, wait at most this long for the answers still due", 0},
    {"cpu", NUM(CPI2_CFG_INT, cpu), "-1", "pin to this CPU; -1 = not pinned", 0},
    {"rt_priority", NUM(CPI2_CFG_INT, rt_priority), "0",
     "run under SCHED_FIFO at this priority (1-99), so other work on its CPU delays the servers' "
     "answers, not their measurement; 0 = the normal scheduler",
     0},
    {"seed", NUM(CPI2_CFG_INT, seed), "1", "seed of the arrivals and the keys", 0},
    {"out", STR(out), "",
     "write one CSV line per request: target,sched_us,latency_us,lag_us,ok (target: its index "
     "in --targets; sched_us: when it was due, from the start; latency: due to answered; lag: due "
     "to handed to the socket; ok 0: an error answer, or none before the end)",
     'o'},
    {"report", STR(report), "json", "json (one object on one line) or text", 0},
    {"log_level", STR(log_level), "info", "error, warn, info or debug", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

static const char usage[] =
    "usage: cpi2-lab-load --targets HOST:PORT[,...] [--protocol redis|http] [--rate R]\n"
    "       [--duration-s S] [--out FILE] [--cpu C] [--rt-priority P] [--config FILE]\n"
    "An open-loop load generator for real servers: each target gets requests at its scheduled\n"
    "times (Poisson arrivals at --rate) whether or not the earlier ones were answered, and each\n"
    "request's latency is counted from when it was due to when its answer arrived; at the end\n"
    "(duration, SIGTERM or SIGINT, then the drain) it reports p50/p90/p99/p99.9, overall and per\n"
    "target.";

static int split_targets(struct load_conf *c, char *err, size_t errsz)
{
	char buf[sizeof(c->targets)], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", c->targets);
	c->ntargets = 0;
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(t, ':'), *end;
		long port;

		if (c->ntargets == LOAD_MAX_TARGETS) {
			snprintf(err, errsz, "targets: at most %d", LOAD_MAX_TARGETS);
			return -EINVAL;
		}
		if (!colon || colon == t || (size_t)(colon - t) >= sizeof(c->host[0])) {
			snprintf(err, errsz, "targets: '%s' is not host:port", t);
			return -EINVAL;
		}
		errno = 0;
		port = strtol(colon + 1, &end, 10);
		if (errno || *end || end == colon + 1 || port < 1 || port > 65535) {
			snprintf(err, errsz, "targets: '%s': the port must be 1 to 65535", t);
			return -EINVAL;
		}
		memcpy(c->host[c->ntargets], t, (size_t)(colon - t));
		c->host[c->ntargets][colon - t] = 0;
		c->port[c->ntargets++] = (int)port;
	}
	if (!c->ntargets) {
		snprintf(err, errsz, "targets: none given (--targets host:port[,host:port...])");
		return -EINVAL;
	}
	return 0;
}

int load_conf_parse(struct load_conf *c, int argc, char **argv, char *err, size_t errsz)
{
	int rc;

	memset(c, 0, sizeof(*c));
	rc = lab_parse_args(keys, c, argc, argv, usage, c->props, "cpi2-lab-load", err, errsz);
	if (rc)
		return rc;
	if (!strcmp(c->protocol, "redis"))
		c->proto = LOAD_REDIS;
	else if (!strcmp(c->protocol, "http"))
		c->proto = LOAD_HTTP;
	else {
		snprintf(err, errsz, "protocol must be redis or http, not '%s'", c->protocol);
		return -EINVAL;
	}
	if (!strcmp(c->arrivals, "poisson"))
		c->poisson = true;
	else if (strcmp(c->arrivals, "uniform")) {
		snprintf(err, errsz, "arrivals must be poisson or uniform, not '%s'", c->arrivals);
		return -EINVAL;
	}
	rc = lab_check_common(c->rate, c->duration_s, c->cpu, c->report, c->log_level, err, errsz);
	if (rc)
		return rc;
	if (!(c->drain_s >= 0 && c->drain_s <= 3600)) {
		snprintf(err, errsz, "drain_s must be 0 to 3600, not %g", c->drain_s);
		return -EINVAL;
	}
	if (c->connections < 1 || c->connections > 64) {
		snprintf(err, errsz, "connections must be 1 to 64, not %ld", c->connections);
		return -EINVAL;
	}
	if (c->keys < 1 || c->keys > 10000000) {
		snprintf(err, errsz, "keys must be 1 to 10000000, not %ld", c->keys);
		return -EINVAL;
	}
	if (c->value_bytes < 0 || c->value_bytes > 1048576) {
		snprintf(err, errsz, "value_bytes must be 0 to 1048576, not %ld", c->value_bytes);
		return -EINVAL;
	}
	if (c->path[0] != '/' || strpbrk(c->path, " \r\n")) {
		snprintf(err, errsz, "path must start with / and hold no blank or line end: '%s'",
			 c->path);
		return -EINVAL;
	}
	if (c->rt_priority < 0 || c->rt_priority > 99) {
		snprintf(err, errsz, "rt_priority must be 0 to 99, not %ld", c->rt_priority);
		return -EINVAL;
	}
	return split_targets(c, err, errsz);
}
