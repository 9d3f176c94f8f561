/* conf: see conf.h. */
#include "conf.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <cpi2/log.h>

#include "plan.h"
#include "probe.h"

#define STR(f) CPI2_CFG_STR, offsetof(struct conf, f), sizeof(((struct conf *)0)->f)
#define NUM(t, f) t, offsetof(struct conf, f), 0

static const struct cpi2_config_key keys[] = {
    {"kernel", STR(kernel), "",
     "cpu-int, cpu-fp, l1i, l1d, l2, llc, membw, memcap or probe (also the first argument)", 0},
    {"intensity", NUM(CPI2_CFG_INT, intensity), "50",
     "0-100: share of each period worked and size of the footprint", 0},
    {"duration_s", NUM(CPI2_CFG_DOUBLE, duration_s), "0",
     "seconds to run after setup; 0 = until SIGTERM or SIGINT", 0},
    {"threads", NUM(CPI2_CFG_INT, threads), "1", "threads running the kernel (1-256)", 0},
    {"cpu", NUM(CPI2_CFG_INT, cpu), "-1", "pin thread t to CPU cpu + t; -1 = not pinned", 0},
    {"report", STR(report), "json", "json (one object on one line) or text", 0},
    {"period_ms", NUM(CPI2_CFG_INT, period_ms), "20",
     "duty period (1-1000 ms): work intensity% of it, sleep the rest", 0},
    {"cache_dir", STR(cache_dir), "",
     "cache sizes from DIR/index*/{level,type,size}; "
     "default: /sys/devices/system/cpu/cpuN/cache, N = --cpu or 0",
     0},
    {"meminfo", STR(meminfo), "/proc/meminfo", "MemAvailable from this file", 0},
    {"memcap_fraction", NUM(CPI2_CFG_DOUBLE, memcap_fraction), "0.25",
     "memcap at intensity 100 holds this share of MemAvailable (at most 0.8)", 0},
    {"kind", STR(kind), "cache",
     "probe: cache (chase within the LLC), mem (chase beyond it) or cpu (multiply-add chain)", 0},
    {"units", NUM(CPI2_CFG_INT, units), "0",
     "probe: stop after this many units; 0 = at the duration or a signal", 0},
    {"unit_ops", NUM(CPI2_CFG_INT, unit_ops), "0",
     "probe: dependent loads or multiply-adds per unit; 0 = the kind's default", 0},
    {"log_level", STR(log_level), "info", "error, warn, info or debug", 0},
    {NULL, 0, 0, 0, NULL, NULL, 0}};

static const char usage[] =
    "usage: cpi2-ibench KERNEL [--intensity 0-100] [--duration-s S] [--threads N] [--cpu C]\n"
    "                          [--report json|text] [--config FILE]\n"
    "       cpi2-ibench probe --kind cache|cpu|mem [--duration-s S | --units N] [--cpu C]\n"
    "Contentious kernels after iBench: each presses on one resource (CPU, L1i, L1d, L2, LLC, "
    "memory\n"
    "bandwidth or capacity) for intensity% of each period, with a footprint sized from this "
    "machine's\n"
    "caches, and reports what it did on exit. The probe times fixed units of work (p50, p99).\n"
    "Kernels: cpu-int, cpu-fp, l1i, l1d, l2, llc, membw, memcap.";

int conf_parse(struct conf *c, int argc, char **argv, char *err, size_t errsz)
{
	const char *positional = NULL;
	int rc;

	memset(c, 0, sizeof(*c));
	if (argc > 1 && argv[1][0] != '-') {
		positional = argv[1];
		argc--, argv++; /* the parser skips argv[0]: the kernel's name stands in for it */
	}
	rc = cpi2_config_parse_args(keys, c, argc, argv, usage, c->props, err, errsz);
	if (rc)
		return rc;
	if (c->props[0]) {
		snprintf(err, errsz,
			 "%s: cpi2-ibench takes no Kafka properties (-X, --kafka-client-file)",
			 c->props[0]);
		return -EINVAL;
	}
	if (positional) {
		if (strlen(positional) >= sizeof(c->kernel)) {
			snprintf(err, errsz, "unknown kernel '%s' (one of %s, or probe)",
				 positional, ibench_kernel_names());
			return -EINVAL;
		}
		strcpy(c->kernel, positional);
	}
	if (!c->kernel[0]) {
		snprintf(err, errsz, "no kernel given (one of %s, or probe; see --help)",
			 ibench_kernel_names());
		return -EINVAL;
	}
	c->kernel_id = ibench_kernel_from_name(c->kernel);
	c->probe_kind = ibench_probe_kind_from_name(c->kind);
	if (c->kernel_id < 0 && strcmp(c->kernel, "probe") != 0) {
		snprintf(err, errsz, "unknown kernel '%s' (one of %s, or probe)", c->kernel,
			 ibench_kernel_names());
		return -EINVAL;
	}
	if (c->kernel_id < 0 && c->probe_kind < 0) {
		snprintf(err, errsz, "kind must be cache, cpu or mem, not '%s'", c->kind);
		return -EINVAL;
	}
	if (c->intensity < 0 || c->intensity > 100) {
		snprintf(err, errsz, "intensity must be between 0 and 100, not %ld", c->intensity);
		return -EINVAL;
	}
	if (!(c->duration_s >= 0 && c->duration_s <= 1e7)) {
		snprintf(err, errsz, "duration_s must be between 0 and 10000000, not %g",
			 c->duration_s);
		return -EINVAL;
	}
	if (c->threads < 1 || c->threads > 256) {
		snprintf(err, errsz, "threads must be between 1 and 256, not %ld", c->threads);
		return -EINVAL;
	}
	if (c->cpu < -1 || c->cpu + c->threads > CPU_SETSIZE) {
		snprintf(err, errsz,
			 "cpu must be -1 or a CPU number (with the threads, below %d), not %ld",
			 CPU_SETSIZE, c->cpu);
		return -EINVAL;
	}
	if (strcmp(c->report, "json") != 0 && strcmp(c->report, "text") != 0) {
		snprintf(err, errsz, "report must be json or text, not '%s'", c->report);
		return -EINVAL;
	}
	if (c->period_ms < 1 || c->period_ms > 1000) {
		snprintf(err, errsz, "period_ms must be between 1 and 1000, not %ld", c->period_ms);
		return -EINVAL;
	}
	if (!(c->memcap_fraction > 0 && c->memcap_fraction <= IBENCH_MEM_MAX_FRACTION)) {
		snprintf(err, errsz, "memcap_fraction must be above 0 and at most %.1f, not %g",
			 IBENCH_MEM_MAX_FRACTION, c->memcap_fraction);
		return -EINVAL;
	}
	if (c->units < 0 || c->unit_ops < 0 || c->unit_ops > 1000000000) {
		snprintf(err, errsz,
			 "units and unit_ops must be 0 or positive (unit_ops at most 1000000000)");
		return -EINVAL;
	}
	return cpi2_log_set_level_name(c->log_level, err, errsz);
}
