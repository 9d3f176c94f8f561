/* machine: sysfs cache trees built in a temp dir (a full Intel-like tree, odd and missing
 * sizes, no L3, a unified L1, junk entries, no tree at all), the size parser, MemAvailable. */
#include "machine.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"

static char root[] = "/tmp/ibench-machine-test-XXXXXX";

/* Write root/tree/path (making its directories), text as given. */
static void put(const char *tree, const char *path, const char *text)
{
	char full[512], *slash;
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s/%s", root, tree, path);
	for (slash = strchr(full + strlen(root) + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
		*slash = '\0';
		mkdir(full, 0755);
		*slash = '/';
	}
	f = fopen(full, "w");
	CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* One cache: index directory, level, type, size (NULL: that file is left out). */
static void cache(const char *tree, int index, const char *level, const char *type,
		  const char *size)
{
	char p[64];

	snprintf(p, sizeof(p), "index%d/level", index);
	if (level)
		put(tree, p, level);
	snprintf(p, sizeof(p), "index%d/type", index);
	if (type)
		put(tree, p, type);
	snprintf(p, sizeof(p), "index%d/size", index);
	if (size)
		put(tree, p, size);
}

static int read_tree(const char *tree, struct ibench_caches *c, char *err, size_t errsz)
{
	char dir[512];

	snprintf(dir, sizeof(dir), "%s/%s", root, tree);
	return ibench_caches_read(dir, c, err, errsz);
}

static int rm(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	return remove(path);
}

static void sizes(void)
{
	static const struct {
		const char *text;
		int rc;
		uint64_t bytes;
	} cases[] = {
	    {"32K", 0, 32768},
	    {"32K\n", 0, 32768},
	    {"1024K\n", 0, 1048576},
	    {"8M\n", 0, 8388608},
	    {"266240K\n", 0, 266240ull << 10},
	    {"1G", 0, 1ull << 30},
	    {"32768\n", 0, 32768},
	    {"48k", 0, 49152},
	    {"", -EINVAL, 0},
	    {"\n", -EINVAL, 0},
	    {"K", -EINVAL, 0},
	    {"0K", -EINVAL, 0},
	    {"0", -EINVAL, 0},
	    {"-1K", -EINVAL, 0},
	    {" 32K", -EINVAL, 0},
	    {"32 K", -EINVAL, 0},
	    {"32KB", -EINVAL, 0},
	    {"32Q", -EINVAL, 0},
	    {"32K\n\n", -EINVAL, 0},
	    {"1.5M", -EINVAL, 0},
	    {"99999999999999999999K", -ERANGE, 0},
	    {"18014398509481984K", -ERANGE, 0}, /* 2^54 KiB = 2^64 bytes */
	    {"18014398509481983K", 0, 18014398509481983ull << 10},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint64_t b = 12345;
		int rc = ibench_parse_size(cases[i].text, &b);

		if (rc != cases[i].rc || (rc == 0 && b != cases[i].bytes)) {
			fprintf(stderr, "size '%s': rc %d bytes %llu\n", cases[i].text, rc,
				(unsigned long long)b);
			CHECK(0);
		}
		if (rc)
			CHECK(b == 12345); /* untouched on error */
	}
}

static void trees(void)
{
	struct ibench_caches c;
	char err[512];

	/* this machine's kind of tree: every size from sysfs */
	cache("intel", 0, "1\n", "Data\n", "48K\n");
	cache("intel", 1, "1\n", "Instruction\n", "32K\n");
	cache("intel", 2, "2\n", "Unified\n", "2048K\n");
	cache("intel", 3, "3\n", "Unified\n", "266240K\n");
	put("intel", "uevent", "junk\n");
	put("intel", "indexes/level", "1\n"); /* not index<digits>: ignored */
	put("intel", "index3/shared_cpu_list", "0-1\n");
	CHECK(read_tree("intel", &c, err, sizeof(err)) == 0);
	CHECK(c.l1d == 48 << 10 && c.l1i == 32 << 10 && c.l2 == 2 << 20 &&
	      c.llc == 266240ull << 10);
	CHECK(c.llc_level == 3 && c.defaulted == 0 && err[0] == '\0');

	/* sizes in M and plain bytes, an L4 as the last level, indexes out of order */
	cache("mixed", 7, "4", "Unified", "128M");
	cache("mixed", 3, "3", "Unified", "8M");
	cache("mixed", 2, "2", "Unified", "1024K");
	cache("mixed", 10, "1", "Data", "32768");
	cache("mixed", 11, "1", "Instruction", "64K");
	CHECK(read_tree("mixed", &c, err, sizeof(err)) == 0);
	CHECK(c.l1d == 32768 && c.l1i == 64 << 10 && c.l2 == 1 << 20 && c.llc == 128 << 20 &&
	      c.llc_level == 4);

	/* no L3: the L2 is the last level (from sysfs, not a default) */
	cache("nol3", 0, "1", "Unified", "16K"); /* a unified L1 is both */
	cache("nol3", 2, "2", "Unified", "512K");
	CHECK(read_tree("nol3", &c, err, sizeof(err)) == 0);
	CHECK(c.l1d == 16 << 10 && c.l1i == 16 << 10 && c.l2 == 512 << 10 && c.llc == 512 << 10 &&
	      c.llc_level == 2);

	/* a missing size file and an odd size: those levels get defaults, and err says why */
	cache("broken", 0, "1", "Data", "32 K");
	cache("broken", 1, "1", "Instruction", "32K");
	cache("broken", 2, "2", "Unified", "1M");
	cache("broken", 3, "3", "Unified", NULL);
	CHECK(read_tree("broken", &c, err, sizeof(err)) == -ENOENT);
	CHECK(c.defaulted == (IBENCH_CACHE_L1D | IBENCH_CACHE_LLC));
	CHECK(c.l1d == IBENCH_DEFAULT_L1D && c.l1i == 32 << 10 && c.l2 == 1 << 20);
	CHECK(c.llc == IBENCH_DEFAULT_LLC && c.llc_level == 0);
	CHECK(strstr(err, "index0: size '32 K' is not a size") &&
	      strstr(err, "index3: No such file"));
	CHECK(strstr(err, "no size in sysfs for L1d LLC (defaults used)"));

	/* a bad level, an instruction-only level 2 (not data: no L2), an unknown type */
	cache("odd", 0, "one", "Data", "32K");
	cache("odd", 1, "2", "Instruction", "1M");
	cache("odd", 2, "3", "Weird", "8M");
	cache("odd", 3, "1", "Instruction", "32K");
	CHECK(read_tree("odd", &c, err, sizeof(err)) == -ENOENT);
	CHECK(strstr(err, "index0: level 'one' is not 1-9"));
	CHECK(c.defaulted == (IBENCH_CACHE_L1D | IBENCH_CACHE_L2 | IBENCH_CACHE_LLC) &&
	      c.l1i == 32 << 10);

	/* only an L2: it is the last level; the L1 sizes are defaults */
	cache("bigl2", 2, "2", "Unified", "64M");
	CHECK(read_tree("bigl2", &c, err, sizeof(err)) == -ENOENT);
	CHECK(c.l2 == 64 << 20 && c.llc == 64 << 20 && c.llc_level == 2 &&
	      !(c.defaulted & IBENCH_CACHE_LLC));

	/* no tree at all */
	CHECK(read_tree("none", &c, err, sizeof(err)) == -ENOENT);
	CHECK(c.defaulted ==
	      (IBENCH_CACHE_L1D | IBENCH_CACHE_L1I | IBENCH_CACHE_L2 | IBENCH_CACHE_LLC));
	CHECK(c.l1d == IBENCH_DEFAULT_L1D && c.l2 == IBENCH_DEFAULT_L2 &&
	      c.llc == IBENCH_DEFAULT_LLC);
	CHECK(strstr(err, "none: No such file or directory"));

	/* a tiny err buffer is never overrun */
	{
		char small[8];

		CHECK(read_tree("broken", &c, small, sizeof(small)) == -ENOENT &&
		      strlen(small) < sizeof(small));
	}

	/* this machine's own tree, where there is one */
	if (access("/sys/devices/system/cpu/cpu0/cache", R_OK) == 0) {
		int rc =
		    ibench_caches_read("/sys/devices/system/cpu/cpu0/cache", &c, err, sizeof(err));

		CHECK(rc == 0 || rc == -ENOENT);
		CHECK(c.l1d && c.l1i && c.l2 && c.llc >= c.l2);
		printf("this machine: L1d %llu L1i %llu L2 %llu LLC %llu (level %d)%s%s\n",
		       (unsigned long long)c.l1d, (unsigned long long)c.l1i,
		       (unsigned long long)c.l2, (unsigned long long)c.llc, c.llc_level,
		       rc ? "; " : "", rc ? err : "");
	}
}

static void meminfo(void)
{
	uint64_t a = 0;

	CHECK(ibench_parse_meminfo("MemTotal:       24684800 kB\nMemFree:        21374588 kB\n"
				   "MemAvailable:   22618540 kB\nBuffers:           1 kB\n",
				   &a) == 0);
	CHECK(a == 22618540ull * 1024);
	CHECK(ibench_parse_meminfo("MemAvailable: 7 kB", &a) == 0 && a == 7 * 1024);
	CHECK(ibench_parse_meminfo("MemTotal: 1 kB\n", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("MemAvailable: abc kB\n", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("MemAvailable: -5 kB\n", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("MemAvailable: 5 MB\n", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("MemAvailable: 5 kBx\n", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("MemAvailable: 99999999999999999999 kB\n", &a) == -EINVAL);
	CHECK(ibench_parse_meminfo("XMemAvailable: 5 kB\n", &a) == -EINVAL);
}

int main(void)
{
	CHECK(mkdtemp(root) != NULL);
	sizes();
	trees();
	meminfo();
	CHECK(nftw(root, rm, 16, FTW_DEPTH | FTW_PHYS) == 0);
	return 0;
}
