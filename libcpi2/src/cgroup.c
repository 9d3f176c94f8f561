/* cgroup: see cpi2/cgroup.h. */
#include <cpi2/cgroup.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpi2/textfile.h>

/* mountinfo: "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue" */
int cpi2_cgroup_mounts(const char *mountinfo, struct cpi2_cgroup_mounts *out)
{
	char line[4096];
	FILE *f = fopen(mountinfo ? mountinfo : "/proc/self/mountinfo", "re");
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *fields[16], *save = NULL, *tok, *sep;
		int n = 0;

		if (!strchr(line, '\n') && !feof(f)) {
			rc = -EINVAL; /* a line longer than any real one */
			break;
		}
		sep = strstr(line, " - ");
		if (!sep) {
			rc = -EINVAL;
			break;
		}
		*sep = '\0';
		for (tok = strtok_r(line, " ", &save); tok && n < 16;
		     tok = strtok_r(NULL, " ", &save))
			fields[n++] = tok;
		if (n < 5) {
			rc = -EINVAL;
			break;
		}
		char *fstype = strtok_r(sep + 3, " ", &save), *source = strtok_r(NULL, " ", &save);
		char *opts = strtok_r(NULL, " \n", &save);

		if (!fstype || !source || !opts) {
			rc = -EINVAL;
			break;
		}
		if (strcmp(fstype, "cgroup2") == 0 && !out->unified[0]) {
			snprintf(out->unified, sizeof(out->unified), "%s", fields[4]);
		} else if (strcmp(fstype, "cgroup") == 0) {
			char buf[1024], *o, *s2 = NULL;

			snprintf(buf, sizeof(buf), "%s,%s", fields[5 < n ? 5 : n - 1], opts);
			for (o = strtok_r(buf, ",", &s2); o; o = strtok_r(NULL, ",", &s2)) {
				if (strcmp(o, "cpu") == 0 && !out->cpu[0])
					snprintf(out->cpu, sizeof(out->cpu), "%s", fields[4]);
				if (strcmp(o, "cpuacct") == 0 && !out->cpuacct[0])
					snprintf(out->cpuacct, sizeof(out->cpuacct), "%s",
						 fields[4]);
				if (strcmp(o, "perf_event") == 0 && !out->perf_event[0])
					snprintf(out->perf_event, sizeof(out->perf_event), "%s",
						 fields[4]);
				if (strcmp(o, "memory") == 0 && !out->memory[0])
					snprintf(out->memory, sizeof(out->memory), "%s", fields[4]);
			}
		}
	}
	fclose(f);
	return rc;
}

int cpi2_cgroup_parse_cpu_stat(const char *text, uint64_t *usage_usec)
{
	const char *p = text;

	while (p && *p) {
		if (strncmp(p, "usage_usec ", 11) == 0) {
			char *end;
			unsigned long long v;

			if (p[11] < '0' || p[11] > '9') /* strtoull would take spaces and a sign */
				return -EINVAL;
			errno = 0;
			v = strtoull(p + 11, &end, 10);
			if (errno || end == p + 11 || (*end != '\n' && *end != '\0'))
				return -EINVAL;
			*usage_usec = v;
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -EINVAL;
}

/* one PSI line after its kind: " avg10=D.DD avg60=D.DD avg300=D.DD total=N", then a newline
 * or the end; *total gets N */
static int parse_psi_line(const char *p, const char **next, uint64_t *total)
{
	static const char *const keys[] = {" avg10=", " avg60=", " avg300=", " total="};
	char *end;

	for (int k = 0; k < 4; k++) {
		size_t n = strlen(keys[k]);

		if (strncmp(p, keys[k], n) != 0 || p[n] < '0' || p[n] > '9')
			return -EINVAL;
		p += n;
		errno = 0;
		if (k < 3) {
			double avg = strtod(p, &end);

			if (errno || end == p || !(avg >= 0 && avg <= 100))
				return -EINVAL;
		} else {
			*total = strtoull(p, &end, 10);
			if (errno || end == p)
				return -EINVAL;
		}
		p = end;
	}
	if (*p != '\n' && *p != '\0')
		return -EINVAL;
	*next = *p ? p + 1 : p;
	return 0;
}

int cpi2_cgroup_parse_psi(const char *text, struct cpi2_psi *out)
{
	const char *p = text;

	memset(out, 0, sizeof(*out));
	while (*p) {
		bool some = strncmp(p, "some", 4) == 0, full = strncmp(p, "full", 4) == 0;
		uint64_t total;

		if ((!some && !full) || (some && out->has_some) || (full && out->has_full) ||
		    parse_psi_line(p + 4, &p, &total))
			return -EINVAL;
		if (some)
			out->has_some = true, out->some_us = total;
		else
			out->has_full = true, out->full_us = total;
	}
	return out->has_some ? 0 : -EINVAL;
}

/* A decimal number (an optional '-', then digits) at *p, moved past it; blanks before it. */
static int parse_long(const char **p, long *out)
{
	const char *s = *p;
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	if (!((*s >= '0' && *s <= '9') || (*s == '-' && s[1] >= '0' && s[1] <= '9')))
		return -EINVAL;
	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno)
		return -EINVAL;
	*p = end;
	return 0;
}

/* Only blanks and one line end left. */
static bool at_end(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p == '\n')
		p++;
	return *p == '\0';
}

