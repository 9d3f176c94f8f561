/* procfs: see procfs.h. */
#include "procfs.h"

#include <cpi2/numa.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* value of "key<spaces/tabs>: value" in the first processor block, copied into out */
static int field(const char *text, const char *key, char *out, size_t size)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (*l == '\n')
			return -ENOENT; /* end of the first processor block */
		if (strncmp(l, key, klen) != 0)
			continue;
		const char *p = l + klen, *e;

		while (*p == ' ' || *p == '\t')
			p++;
		if (*p != ':')
			continue;
		p++;
		while (*p == ' ' || *p == '\t')
			p++;
		e = strchrnul(p, '\n');
		while (e > p && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
			e--;
		if (e == p)
			return -EINVAL;
		if ((size_t)(e - p) >= size)
			e = p + size - 1;
		memcpy(out, p, (size_t)(e - p));
		out[e - p] = '\0';
		for (char *c = out; *c; c++)
			if (*c == '/' || (unsigned char)*c < 0x20)
				*c = ' '; /* '/' separates the platform's parts */
		return 0;
	}
	return -ENOENT;
}

int procfs_parse_platform(const char *cpuinfo, char *out, size_t size)
{
	char vendor[64], family[32], model[32], name[128];
	int n;

	if (field(cpuinfo, "vendor_id", vendor, sizeof(vendor)) == 0 &&
	    field(cpuinfo, "cpu family", family, sizeof(family)) == 0 &&
	    field(cpuinfo, "model", model, sizeof(model)) == 0) {
		if (field(cpuinfo, "model name", name, sizeof(name)))
			strcpy(name, "unknown");
	} else if (field(cpuinfo, "CPU implementer", vendor, sizeof(vendor)) == 0 &&
		   field(cpuinfo, "CPU architecture", family, sizeof(family)) == 0 &&
		   field(cpuinfo, "CPU part", model, sizeof(model)) == 0) {
		if (field(cpuinfo, "CPU variant", name, sizeof(name)))
			strcpy(name, "unknown");
	} else {
		return -EINVAL;
	}
	n = snprintf(out, size, "%s/%s/%s/%s", vendor, family, model, name);
	return n < 0 || (size_t)n >= size ? -EINVAL : 0;
}

int procfs_parse_cpu_list(const char *text, int *cpus, int max)
{
	return cpi2_cpu_list_parse(text, cpus, max);
}

int procfs_parse_thread_list(const char *text)
{
	int n = 0;

	for (const char *p = text; *p;) {
		const char *e = p;

		while (*e >= '0' && *e <= '9')
			e++;
		if (e == p || (*e != '\n' && *e != '\0'))
			return -EINVAL;
		n++;
		p = *e ? e + 1 : e;
	}
	return n;
}
