/* machine: see machine.h. */
#include "machine.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cpi2/textfile.h>

int ibench_parse_size(const char *text, uint64_t *bytes)
{
	uint64_t v = 0, mult = 1;
	const char *p = text;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	switch (*p) {
	case 'K':
	case 'k':
		mult = 1ull << 10;
		p++;
		break;
	case 'M':
	case 'm':
		mult = 1ull << 20;
		p++;
		break;
	case 'G':
	case 'g':
		mult = 1ull << 30;
		p++;
		break;
	}
	if (*p == '\n')
		p++;
	if (*p || v == 0)
		return -EINVAL;
	if (v > UINT64_MAX / mult)
		return -ERANGE;
	*bytes = v * mult;
	return 0;
}

/* One file of an index directory, its final newline removed. */
static int read_attr(const char *dir, const char *index, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	int n;

	if (snprintf(path, sizeof(path), "%s/%s/%s", dir, index, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	n = cpi2_read_text(path, buf, size);
	if (n < 0)
		return n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return n;
}

/* "index" followed by digits only. */
static int is_index(const char *name)
{
	const char *p = name + 5;

	if (strncmp(name, "index", 5) != 0 || !*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static void note(char *err, size_t errsz, const char *fmt, const char *a, const char *b)
{
	size_t len = strlen(err);

	if (len + 2 < errsz)
		snprintf(err + len, errsz - len, fmt, len ? "; " : "", a, b);
}

int ibench_caches_read(const char *dir, struct ibench_caches *out, char *err, size_t errsz)
{
	struct ibench_caches c = {0};
	uint64_t llc = 0;
	int llc_level = 0, bad_level = 0; /* the highest level of an index that could not be read */
	char missing[24];
	DIR *d = opendir(dir);
	struct dirent *e;

	err[0] = '\0';
	if (!d) {
		snprintf(err, errsz, "%s: %s", dir, strerror(errno));
	} else {
		while ((e = readdir(d))) {
			char level[16], type[32], size[32];
			uint64_t bytes;
			long lv;
			char *end;
			int rc, data;

			if (!is_index(e->d_name))
				continue;
			rc = read_attr(dir, e->d_name, "level", level, sizeof(level));
			lv = rc < 0 ? 0 : strtol(level, &end, 10);
			if (rc < 0 || end == level || *end || lv < 1 || lv > 9) {
				if (rc < 0)
					note(err, errsz, "%s%s: level: %s", e->d_name,
					     strerror(-rc));
				else
					note(err, errsz, "%s%s: level '%s' is not 1-9", e->d_name,
					     level);
				bad_level = 10; /* could be any level, the last one included */
				continue;
			}
			if ((rc = read_attr(dir, e->d_name, "type", type, sizeof(type))) < 0 ||
			    (rc = read_attr(dir, e->d_name, "size", size, sizeof(size))) < 0) {
				note(err, errsz, "%s%s: %s", e->d_name, strerror(-rc));
				bad_level = lv > bad_level ? (int)lv : bad_level;
				continue;
			}
			if (ibench_parse_size(size, &bytes) != 0) {
				note(err, errsz, "%s%s: size '%s' is not a size", e->d_name, size);
				bad_level = lv > bad_level ? (int)lv : bad_level;
				continue;
			}
			data = !strcmp(type, "Data") || !strcmp(type, "Unified");
			/* two entries of one kind (never seen, but sysfs does not forbid it): the
			 * larger */
			if (lv == 1 && data && bytes > c.l1d)
				c.l1d = bytes;
			if (lv == 1 && (!strcmp(type, "Instruction") || !strcmp(type, "Unified")) &&
			    bytes > c.l1i)
				c.l1i = bytes;
			if (lv == 2 && data && bytes > c.l2)
				c.l2 = bytes;
			if (lv >= 2 && data &&
			    (lv > llc_level || (lv == llc_level && bytes > llc))) {
				llc = bytes;
				llc_level = (int)lv;
			}
		}
		closedir(d);
	}
	/* an unreadable level above the last one read may be the real last level */
	c.llc = bad_level > llc_level ? 0 : llc;
	c.llc_level = bad_level > llc_level ? 0 : llc_level;
	if (!c.l1d) {
		c.l1d = IBENCH_DEFAULT_L1D;
		c.defaulted |= IBENCH_CACHE_L1D;
	}
	if (!c.l1i) {
		c.l1i = IBENCH_DEFAULT_L1I;
		c.defaulted |= IBENCH_CACHE_L1I;
	}
	if (!c.l2) {
		c.l2 = IBENCH_DEFAULT_L2;
		c.defaulted |= IBENCH_CACHE_L2;
	}
	if (!c.llc) {
		c.llc = IBENCH_DEFAULT_LLC > c.l2 ? IBENCH_DEFAULT_LLC : c.l2;
		c.defaulted |= IBENCH_CACHE_LLC;
	}
	*out = c;
	if (!c.defaulted)
		return 0;
	snprintf(missing, sizeof(missing), "%s%s%s%s", c.defaulted & IBENCH_CACHE_L1D ? " L1d" : "",
		 c.defaulted & IBENCH_CACHE_L1I ? " L1i" : "",
		 c.defaulted & IBENCH_CACHE_L2 ? " L2" : "",
		 c.defaulted & IBENCH_CACHE_LLC ? " LLC" : "");
	note(err, errsz, "%sno size in sysfs for%s%s (defaults used)", missing, "");
	return -ENOENT;
}

int ibench_parse_meminfo(const char *text, uint64_t *available)
{
	const char *p = cpi2_text_find_line(text, "MemAvailable:");
	unsigned long long kb;
	char *end;

	if (!p)
		return -EINVAL;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9') /* strtoull would take a sign */
		return -EINVAL;
	errno = 0;
	kb = strtoull(p, &end, 10);
	if (errno || kb > UINT64_MAX / 1024 || strncmp(end, " kB", 3) != 0 ||
	    (end[3] != '\n' && end[3] != '\0'))
		return -EINVAL;
	*available = (uint64_t)kb * 1024;
	return 0;
}
