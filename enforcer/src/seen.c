/* seen: see seen.h. */
#include "seen.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "persist.h"
#include "statefile.h"
#include "text.h"

static struct seen_entry *at(const struct seen *s, int k)
{
	return &s->v[(s->head + k) % s->cap];
}

static void prune(struct seen *s, int64_t now_us)
{
	while (s->n > 0 && at(s, 0)->at_us < now_us - s->keep_us) {
		s->head = (s->head + 1) % s->cap;
		s->n--;
	}
}

static void put(struct seen *s, char kind, const char *id, int64_t at_us)
{
	struct seen_entry *e;

	if (s->n == s->cap) { /* full: forget the oldest */
		s->head = (s->head + 1) % s->cap;
		s->n--;
	}
	e = at(s, s->n++);
	e->kind = kind;
	/* printable, no tab: a line of the file per id */
	text_printable(e->id, sizeof(e->id), id, strlen(id));
	for (char *c = e->id; *c; c++)
		if (*c == '\t')
			*c = '?';
	e->at_us = at_us;
}

static int load_line(char *line, void *arg)
{
	struct seen *s = arg;
	char kind = line[0], *end;
	long long t;

	if ((kind != 'i' && kind != 'c') || line[1] != '\t')
		return -EINVAL;
	errno = 0;
	t = strtoll(line + 2, &end, 10);
	if (errno || end == line + 2 || *end != '\t' || !end[1])
		return -EINVAL;
	put(s, kind, end + 1, t);
	return 0;
}

/* Rewrite the log atomically with the ring alone, and open it for appends. */
static int compact(struct seen *s, char *err, size_t errsz)
{
	size_t len = 0, size = 64 + (size_t)s->n * (CAPS_ID_MAX + 32);
	char *buf = malloc(size);
	int rc;

	if (!buf)
		return -ENOMEM;
	len = (size_t)snprintf(buf, size, "# cpi2-enforcer ids acted on: kind, seen at us, id\n");
	for (int k = 0; k < s->n; k++) {
		const struct seen_entry *e = at(s, k);

		len += (size_t)snprintf(buf + len, size - len, "%c\t%lld\t%s\n", e->kind,
					(long long)e->at_us, e->id);
	}
	rc = statefile_write(s->path, buf, len, err, errsz);
	free(buf);
	if (rc)
		return rc;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = open(s->path, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC);
	if (s->persist)
		persist_set_log(s->persist, s->fd);
	if (s->fd < 0) {
		rc = -errno;
		snprintf(err, errsz, "open %s: %s", s->path, strerror(errno));
		return rc;
	}
	s->lines = s->n;
	return 0;
}

int seen_open(struct seen *s, const char *path, int capacity, int64_t keep_us, int64_t now_us,
	      struct persist *persist, char *err, size_t errsz)
{
	char cerr[256];
	int bad;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (errsz)
		err[0] = '\0';
	s->cap = capacity > 0 ? capacity : 1;
	s->keep_us = keep_us;
	s->persist = persist;
	s->v = calloc((size_t)s->cap, sizeof(*s->v));
	if (!s->v)
		return -ENOMEM;
	snprintf(s->path, sizeof(s->path), "%s", path ? path : "");
	if (!s->path[0])
		return 0;
	bad = statefile_each_line(s->path, CAPS_ID_MAX + 40, load_line, s, err, errsz);
	if (bad < 0)
		return bad;
	prune(s, now_us);
	if (compact(s, cerr, sizeof(cerr)) != 0) {
		size_t l = strlen(err);

		if (l < errsz) /* kept in memory; appends are tried again */
			snprintf(err + l, errsz - l, "%s%s", l ? "; " : "", cerr);
		if (!bad)
			bad = 1;
	}
	return bad;
}

bool seen_has(const struct seen *s, char kind, const char *id)
{
	char clean[CAPS_ID_MAX];

	text_printable(clean, sizeof(clean), id, strlen(id));
	for (char *c = clean; *c; c++)
		if (*c == '\t')
			*c = '?';
	for (int k = s->n - 1; k >= 0; k--) { /* the newest first: a replay is usually recent */
		const struct seen_entry *e = at(s, k);

		if (e->kind == kind && strcmp(e->id, clean) == 0)
			return true;
	}
	return false;
}

int seen_add(struct seen *s, char kind, const char *id, int64_t now_us, char *err, size_t errsz)
{
	const struct seen_entry *e;
	char line[CAPS_ID_MAX + 40];
	int len, rc = 0;

	prune(s, now_us);
	put(s, kind, id, now_us);
	if (!s->path[0])
		return 0;
	if (s->lines >= 2 * s->cap || s->fd < 0)
		return compact(s, err, errsz); /* the ring alone, the older lines dropped */
	e = at(s, s->n - 1);
	len = snprintf(line, sizeof(line), "%c\t%lld\t%s\n", e->kind, (long long)e->at_us, e->id);
	/* one write: an O_APPEND write of a line lands whole, or (a crash) cut short at the end,
	 * where the next open skips it */
	errno = 0;
	if (write(s->fd, line, (size_t)len) != len)
		rc = errno ? -errno : -EIO;
	else if (s->persist)
		persist_sync_log(s->persist);
	else if (fdatasync(s->fd) != 0)
		rc = -errno;
	if (rc) {
		snprintf(err, errsz, "append to %s: %s", s->path, strerror(-rc));
		close(s->fd);
		s->fd = -1; /* the next id rewrites the log */
		if (s->persist)
			persist_set_log(s->persist, -1);
		return rc;
	}
	s->lines++;
	return 0;
}

void seen_close(struct seen *s)
{
	if (s->persist)
		persist_set_log(s->persist, -1);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->v);
	s->v = NULL;
	s->n = 0;
}
