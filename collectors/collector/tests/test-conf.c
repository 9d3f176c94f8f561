/* conf: the collector's options table: defaults, file, command line, and errors that name the
 * file:line or the option and what is wrong. */
#include "conf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

static struct collector_conf c;
static char err[1024];
static const char *props[CPI2_CONFIG_MAX_PROPS];

static int parse(int argc, char **argv)
{
	int rc;

	memset(&c, 0, sizeof(c));
	err[0] = '\0';
	rc = cpi2_config_parse_args(collector_conf_keys, &c, argc, argv, collector_usage, props,
				    err, sizeof(err));
	if (rc == 0)
		rc = collector_conf_check(&c, err, sizeof(err));
	return rc;
}

#define ARGS(...)                                                                                  \
	(int)(sizeof((char *[]){"cpi2-collector", __VA_ARGS__}) / sizeof(char *)), (char *[])      \
	{                                                                                          \
		"cpi2-collector", __VA_ARGS__                                                      \
	}

int main(void)
{
	char path[64];
	FILE *f;

	/* defaults: the paper's 10 s every 60 s, hardware events */
	CHECK(parse(ARGS("--dry-run")) == 0);
	CHECK(c.window_s == 10 && c.period_s == 60 && !strcmp(c.events, "hardware") &&
	      c.default_rules);
	CHECK(!strcmp(c.topic, "cpi2.samples") && !strcmp(c.roots, "auto") && c.dry_run && !c.once);

	/* a file, then the command line over it; -X collected */
	strcpy(path, "/tmp/cpi2-conf-XXXXXX");
	int fd = mkstemp(path);
	CHECK(fd >= 0 && (f = fdopen(fd, "w")));
	fputs("# collector\nwindow_s = 5\nperiod_s = 30\nevents = task-clock\nroots = "
	      "/a,/b\ndefault_rules = false\n",
	      f);
	fclose(f);
	CHECK(parse(ARGS("--config", path, "--period-s", "20", "-X", "linger.ms=1", "--once")) ==
	      0);
	CHECK(c.window_s == 5 && c.period_s == 20 && !strcmp(c.events, "task-clock") &&
	      !strcmp(c.roots, "/a,/b"));
	CHECK(!c.default_rules && c.once && props[0] && !strcmp(props[0], "linger.ms=1") &&
	      !props[1]);

	/* file errors name path:line */
	f = fopen(path, "w");
	fputs("window_s = 5\n\nwindow_s = soon\n", f);
	fclose(f);
	CHECK(parse(ARGS("--config", path)) == -EINVAL);
	char want[128];
	snprintf(want, sizeof(want), "%s:3: window_s: 'soon' is not a number", path);
	CHECK(strstr(err, want));
	f = fopen(path, "w");
	fputs("windw_s = 5\n", f);
	fclose(f);
	CHECK(parse(ARGS("--config", path)) == -EINVAL &&
	      strstr(err, ":1: unknown option 'windw_s'"));
	f = fopen(path, "w");
	fputs("just words\n", f);
	fclose(f);
	CHECK(parse(ARGS("--config", path)) == -EINVAL &&
	      strstr(err, ":1: expected 'key = value'"));
	unlink(path);
	CHECK(parse(ARGS("--config", path)) == -EINVAL && strstr(err, "No such file"));

	/* command-line errors and inconsistent values */
	CHECK(parse(ARGS("--window-s")) == -EINVAL && strstr(err, "needs a value"));
	CHECK(parse(ARGS("--nonsense", "1")) == -EINVAL &&
	      strstr(err, "unknown option '--nonsense'"));
	CHECK(parse(ARGS("--max-depth", "deep")) == -EINVAL && strstr(err, "not an integer"));
	CHECK(parse(ARGS("--once=maybe")) == -EINVAL && strstr(err, "not true or false"));
	CHECK(parse(ARGS("--window-s", "70")) == -EINVAL && strstr(err, "at most period_s"));
	CHECK(parse(ARGS("--window-s", "0")) == -EINVAL && strstr(err, "window_s (0)"));
	CHECK(parse(ARGS("--window-s", "nan")) == -EINVAL);
	CHECK(parse(ARGS("--max-depth", "0")) == -EINVAL && strstr(err, "max_depth"));
	CHECK(parse(ARGS("--log-level", "loud")) == -EINVAL && strstr(err, "log_level 'loud'"));
	CHECK(parse(ARGS("--brokers", "")) == -EINVAL && strstr(err, "brokers is empty"));
	CHECK(parse(ARGS("--brokers", "", "--dry-run")) == 0);
	CHECK(parse(ARGS("-X", "nokeyvalue")) == -EINVAL && strstr(err, "-X needs key=value"));
	CHECK(parse(ARGS("stray")) == -EINVAL && strstr(err, "unexpected argument 'stray'"));
	printf("test-conf: ok\n");
	return 0;
}
