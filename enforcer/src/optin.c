/* optin: see optin.h. */
#include "optin.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cpi2/textfile.h>

#include "cgpath.h"

static int cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A clean relative cgroup path: printable without spaces, no empty, "." or ".." component. */
static bool clean(const char *p, size_t len)
{
	size_t start = 0;

	if (len == 0 || len > CGPATH_MAX_TASK)
		return false;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && p[i] != '/') {
			if (p[i] <= ' ' || p[i] > '~')
				return false;
			continue;
		}
		if (i == start || (i - start == 1 && p[start] == '.') ||
		    (i - start == 2 && p[start] == '.' && p[start + 1] == '.') ||
		    i - start > CGPATH_MAX_NAME)
			return false;
		start = i + 1;
	}
	return true;
}

/* Split text into its paths (in place). Returns the count, or -E2BIG; skipped lines in err. */
static int parse(char *text, const char **tasks, char *err, size_t errsz)
{
	int n = 0, lineno = 0;
	size_t l = 0;
	char *line = text, *next;

	for (; line && *line; line = next) {
		size_t len;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		len = strlen(line);
		if (len == 0 || line[0] == '#')
			continue;
		if (!clean(line, len)) {
			if (l < errsz) {
				snprintf(err + l, errsz - l,
					 "%sline %d skipped (not a clean relative path)",
					 l ? "; " : "", lineno);
				l = strlen(err);
			}
			continue;
		}
		if (n == OPTIN_MAX_TASKS)
			return -E2BIG;
		tasks[n++] = line;
	}
	return n;
}

int optin_refresh(struct optin *o, char *err, size_t errsz)
{
	const char **tasks = NULL;
	char *text = NULL, why[64];
	struct stat st;
	int rc = 0, n;

	if (errsz)
		err[0] = '\0';
	if (!o->path || !o->path[0])
		return 0;
	if (lstat(o->path, &st) != 0) {
		rc = -errno;
		memset(&st, 0, sizeof(st));
	}
	if (o->looked && st.st_dev == o->dev && st.st_ino == o->ino && st.st_size == o->size &&
	    st.st_mtim.tv_sec == o->mtime.tv_sec && st.st_mtim.tv_nsec == o->mtime.tv_nsec)
		return 0; /* this file was looked at already (read, or reported) */
	o->looked = true;
	o->dev = st.st_dev;
	o->ino = st.st_ino;
	o->size = st.st_size;
	o->mtime = st.st_mtim;
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = -EINVAL;
	else if (rc == 0 && st.st_size > OPTIN_MAX_BYTES)
		rc = -EFBIG;
	if (rc == 0) {
		text = malloc((size_t)st.st_size + 2);
		tasks = calloc(OPTIN_MAX_TASKS, sizeof(*tasks));
		if (!text || !tasks)
			rc = -ENOMEM;
	}
	if (rc == 0) {
		/* never through a symlink put in its place since; a FIFO would not block */
		rc = cpi2_read_text_at(AT_FDCWD, o->path, O_NOFOLLOW | O_NONBLOCK, text,
				       (size_t)st.st_size + 2);
		if (rc == -EFBIG || (rc >= 0 && (off_t)rc != st.st_size))
			rc = -EAGAIN; /* replaced while read: the next look reads the new one */
	}
	if (rc >= 0) {
		n = parse(text, tasks, err, errsz);
		if (n >= 0) {
			qsort(tasks, (size_t)n, sizeof(*tasks), cmp);
			optin_free(o);
			o->text = text;
			o->tasks = tasks;
			o->n = n;
			o->read = true;
			return 1;
		}
		rc = n;
	}
	free(text);
	free(tasks);
	if (rc == -EINVAL)
		snprintf(why, sizeof(why), "not a regular file");
	else if (rc == -EFBIG)
		snprintf(why, sizeof(why), "over %d bytes", OPTIN_MAX_BYTES);
	else if (rc == -E2BIG)
		snprintf(why, sizeof(why), "over %d paths", OPTIN_MAX_TASKS);
	else
		snprintf(why, sizeof(why), "%s", strerror(-rc));
	snprintf(err, errsz, "enforce_file %s: %s%s", o->path, why,
		 o->read ? " (the last list read is kept)" : " (no cgroup may be capped)");
	return rc;
}

bool optin_allows(const struct optin *o, const char *rel)
{
	if (!o || !o->path || !o->path[0])
		return true;
	return o->n > 0 && bsearch(&rel, o->tasks, (size_t)o->n, sizeof(*o->tasks), cmp) != NULL;
}

void optin_free(struct optin *o)
{
	free(o->text);
	free(o->tasks);
	o->text = NULL;
	o->tasks = NULL;
	o->n = 0;
}
