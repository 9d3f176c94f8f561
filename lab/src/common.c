/* common: see common.h. */
#include "common.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

#include <cpi2/log.h>

int lab_parse_args(const struct cpi2_config_key *keys, void *conf, int argc, char **argv,
		   const char *usage, const char **props, const char *program, char *err,
		   size_t errsz)
{
	int rc = cpi2_config_parse_args(keys, conf, argc, argv, usage, props, err, errsz);

	if (rc)
		return rc;
	if (props[0]) {
		snprintf(err, errsz, "%s: %s takes no Kafka properties (-X)", props[0], program);
		return -EINVAL;
	}
	return 0;
}

int lab_check_common(double rate, double duration_s, long cpu, const char *report,
		     const char *log_level, char *err, size_t errsz)
{
	if (!(rate > 0 && rate <= 1e6)) {
		snprintf(err, errsz, "rate must be above 0 and at most 1000000 per second, not %g",
			 rate);
		return -EINVAL;
	}
	if (!(duration_s >= 0 && duration_s <= 30 * 86400.0)) {
		snprintf(err, errsz, "duration_s must be 0 to 30 days, not %g", duration_s);
		return -EINVAL;
	}
	if (cpu < -1 || cpu > 4095) {
		snprintf(err, errsz, "cpu must be -1 or a CPU number, not %ld", cpu);
		return -EINVAL;
	}
	if (strcmp(report, "json") && strcmp(report, "text")) {
		snprintf(err, errsz, "report must be json or text, not '%s'", report);
		return -EINVAL;
	}
	return cpi2_log_set_level_name(log_level, err, errsz) ? -EINVAL : 0;
}

int lab_pin(const char *module, long cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return 0;
	CPU_ZERO(&set);
	CPU_SET((int)cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		cpi2_log(CPI2_LOG_ERR, module, "pin to CPU %ld: %s", cpu, strerror(errno));
		return -1;
	}
	return 0;
}

double lab_cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}