int cpi2_cgroup_parse_cpu_max(const char *text, long *quota_us, long *period_us)
{
	const char *p = text;
	long quota, period = CPI2_CGROUP_DEFAULT_PERIOD_US;

	while (*p == ' ' || *p == '\t')
		p++;
	if (strncmp(p, "max", 3) == 0) {
		quota = -1;
		p += 3;
	} else if (parse_long(&p, &quota) || quota < 1) {
		return -EINVAL;
	}
	if (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\n')
		return -EINVAL;
	if (!at_end(p) && (parse_long(&p, &period) || period < 1 || !at_end(p)))
		return -EINVAL;
	*quota_us = quota;
	*period_us = period;
	return 0;
}

int cpi2_cgroup_parse_cfs(const char *quota_text, const char *period_text, long *quota_us,
			  long *period_us)
{
	const char *q = quota_text, *p = period_text;
	long quota, period;

	if (parse_long(&q, &quota) || !at_end(q) || (quota < 1 && quota != -1))
		return -EINVAL;
	if (parse_long(&p, &period) || !at_end(p) || period < 1)
		return -EINVAL;
	*quota_us = quota;
	*period_us = period;
	return 0;
}

int cpi2_cgroup_parse_cpu_weight(const char *text, bool v2, long *weight)
{
	long lo = v2 ? CPI2_CGROUP_V2_WEIGHT_MIN : CPI2_CGROUP_V1_SHARES_MIN;
	long hi = v2 ? CPI2_CGROUP_V2_WEIGHT_MAX : CPI2_CGROUP_V1_SHARES_MAX;
	const char *t = text;
	long w;

	if (parse_long(&t, &w) || !at_end(t) || w < lo || w > hi)
		return -EINVAL;
	*weight = w;
	return 0;
}

int cpi2_cgroup_parse_cpu_idle(const char *text, long *idle)
{
	const char *t = text;
	long v;

	if (parse_long(&t, &v) || !at_end(t) || (v != 0 && v != 1))
		return -EINVAL;
	*idle = v;
	return 0;
}

int cpi2_cgroup_cpu_usage_ns(const char *dir, uint64_t *ns)
{
	char path[PATH_MAX], text[4096], *end;
	uint64_t us;
	int rc;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	if (cpi2_read_text(path, text, sizeof(text)) >= 0 &&
	    cpi2_cgroup_parse_cpu_stat(text, &us) == 0) {
		*ns = us * 1000;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cpuacct.usage", dir);
	rc = cpi2_read_text(path, text, sizeof(text));
	if (rc < 0)
		return rc;
	if (text[0] < '0' || text[0] > '9')
		return -EINVAL;
	errno = 0;
	*ns = strtoull(text, &end, 10);
	if (errno || end == text || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	return 0;
}
