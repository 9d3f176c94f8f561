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

/* Append a host (name, root taken over) to the growing *out. */
static int add_host(struct sim_host **out, int *n, int *cap, const char *name, char *root)
{
	if (!root)
		return -ENOMEM;
	if (*n == *cap) {
		int grown = *cap ? *cap * 2 : 16;
		struct sim_host *v = realloc(*out, (size_t)grown * sizeof(**out));

		if (!v) {
			free(root);
			return -ENOMEM;
		}
		*out = v;
		*cap = grown;
	}
	snprintf((*out)[*n].name, sizeof((*out)[*n].name), "%s", name);
	(*out)[(*n)++].root = root;
	return 0;
}

int sim_hosts(const struct conf *c, struct sim_host **out, char *err, size_t errsz)
{
	struct dirent *de;
	int n = 0, cap = 0, rc = 0;
	char *root;
	DIR *d;

	*out = NULL;
	if (!c->sim_hosts_root[0]) {
		rc = add_host(out, &n, &cap, c->host, strdup(c->cgroup_root));
		return rc ? rc : n;
	}
	d = opendir(c->sim_hosts_root);
	if (!d) {
		rc = -errno;
		snprintf(err, errsz, "open sim_hosts_root %s: %s", c->sim_hosts_root,
			 strerror(errno));
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) && n < SIM_MAX_HOSTS) {
		if (de->d_name[0] == '.' || de->d_type != DT_DIR)
			continue;
		if (asprintf(&root, "%s/%s", c->sim_hosts_root, de->d_name) < 0)
			root = NULL;
		rc = add_host(out, &n, &cap, de->d_name, root);
	}
	closedir(d);
	return rc ? rc : n;
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
