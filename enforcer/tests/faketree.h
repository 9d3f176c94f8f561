/* A fake cgroup tree in a temp dir, v1 or v2 style, for the enforcer's tests. */
#ifndef CPI2_ENFORCER_FAKETREE_H
#define CPI2_ENFORCER_FAKETREE_H
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static inline void fake_write(const char *dir, const char *file, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "w");
	if (!f) {
		perror(p);
		exit(1);
	}
	fputs(text, f);
	fclose(f);
}

static inline char *fake_read(const char *dir, const char *file)
{
	static char buf[256];
	char p[PATH_MAX];
	FILE *f;
	size_t n;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "r");
	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* mkdir -p root/rel and give it v1 or v2 limit files with no limit. */
static inline void fake_cgroup(const char *root, const char *rel, int version, char *out,
			       size_t outsz)
{
	char cmd[PATH_MAX + 32];

	snprintf(out, outsz, "%s/%s", root, rel);
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", out);
	if (system(cmd) != 0)
		exit(1);
	if (version == 2) {
		fake_write(out, "cpu.max", "max 100000\n");
	} else {
		fake_write(out, "cpu.cfs_quota_us", "-1\n");
		fake_write(out, "cpu.cfs_period_us", "100000\n");
	}
}

static inline void fake_root(char *out, size_t outsz)
{
	snprintf(out, outsz, "/tmp/cpi2-enforcer-test-XXXXXX");
	if (!mkdtemp(out))
		exit(1);
}

/* Run a shell command built with printf arguments; exit(1) if it fails. */
static inline void fake_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void fake_sh(const char *fmt, ...)
{
	char cmd[PATH_MAX * 4];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (system(cmd) != 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		exit(1);
	}
}

static inline void fake_rm(const char *root)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		exit(1);
}
#endif
