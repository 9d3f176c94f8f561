/* sim: see sim.h. */
#include "sim.h"

#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpi2/clock.h>
#include <cpi2/log.h>
#include <cpi2/textfile.h>

int sim_hosts(const struct conf *c, struct sim_host *out, int max, char *err, size_t errsz)
{
	struct dirent *de;
	int n = 0;
	DIR *d;

	if (max < 1)
		return -EINVAL;
	if (!c->sim_hosts_root[0]) {
		snprintf(out[0].name, sizeof(out[0].name), "%s", c->host);
		out[0].root = strdup(c->cgroup_root);
		return out[0].root ? 1 : -ENOMEM;
	}
	d = opendir(c->sim_hosts_root);
	if (!d) {
		snprintf(err, errsz, "open sim_hosts_root %s: %s", c->sim_hosts_root,
			 strerror(errno));
		return -errno;
	}
	while ((de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		snprintf(out[n].name, sizeof(out[n].name), "%s", de->d_name);
		if (asprintf(&out[n].root, "%s/%s", c->sim_hosts_root, de->d_name) < 0) {
			closedir(d);
			return -ENOMEM;
		}
		n++;
	}
	closedir(d);
	return n;
}

int64_t sim_now_us(const struct conf *c)
{
	static bool warned;
	char text[32], *end;
	long long v;
	int rc;

	if (!c->clock_file[0])
		return cpi2_clock_us(CLOCK_REALTIME);
	rc = cpi2_read_text(c->clock_file, text, sizeof(text));
	if (rc > 0) {
		errno = 0;
		v = strtoll(text, &end, 10);
		if (!errno && end != text && (*end == '\n' || *end == '\0'))
			return (int64_t)v;
		rc = -EINVAL;
	}
	if (!warned)
		cpi2_log(CPI2_LOG_WARN, "enforcer", "read clock %s: %s; using the wall clock",
			 c->clock_file, strerror(rc < 0 ? -rc : EINVAL));
	warned = true;
	return cpi2_clock_us(CLOCK_REALTIME);
}
