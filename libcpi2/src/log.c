/* log: see cpi2/log.h. */
#include <cpi2/log.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int current = CPI2_LOG_INFO, format = CPI2_LOG_TEXT;
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

void cpi2_log_set_format(int f)
{
	format = f;
}

int cpi2_log_set_format_name(const char *name, char *err, size_t errsz)
{
	if (strcmp(name, "text") && strcmp(name, "json")) {
		snprintf(err, errsz, "log_format '%s': log_format must be text or json", name);
		return -EINVAL;
	}
	cpi2_log_set_format(strcmp(name, "json") == 0 ? CPI2_LOG_JSON : CPI2_LOG_TEXT);
	return 0;
}

/* The length of the UTF-8 character at s (well formed: no overlong form, no surrogate, at most
 * U+10FFFF), or 0. */
static size_t utf8_char(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		unsigned lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 ? 3 : 0;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		unsigned lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;

		return s[1] >= lo && s[1] <= hi && (s[2] & 0xc0) == 0x80 && (s[3] & 0xc0) == 0x80
			   ? 4
			   : 0;
	}
	return 0;
}

size_t cpi2_log_json_escape(const char *s, char *out, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!size)
		return 0;
	while (*p) {
		char esc[8];
		const char *piece = esc;
		size_t n = utf8_char(p), len;

		if (n == 0) {
			piece = "\\ufffd";
			len = 6;
			n = 1;
		} else if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			len = 2;
		} else if (*p < 0x20 || *p == 0x7f) {
			len = (size_t)snprintf(esc, sizeof(esc), "\\u%04x", *p);
		} else {
			piece = (const char *)p;
			len = n;
		}
		if (o + len >= size)
			break;
		memcpy(out + o, piece, len);
		o += len;
		p += n;
	}
	out[o] = '\0';
	return o;
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
	if (format == CPI2_LOG_JSON) {
		static const char *const lower[] = {"error", "warn", "info", "debug"};
		char msg[2048], json[4096];
		size_t o;

		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		o = (size_t)snprintf(json, sizeof(json),
				     "{\"time\":\"%.24s\",\"level\":\"%s\",\"module\":\"", line,
				     lower[level > 3 ? 3 : level]);
		o += cpi2_log_json_escape(module, json + o, 128);
		o += (size_t)snprintf(json + o, sizeof(json) - o, "\",\"msg\":\"");
		cpi2_log_json_escape(msg, json + o, sizeof(json) - o - 3);
		fprintf(stderr, "%s\"}\n", json);
		return;
	}
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	/* One write per line so that lines of several threads do not interleave. */
	fprintf(stderr, "%s\n", line);
}
