/* limits: see limits.h. */
#include "limits.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_small(const char *dir, const char *file, char *buf, size_t bufsz)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, bufsz - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

static int write_small(const char *dir, const char *file, const char *text, char *err, size_t errsz)
{
	char path[PATH_MAX];
	size_t len = strlen(text);
	ssize_t n;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC); /* as a shell redirect does; fake trees are plain files */
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	n = write(fd, text, len);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
out:
	if (rc)
		snprintf(err, errsz, "write %s: %s", path, strerror(-rc));
	return rc;
}

/* Strict decimal parse of a whole token into a long. */
static int parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (*s == '\0')
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

int limits_parse(int version, const char *text, long *quota, long *period)
{
	char a[32], b[32], extra;

	if (sscanf(text, "%31s %31s %c", a, b, &extra) != 2)
		return -EINVAL;
	if (version == LIMITS_V2 && strcmp(a, "max") == 0)
		*quota = -1;
	else if (parse_long(a, quota) || (*quota < 1 && !(version == LIMITS_V1 && *quota == -1)))
		return -EINVAL;
	if (parse_long(b, period) || *period < 1000 || *period > 1000000)
		return -EINVAL;
	return 0;
}

int limits_detect(const char *dir)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/cpu.max", dir);
	if (access(path, F_OK) == 0)
		return LIMITS_V2;
	snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
	if (access(path, F_OK) == 0)
		return LIMITS_V1;
	return -ENOENT;
}

int limits_read(int version, const char *dir, char *text, size_t textsz)
{
	char q[32], p[32];
	long quota, period;
	int rc;

	if (version == LIMITS_V2) {
		rc = read_small(dir, "cpu.max", text, textsz);
		if (rc)
			return rc;
		return limits_parse(version, text, &quota, &period);
	}
	rc = read_small(dir, "cpu.cfs_quota_us", q, sizeof(q));
	if (rc)
		return rc;
	rc = read_small(dir, "cpu.cfs_period_us", p, sizeof(p));
	if (rc)
		return rc;
	if ((size_t)snprintf(text, textsz, "%s %s", q, p) >= textsz)
		return -EINVAL;
	return limits_parse(version, text, &quota, &period);
}

static int write_v1(const char *dir, long quota, long period, char *err, size_t errsz)
{
	char buf[32];
	int rc;

	/* Lift the quota first so that the new period is always accepted, then set both. */
	rc = write_small(dir, "cpu.cfs_quota_us", "-1", err, errsz);
	if (rc)
		return rc;
	snprintf(buf, sizeof(buf), "%ld", period);
	rc = write_small(dir, "cpu.cfs_period_us", buf, err, errsz);
	if (rc)
		return rc;
	if (quota == -1)
		return 0;
	snprintf(buf, sizeof(buf), "%ld", quota);
	return write_small(dir, "cpu.cfs_quota_us", buf, err, errsz);
}

int limits_cap(int version, const char *dir, double cpu, long period_us, char *err, size_t errsz)
{
	char buf[64];
	long quota;

	if (!(cpu > 0) || cpu > 1024 || period_us < 1000 || period_us > 1000000) {
		snprintf(err, errsz, "cap %.4f CPU over %ld us is out of range", cpu, period_us);
		return -EINVAL;
	}
	quota = lround(cpu * (double)period_us);
	if (quota < 1000)
		quota = 1000; /* the kernel's minimum quota is 1 ms */
	if (version == LIMITS_V1)
		return write_v1(dir, quota, period_us, err, errsz);
	snprintf(buf, sizeof(buf), "%ld %ld", quota, period_us);
	return write_small(dir, "cpu.max", buf, err, errsz);
}

int limits_restore(int version, const char *dir, const char *text, char *err, size_t errsz)
{
	long quota, period;

	if (limits_parse(version, text, &quota, &period)) {
		snprintf(err, errsz, "malformed saved limit '%s'", text);
		return -EINVAL;
	}
	if (version == LIMITS_V1)
		return write_v1(dir, quota, period, err, errsz);
	return write_small(dir, "cpu.max", text, err, errsz);
}
