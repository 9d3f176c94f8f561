/* log: one line per event on stderr: "2026-11-22T12:00:00.123Z WARN enforcer: ...", or with
 * the json format one JSON object a line: {"time":"2026-11-22T12:00:00.123Z","level":"warn",
 * "module":"enforcer","msg":"..."} (the message's bytes that are not UTF-8 become U+FFFD). */
#ifndef CPI2_LOG_H
#define CPI2_LOG_H

#include <stddef.h>

enum { CPI2_LOG_ERR = 0, CPI2_LOG_WARN = 1, CPI2_LOG_INFO = 2, CPI2_LOG_DEBUG = 3 };
#define CPI2_LOG_ERROR CPI2_LOG_ERR

/* Write one log line if level is at or below the current level. module names the program or
 * library part ("collector", "kafka"). */
void cpi2_log(int level, const char *module, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Set the highest level written (default CPI2_LOG_INFO). */
void cpi2_log_set_level(int level);

/* Parse "error", "warn", "info" or "debug"; returns the level or -1. */
int cpi2_log_parse_level(const char *name);

/* Set the level from its name (a program's log_level option). Returns 0, or -EINVAL with a
 * reason in err naming the option and the value. */
int cpi2_log_set_level_name(const char *name, char *err, size_t errsz);

enum { CPI2_LOG_TEXT = 0, CPI2_LOG_JSON = 1 };

/* The help of the agents' log_format option (one text for every agent). */
#define CPI2_LOG_FORMAT_HELP "text (one line an event) or json (one JSON object a line)"

/* Set the format from its name (a program's log_format option). Returns 0, or -EINVAL with a
 * reason in err naming the option and the value. */
int cpi2_log_set_format_name(const char *name, char *err, size_t errsz);

/* Set the format (CPI2_LOG_TEXT or CPI2_LOG_JSON). */
void cpi2_log_set_format(int format);

/* Write s as the inside of a JSON string into out (at most size bytes with the NUL; cut at a
 * character's end): quotes, backslashes and control characters escaped, bytes that are not
 * UTF-8 as \ufffd. Returns the length written. */
size_t cpi2_log_json_escape(const char *s, char *out, size_t size);

#endif
