/* log: see cpi2/log.h. */
#include <cpi2/log.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int current = CPI2_LOG_INFO;
static const char *const names[] = {"ERROR", "WARN", "INFO", "DEBUG"};

void cpi2_log_set_level(int level)
{
	current = level;
}

int cpi2_log_parse_level(const char *name)
{
	static const char *const lower[] = {"error", "warn", "info", "debug"};

	for (int i = 0; i < 4; i++)
		if (strcmp(name, lower[i]) == 0)
			return i;
	return -1;
}

int cpi2_log_set_level_name(const char *name, char *err, size_t errsz)
{
	int level = cpi2_log_parse_level(name);

	if (level < 0) {
		snprintf(err, errsz, "log_level '%s': log_level must be error, warn, info or debug",
			 name);
		return -EINVAL;
	}
	cpi2_log_set_level(level);
	return 0;
}

void cpi2_log(int level, const char *module, const char *fmt, ...)
{
	struct timespec ts;
	struct tm tm;
	char line[2048];
	int n;
	va_list ap;

	if (level > current || level < 0)
		return;
	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	n = snprintf(line, sizeof(line),
		     "%04d-%02d-%02dT%02d:%02d:%02d.%03ldZ %s %s: ", tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		     ts.tv_nsec / 1000000, names[level > 3 ? 3 : level], module);
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line so that lines of several threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}
