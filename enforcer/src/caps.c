/* caps: see caps.h. */
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int caps_find(const struct capset *s, const char *dir)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->caps[i].dir, dir) == 0)
			return i;
	return -1;
}

static void copy(char *dst, size_t dstsz, const char *src)
{
	snprintf(dst, dstsz, "%s", src ? src : "");
}

int caps_apply(struct capset *s, const char *task, const char *dir, int version, double cpu,
	       long period_us, int64_t expires_us, const char *incident_id, const char *victim_task,
	       enum caps_outcome *outcome, struct cap **capp, char *err, size_t errsz)
{
	int i = caps_find(s, dir), rc;
	struct cap *c, saved;
	bool renew = i >= 0;

	if (!renew && s->n >= s->max_caps) {
		snprintf(err, errsz, "%d caps already in force on this host (max_caps)", s->n);
		return -EBUSY;
	}
	if (!renew) {
		c = &s->caps[s->n];
		memset(c, 0, sizeof(*c));
		rc = limits_read(version, dir, c->previous, sizeof(c->previous));
		if (rc) {
			snprintf(err, errsz, "read the current limit of %s: %s", dir, strerror(-rc));
			return rc;
		}
		copy(c->task, sizeof(c->task), task);
		copy(c->dir, sizeof(c->dir), dir);
		c->version = version;
	} else {
		c = &s->caps[i];
	}
	saved = *c;
	c->cpu = cpu;
	c->period_us = period_us;
	c->expires_us = expires_us;
	copy(c->incident_id, sizeof(c->incident_id), incident_id);
	copy(c->victim_task, sizeof(c->victim_task), victim_task);
	*capp = c;
	if (s->dry_run) {
		/* Nothing was written: a new entry stays beyond s->n, a renewed one as it was. */
		if (renew)
			*c = saved;
		*outcome = CAPS_DRY_RUN;
		return 0;
	}
	if (!renew) {
		s->n++;
		/* Remember the cap (and the limit to restore) before touching the cgroup. */
		rc = caps_save(s, err, errsz);
		if (rc == 0)
			rc = limits_cap(version, dir, cpu, period_us, err, errsz);
	} else {
		/* A renewal changes nothing that must be restored: write the cgroup first (the
		 * latency that matters), then the new expiry. A crash in between resumes the cap
		 * with its old expiry, which is safe. */
		rc = limits_cap(version, dir, cpu, period_us, err, errsz);
		if (rc == 0)
			rc = caps_save(s, err, errsz);
	}
	if (rc) {
		if (!renew)
			s->n--;
		else
			*c = saved;
		caps_save(s, err + strlen(err), errsz - strlen(err));
		return rc;
	}
	*outcome = renew ? CAPS_RENEWED : CAPS_APPLIED;
	return 0;
}

int caps_release(struct capset *s, int i, struct cap *out, char *err, size_t errsz)
{
	struct cap c = s->caps[i];
	int rc = 0;

	if (!s->dry_run) {
		rc = limits_restore(c.version, c.dir, c.previous, err, errsz);
		/* A cgroup that is gone has nothing left to restore: forget the cap. */
		if (rc && rc != -ENOENT)
			return rc;
	}
	s->caps[i] = s->caps[s->n - 1];
	s->n--;
	if (out)
		*out = c;
	if (!s->dry_run) {
		int src = caps_save(s, err, errsz);

		if (src)
			return src;
	}
	return rc == -ENOENT ? 0 : rc;
}

int caps_next_expired(const struct capset *s, int64_t now_us)
{
	for (int i = 0; i < s->n; i++)
		if (s->caps[i].expires_us <= now_us)
			return i;
	return -1;
}

int64_t caps_next_expiry(const struct capset *s)
{
	int64_t t = INT64_MAX;

	for (int i = 0; i < s->n; i++)
		if (s->caps[i].expires_us < t)
			t = s->caps[i].expires_us;
	return t;
}

/* One line per cap, tab-separated; names never contain tabs or newlines (cgpath refuses
 * control characters), ids are sanitised here. */
static void clean(char *s)
{
	for (; *s; s++)
		if (*s == '\t' || *s == '\n')
			*s = ' ';
}

int caps_save(const struct capset *s, char *err, size_t errsz)
{
	char tmp[PATH_MAX], dirbuf[PATH_MAX];
	FILE *f;
	int fd, rc = 0;

	if (!s->state_path)
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->state_path);
	f = fopen(tmp, "we");
	if (!f) {
		rc = -errno;
		snprintf(err, errsz, "open %s: %s", tmp, strerror(errno));
		return rc;
	}
	fprintf(f, "# cpi2-enforcer caps in force: task, dir, version, previous, cpu, period_us, expires_us, incident, victim\n");
	for (int i = 0; i < s->n; i++) {
		struct cap c = s->caps[i];

		clean(c.incident_id);
		clean(c.victim_task);
		fprintf(f, "cap\t%s\t%s\t%d\t%s\t%.6f\t%ld\t%lld\t%s\t%s\n", c.task, c.dir, c.version,
			c.previous, c.cpu, c.period_us, (long long)c.expires_us, c.incident_id,
			c.victim_task);
	}
	if (fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -errno;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, s->state_path) != 0)
		rc = -errno;
	if (rc) {
		snprintf(err, errsz, "write %s: %s", s->state_path, strerror(-rc));
		return rc;
	}
	snprintf(dirbuf, sizeof(dirbuf), "%s", s->state_path);
	fd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
	return 0;
}

static int parse_line(char *line, struct cap *c)
{
	char *f[10], *save = NULL, *tok, *end;
	int n = 0;

	for (tok = strtok_r(line, "\t", &save); tok && n < 10; tok = strtok_r(NULL, "\t", &save))
		f[n++] = tok;
	if (n < 8 || strcmp(f[0], "cap") != 0)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	copy(c->task, sizeof(c->task), f[1]);
	copy(c->dir, sizeof(c->dir), f[2]);
	c->version = atoi(f[3]);
	copy(c->previous, sizeof(c->previous), f[4]);
	c->cpu = strtod(f[5], &end);
	if (*end)
		return -EINVAL;
	c->period_us = strtol(f[6], &end, 10);
	if (*end)
		return -EINVAL;
	c->expires_us = strtoll(f[7], &end, 10);
	if (*end)
		return -EINVAL;
	if (n > 8)
		copy(c->incident_id, sizeof(c->incident_id), f[8]);
	if (n > 9)
		copy(c->victim_task, sizeof(c->victim_task), f[9]);
	if (c->version != LIMITS_V1 && c->version != LIMITS_V2)
		return -EINVAL;
	return 0;
}

int caps_load(struct capset *s, char *err, size_t errsz)
{
	char line[PATH_MAX * 3];
	FILE *f;
	int lineno = 0;

	s->n = 0;
	if (!s->state_path)
		return 0;
	f = fopen(s->state_path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (fgets(line, sizeof(line), f)) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (s->n == CAPS_MAX || parse_line(line, &s->caps[s->n])) {
			snprintf(err, errsz, "%s:%d: malformed cap line", s->state_path, lineno);
			fclose(f);
			return -EINVAL;
		}
		s->n++;
	}
	fclose(f);
	return 0;
}
