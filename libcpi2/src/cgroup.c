/* cgroup: see cpi2/cgroup.h. */
#include <cpi2/cgroup.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		for (tok = strtok_r(line, " ", &save); tok && n < 16; tok = strtok_r(NULL, " ", &save))
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
					snprintf(out->cpuacct, sizeof(out->cpuacct), "%s", fields[4]);
				if (strcmp(o, "perf_event") == 0 && !out->perf_event[0])
					snprintf(out->perf_event, sizeof(out->perf_event), "%s", fields[4]);
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

static int read_text(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -errno;
	n = fread(buf, 1, size - 1, f);
	fclose(f);
	buf[n] = '\0';
	return 0;
}

int cpi2_cgroup_cpu_usage_ns(const char *dir, uint64_t *ns)
{
	char path[PATH_MAX], text[4096], *end;
	uint64_t us;
	int rc;

	snprintf(path, sizeof(path), "%s/cpu.stat", dir);
	if (read_text(path, text, sizeof(text)) == 0 && cpi2_cgroup_parse_cpu_stat(text, &us) == 0) {
		*ns = us * 1000;
		return 0;
	}
	snprintf(path, sizeof(path), "%s/cpuacct.usage", dir);
	rc = read_text(path, text, sizeof(text));
	if (rc)
		return rc;
	if (text[0] < '0' || text[0] > '9')
		return -EINVAL;
	errno = 0;
	*ns = strtoull(text, &end, 10);
	if (errno || end == text || (*end != '\n' && *end != '\0'))
		return -EINVAL;
	return 0;
}
