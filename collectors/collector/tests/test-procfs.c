/* procfs: table tests of the /proc and /sys parsers (platform from cpuinfo, CPU lists, thread
 * lists), then random and mutated input: an error code, never a crash (the tests run under
 * AddressSanitizer). */
#include "procfs.h"

#include <cpi2/textfile.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static const char intel[] =
    "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\n"
    "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\nstepping\t: 4\n\n"
    "processor\t: 1\nvendor_id\t: OtherVendor\n";
static const char arm[] =
    "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
    "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n";

int main(void)
{
	char out[256];
	int cpus[64];

	CHECK(procfs_parse_platform(intel, out, sizeof(out)) == 0);
	CHECK(!strcmp(out, "GenuineIntel/6/85/Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz"));
	CHECK(procfs_parse_platform(arm, out, sizeof(out)) == 0 &&
	      !strcmp(out, "0x41/8/0xd0c/0x3"));
	/* a model name with '/' cannot break the platform's four parts */
	CHECK(procfs_parse_platform("vendor_id: V\ncpu family: 1\nmodel: 2\nmodel name: A/B\n", out,
				    sizeof(out)) == 0 &&
	      !strcmp(out, "V/1/2/A B"));
	/* no model name: "unknown"; second processor's fields are not used */
	CHECK(procfs_parse_platform("vendor_id: V\ncpu family: 1\nmodel: 2\n\nmodel name: later\n",
				    out, sizeof(out)) == 0 &&
	      !strcmp(out, "V/1/2/unknown"));
	const char *bad_platform[] = {"",
				      "\n",
				      "processor: 0\n",
				      "vendor_id: V\n",
				      "vendor_id:\ncpu family: 1\nmodel: 2\n",
				      "vendor_id V\ncpu family 1\nmodel 2\n"};
	for (size_t i = 0; i < sizeof(bad_platform) / sizeof(bad_platform[0]); i++)
		CHECK(procfs_parse_platform(bad_platform[i], out, sizeof(out)) == -EINVAL);
	CHECK(procfs_parse_platform(intel, out, 10) == -EINVAL); /* does not fit */

	const struct {
		const char *text;
		int n, last;
	} lists[] = {{"0\n", 1, 0},
		     {"0-1\n", 2, 1},
		     {"0-3,8,10-11\n", 7, 11},
		     {"5", 1, 5},
		     {"0-63\n", 64, 63}};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		int n = procfs_parse_cpu_list(lists[i].text, cpus, 64);

		CHECK(n == lists[i].n && cpus[n - 1] == lists[i].last);
	}
	const char *bad_lists[] = {"",	"\n",	"-1",	"3-1",	"0,",	 "0-",
				   "a", "0-1 ", "0-64", "1,,2", "0\n\n", "99999999999"};
	for (size_t i = 0; i < sizeof(bad_lists) / sizeof(bad_lists[0]); i++)
		CHECK(procfs_parse_cpu_list(bad_lists[i], cpus, 64) == -EINVAL);

	CHECK(procfs_parse_thread_list("") == 0);
	CHECK(procfs_parse_thread_list("12\n") == 1);
	CHECK(procfs_parse_thread_list("12\n13\n14") == 3);
	const char *bad_threads[] = {"\n", "12\n\n", "x\n", "12 \n", "-3\n"};
	for (size_t i = 0; i < sizeof(bad_threads) / sizeof(bad_threads[0]); i++)
		CHECK(procfs_parse_thread_list(bad_threads[i]) == -EINVAL);

	char small[8];
	CHECK(cpi2_read_text("/nonexistent", small, sizeof(small)) == -ENOENT);
	CHECK(cpi2_read_text("/proc/self/status", small, sizeof(small)) == -EFBIG &&
	      strlen(small) == 7);

	/* random bytes, and the real texts cut and mutated at random: never a crash */
	static char junk[4096];
	srand(7);
	for (int r = 0; r < 200000; r++) {
		const char *model = r % 3 == 0 ? intel : r % 3 == 1 ? arm : "0-3,8,10-11\n12\n13\n";
		size_t n = strlen(model);

		if (r % 2) {
			memcpy(junk, model, n + 1);
			for (int k = rand() % 4; k >= 0; k--)
				junk[rand() % n] = (char)(1 + rand() % 255);
			junk[rand() % (n + 1)] = '\0';
		} else {
			int m = rand() % 200;

			for (int k = 0; k < m; k++)
				junk[k] = "0123456789-,:\n\t abcdefvndor_id"[rand() % 31];
			junk[m] = '\0';
		}
		(void)procfs_parse_platform(junk, out, (size_t)(1 + rand() % (int)sizeof(out)));
		int c = procfs_parse_cpu_list(junk, cpus, 64);

		CHECK(c == -EINVAL || (c > 0 && c <= 64));
		CHECK(procfs_parse_thread_list(junk) >= -EINVAL);
	}
	printf("test-procfs: ok\n");
	return 0;
}
