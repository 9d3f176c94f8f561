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

#include <cpi2/cgroup.h>
#include <cpi2/textfile.h>

/* A limit file's text without its line end; never through a symlink. 0 or -errno (-EFBIG when
 * it does not fit). */
static int read_small(int dirfd, const char *file, char *buf, size_t bufsz)
{
	int n = cpi2_read_text_at(dirfd, file, O_NOFOLLOW, buf, bufsz);

	if (n < 0)
		return n;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = '\0';
	return 0;
}

/* One write of text to file (a regular file in fake trees, so truncated as a shell redirect
 * would). Returns 0 or -errno; the kernel applies a cgroup file's write whole or not at all. */
static int write_small(int dirfd, const char *file, const char *text)
{
	size_t len = strlen(text);
	ssize_t n;
	int fd, rc = 0;

	fd = openat(dirfd, file, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	return rc;
}

int limits_parse(int version, const char *text, long *quota, long *period)
{
	char a[32], b[32], extra;
	int rc;

	/* two tokens, as limits_read joins them and the kernel writes cpu.max */
	if (sscanf(text, "%31s %31s %c", a, b, &extra) != 2)
		return -EINVAL;
	if (version == LIMITS_V2)
		rc = cpi2_cgroup_parse_cpu_max(text, quota, period);
	else if (version == LIMITS_V1)
		rc = cpi2_cgroup_parse_cfs(a, b, quota, period);
	else
		rc = -EINVAL;
	if (rc || *period < LIMITS_MIN_QUOTA_US || *period > LIMITS_MAX_PERIOD_US)
		return -EINVAL;
	return 0;
}

double limits_cpu(int version, const char *text)
{
	long q, p;

	if (limits_parse(version, text, &q, &p) || q < 0)
		return -1;
	return (double)q / (double)p;
}

int limits_detect(int dirfd)
{
	if (faccessat(dirfd, "cpu.max", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return LIMITS_V2;
	if (faccessat(dirfd, "cpu.cfs_quota_us", F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return LIMITS_V1;
	return -ENOENT;
}

int limits_read(int dirfd, int version, char *text, size_t textsz)
{
	char q[32], p[32];
	long quota, period;
	int rc;

	if (version == LIMITS_V2) {
		rc = read_small(dirfd, "cpu.max", text, textsz);
		if (rc)
			return rc;
		return limits_parse(version, text, &quota, &period);
	}
	rc = read_small(dirfd, "cpu.cfs_quota_us", q, sizeof(q));
	if (rc)
		return rc;
	rc = read_small(dirfd, "cpu.cfs_period_us", p, sizeof(p));
	if (rc)
		return rc;
	if ((size_t)snprintf(text, textsz, "%s %s", q, p) >= textsz)
		return -EINVAL;
	return limits_parse(version, text, &quota, &period);
}

int limits_plan_cap(int version, const char *current, double cpu, long period_us, long *quota,
		    long *period)
{
	long cq, cp, q, p = period_us;

	if (!(cpu > 0) || cpu > 1024 || period_us < LIMITS_MIN_QUOTA_US ||
	    period_us > LIMITS_MAX_PERIOD_US || limits_parse(version, current, &cq, &cp))
		return -EINVAL;
	q = (long)floor(cpu * (double)p + 1e-9);
	if (q < LIMITS_MIN_QUOTA_US) {
		/* a longer period keeps the ratio where the quota would fall under 1 ms */
		p = (long)ceil((double)LIMITS_MIN_QUOTA_US / cpu);
		if (p > LIMITS_MAX_PERIOD_US)
			p = LIMITS_MAX_PERIOD_US;
		q = (long)floor(cpu * (double)p + 1e-9);
		if (q < LIMITS_MIN_QUOTA_US)
			q = LIMITS_MIN_QUOTA_US;
	}
	/* q/p >= cq/cp: the limit in force is already at or below the cap (exact, in integers) */
	if (cq >= 0 && (long long)q * cp >= (long long)cq * p)
		return 1;
	*quota = q;
	*period = p;
	return 0;
}

static int write_v2(int dirfd, long quota, long period, char *err, size_t errsz)
{
	char buf[64];
	int rc;

	if (quota < 0)
		snprintf(buf, sizeof(buf), "max %ld", period);
	else
		snprintf(buf, sizeof(buf), "%ld %ld", quota, period);
	rc = write_small(dirfd, "cpu.max", buf);
	if (rc)
		snprintf(err, errsz, "write cpu.max '%s': %s (the limit in force is unchanged)",
			 buf, strerror(-rc));
	return rc;
}

/* From (qa, pa) to (qb, pb), both valid for the kernel, through a valid intermediate state:
 * lifting the quota first when the new one is unlimited; the period first when the old quota is
 * unlimited or the new quota is larger (then the intermediate qa/pb is at most the larger of the
 * two ratios); the quota first when it shrinks (qb/pa is at most qa/pa). */
static int write_v1(int dirfd, long qa, long pa, long qb, long pb, char *err, size_t errsz)
{
	struct step {
		const char *file;
		long from, to;
	} quota = {"cpu.cfs_quota_us", qa, qb}, per = {"cpu.cfs_period_us", pa, pb}, order[2];
	char buf[32];
	int rc, rrc;

	if (qb == -1 || (qa != -1 && qb <= qa)) {
		order[0] = quota;
		order[1] = per;
	} else {
		order[0] = per;
		order[1] = quota;
	}
	for (int i = 0; i < 2; i++) {
		if (order[i].from == order[i].to)
			continue;
		snprintf(buf, sizeof(buf), "%ld", order[i].to);
		rc = write_small(dirfd, order[i].file, buf);
		if (rc == 0)
			continue;
		if (i == 0 || order[0].from == order[0].to) {
			snprintf(err, errsz, "write %s %s: %s (the limit in force is unchanged)",
				 order[i].file, buf, strerror(-rc));
			return rc;
		}
		/* put back the first file: the cgroup keeps exactly the limit it had */
		snprintf(buf, sizeof(buf), "%ld", order[0].from);
		rrc = write_small(dirfd, order[0].file, buf);
		if (rrc)
			snprintf(err, errsz, "write %s %ld: %s; putting back %s %s failed too: %s",
				 order[1].file, order[1].to, strerror(-rc), order[0].file, buf,
				 strerror(-rrc));
		else
			snprintf(
			    err, errsz,
			    "write %s %ld: %s (%s put back to %s: the limit in force is unchanged)",
			    order[1].file, order[1].to, strerror(-rc), order[0].file, buf);
		return rc;
	}
	return 0;
}

int limits_write(int dirfd, int version, const char *current, long quota, long period, char *err,
		 size_t errsz)
{
	long cq, cp;

	if (period < LIMITS_MIN_QUOTA_US || period > LIMITS_MAX_PERIOD_US ||
	    (quota != -1 && quota < LIMITS_MIN_QUOTA_US)) {
		snprintf(err, errsz, "limit %ld/%ld us is out of range", quota, period);
		return -EINVAL;
	}
	if (version == LIMITS_V2)
		return write_v2(dirfd, quota, period, err, errsz);
	if (limits_parse(version, current, &cq, &cp)) {
		snprintf(err, errsz, "malformed limit in force '%s'", current);
		return -EINVAL;
	}
	return write_v1(dirfd, cq, cp, quota, period, err, errsz);
}

int limits_restore(int dirfd, int version, const char *saved, char *err, size_t errsz)
{
	char current[LIMIT_TEXT_MAX];
	long quota, period;
	int rc;

	if (limits_parse(version, saved, &quota, &period)) {
		snprintf(err, errsz, "malformed saved limit '%s'", saved);
		return -EINVAL;
	}
	rc = limits_read(dirfd, version, current, sizeof(current));
	if (rc == -EINVAL && version == LIMITS_V1) {
		/* the files hold something unreadable: lift the quota (always accepted), then both
		 */
		rc = write_small(dirfd, "cpu.cfs_quota_us", "-1");
		if (rc) {
			snprintf(err, errsz, "write cpu.cfs_quota_us -1: %s", strerror(-rc));
			return rc;
		}
		return write_v1(dirfd, -1, 0, quota, period, err, errsz);
	}
	if (rc) {
		snprintf(err, errsz, "read the limit in force: %s", strerror(-rc));
		return rc;
	}
	return limits_write(dirfd, version, current, quota, period, err, errsz);
}

static const char *weight_file(int version)
{
	return version == LIMITS_V2 ? "cpu.weight" : "cpu.shares";
}

long limits_min_weight(int version)
{
	return version == LIMITS_V2 ? LIMITS_V2_MIN_WEIGHT : LIMITS_V1_MIN_WEIGHT;
}

long limits_default_weight(int version)
{
	return version == LIMITS_V2 ? LIMITS_V2_DEFAULT_WEIGHT : LIMITS_V1_DEFAULT_WEIGHT;
}

int limits_weight_read(int dirfd, int version, long *weight)
{
	char text[32];
	int rc;

	if (version != LIMITS_V1 && version != LIMITS_V2)
		return -EINVAL;
	rc = read_small(dirfd, weight_file(version), text, sizeof(text));
	if (rc == -EFBIG)
		return -EINVAL;
	if (rc)
		return rc;
	return cpi2_cgroup_parse_cpu_weight(text, version == LIMITS_V2, weight);
}

int limits_weight_write(int dirfd, int version, long weight, char *err, size_t errsz)
{
	char buf[32];
	long check;
	int rc;

	snprintf(buf, sizeof(buf), "%ld", weight);
	if ((version != LIMITS_V1 && version != LIMITS_V2) ||
	    cpi2_cgroup_parse_cpu_weight(buf, version == LIMITS_V2, &check)) {
		snprintf(err, errsz, "weight %ld is out of range", weight);
		return -EINVAL;
	}
	rc = write_small(dirfd, weight_file(version), buf);
	if (rc)
		snprintf(err, errsz, "write %s %s: %s (the weight in force is unchanged)",
			 weight_file(version), buf, strerror(-rc));
	return rc;
}

long limits_idle_lowest(int version)
{
	(void)version;
	return LIMITS_IDLE;
}

int limits_idle_read(int dirfd, int version, long *idle)
{
	char text[32];
	int rc;

	if (version != LIMITS_V1 && version != LIMITS_V2)
		return -EINVAL;
	rc = read_small(dirfd, "cpu.idle", text, sizeof(text));
	if (rc == -EFBIG)
		return -EINVAL;
	if (rc)
		return rc;
	return cpi2_cgroup_parse_cpu_idle(text, idle);
}

int limits_idle_write(int dirfd, int version, long idle, char *err, size_t errsz)
{
	int rc;

	if ((version != LIMITS_V1 && version != LIMITS_V2) || (idle != 0 && idle != 1)) {
		snprintf(err, errsz, "cpu.idle %ld is out of range", idle);
		return -EINVAL;
	}
	rc = write_small(dirfd, "cpu.idle", idle ? "1" : "0");
	if (rc)
		snprintf(err, errsz, "write cpu.idle %ld: %s (the value in force is unchanged)",
			 idle, strerror(-rc));
	return rc;
}
