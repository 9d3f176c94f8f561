/* conf: the kernel as first argument or key, defaults, a config file under the command line,
 * and every refusal naming the option and the value. */
#include "conf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "plan.h"
#include "probe.h"

static int vparse(struct conf *c, char *err, size_t errsz, va_list ap)
{
	char *argv[32] = {"cpi2-ibench"}, *a;
	int argc = 1;

	while ((a = va_arg(ap, char *)) && argc < 31)
		argv[argc++] = a;
	argv[argc] = NULL;
	err[0] = '\0';
	return conf_parse(c, argc, argv, err, errsz);
}

static int parse(struct conf *c, char *err, size_t errsz, ...)
{
	va_list ap;
	int rc;

	va_start(ap, errsz);
	rc = vparse(c, err, errsz, ap);
	va_end(ap);
	return rc;
}

#define PARSE(c, err, ...) parse(c, err, sizeof(err), __VA_ARGS__, (char *)NULL)

/* The arguments (NULL-terminated) are refused with why in the message. */
static void refused(const char *why, ...)
{
	char err[512];
	struct conf c;
	va_list ap;
	int rc;

	va_start(ap, why);
	rc = vparse(&c, err, sizeof(err), ap);
	va_end(ap);
	if (rc != -EINVAL || !strstr(err, why)) {
		fprintf(stderr, "rc %d: want '%s' in '%s'\n", rc, why, err);
		CHECK(0);
	}
}

int main(void)
{
	struct conf c;
	char err[512], path[] = "/tmp/ibench-conf-test-XXXXXX";
	int fd;

	CHECK(PARSE(&c, err, "llc") == 0);
	CHECK(c.kernel_id == IBENCH_LLC && c.intensity == 50 && c.duration_s == 0 &&
	      c.threads == 1 && c.cpu == -1);
	CHECK(!strcmp(c.report, "json") && c.period_ms == 20 && c.memcap_fraction == 0.25 &&
	      !c.cache_dir[0]);
	CHECK(!strcmp(c.meminfo, "/proc/meminfo"));

	CHECK(PARSE(&c, err, "membw", "--intensity", "100", "--duration-s", "0.3", "--threads", "2",
		    "--cpu", "1", "--report", "text", "--period-ms", "50", "--cache-dir",
		    "/tmp/x") == 0);
	CHECK(c.kernel_id == IBENCH_MEMBW && c.intensity == 100 && c.duration_s == 0.3 &&
	      c.threads == 2);
	CHECK(c.cpu == 1 && !strcmp(c.report, "text") && c.period_ms == 50 &&
	      !strcmp(c.cache_dir, "/tmp/x"));

	CHECK(PARSE(&c, err, "probe", "--kind", "mem", "--units", "10", "--unit-ops", "64") == 0);
	CHECK(c.kernel_id == -1 && c.probe_kind == IBENCH_PROBE_MEM && c.units == 10 &&
	      c.unit_ops == 64);

	/* the config file names the kernel and more; the command line wins over it */
	fd = mkstemp(path);
	CHECK(fd >= 0);
	dprintf(fd, "# antagonist\nkernel = l2\nintensity = 30\nthreads = 2\n");
	close(fd);
	CHECK(PARSE(&c, err, "--config", path) == 0);
	CHECK(c.kernel_id == IBENCH_L2 && c.intensity == 30 && c.threads == 2);
	CHECK(PARSE(&c, err, "l1d", "--config", path, "--intensity=70") == 0);
	CHECK(c.kernel_id == IBENCH_L1D && c.intensity == 70 && c.threads == 2);
	fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0);
	dprintf(fd, "kernel = llc\nintensity = lots\n");
	close(fd);
	CHECK(PARSE(&c, err, "--config", path) == -EINVAL);
	CHECK(strstr(err, ":2: intensity: 'lots' is not an integer"));
	unlink(path);

	/* --help: 1, nothing else checked */
	CHECK(PARSE(&c, err, "--help") == 1);

	refused(
	    "no kernel given (one of cpu-int, cpu-fp, l1i, l1d, l2, llc, membw, memcap, or probe",
	    NULL);
	refused("no kernel given", "--intensity", "5", NULL);
	refused("unknown kernel 'l3'", "l3", NULL);
	refused("unknown kernel 'a-very-long-kernel-name'", "a-very-long-kernel-name", NULL);
	refused("unexpected argument 'extra'", "llc", "extra", NULL);
	refused("unknown option '--bogus'", "llc", "--bogus", "1", NULL);
	refused("intensity must be between 0 and 100, not 101", "llc", "--intensity", "101", NULL);
	refused("intensity must be between 0 and 100, not -1", "llc", "--intensity", "-1", NULL);
	refused("intensity: 'half' is not an integer", "llc", "--intensity", "half", NULL);
	refused("option '--intensity' needs a value", "llc", "--intensity", NULL);
	refused("duration_s must be between 0 and 10000000, not -1", "llc", "--duration-s", "-1",
		NULL);
	refused("duration_s must be between 0", "llc", "--duration-s", "nan", NULL);
	refused("threads must be between 1 and 256, not 0", "llc", "--threads", "0", NULL);
	refused("threads must be between 1 and 256, not 257", "llc", "--threads", "257", NULL);
	refused("cpu must be -1 or a CPU number", "llc", "--cpu", "-2", NULL);
	refused("cpu must be -1 or a CPU number", "llc", "--cpu", "1024", NULL);
	refused("report must be json or text, not 'xml'", "llc", "--report", "xml", NULL);
	refused("period_ms must be between 1 and 1000, not 0", "llc", "--period-ms", "0", NULL);
	refused("period_ms must be between 1 and 1000, not 1001", "llc", "--period-ms", "1001",
		NULL);
	refused("memcap_fraction must be above 0 and at most 0.8, not 0.9", "memcap",
		"--memcap-fraction", "0.9", NULL);
	refused("memcap_fraction must be above 0", "memcap", "--memcap-fraction", "0", NULL);
	refused("kind must be cache, cpu or mem, not 'disk'", "probe", "--kind", "disk", NULL);
	refused("units and unit_ops must be 0 or positive", "probe", "--units", "-1", NULL);
	refused("units and unit_ops must be 0 or positive", "probe", "--unit-ops", "2000000000",
		NULL);
	refused("log_level must be error, warn, info or debug", "llc", "--log-level", "loud", NULL);
	refused("linger.ms=5: cpi2-ibench takes no Kafka properties (-X, --kafka-client-file)",
		"llc", "-X", "linger.ms=5", NULL);
	return 0;
}
