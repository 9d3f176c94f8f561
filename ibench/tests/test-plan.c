/* plan: the intensity mapping as the README states it (duty = intensity% of the period;
 * footprint = intensity% of the level's size in whole lines; membw's buffer fixed at 4 x LLC;
 * memcap's intensity% of memcap_fraction x MemAvailable), refusals, and the probe's sizes. */
#include "plan.h"
#include "probe.h"
#include "icode.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static const struct ibench_caches caches = {
    .l1d = 48 << 10, .l1i = 32 << 10, .l2 = 2 << 20, .llc = 266240ull << 10, .llc_level = 3};
#define GIB (1ull << 30)

static struct ibench_plan plan(int kernel, long intensity, long threads, uint64_t mem,
			       double fraction)
{
	struct ibench_plan p;
	char err[256];

	memset(&p, 0xa5, sizeof(p));
	if (ibench_plan_make(kernel, intensity, 20000, threads, &caches, mem, fraction, &p, err,
			     sizeof(err))) {
		fprintf(stderr, "plan %s at %ld: %s\n", ibench_kernel_name(kernel), intensity, err);
		CHECK(0);
	}
	return p;
}

static void refused(int kernel, long intensity, long period, long threads, uint64_t mem,
		    double fraction, const char *why)
{
	struct ibench_plan p;
	char err[256] = "";

	CHECK(ibench_plan_make(kernel, intensity, period, threads, &caches, mem, fraction, &p, err,
			       sizeof(err)) == -EINVAL);
	if (!strstr(err, why)) {
		fprintf(stderr, "want '%s' in '%s'\n", why, err);
		CHECK(0);
	}
}

int main(void)
{
	/* names */
	for (int k = 0; k < IBENCH_KERNELS; k++) {
		CHECK(ibench_kernel_from_name(ibench_kernel_name(k)) == k);
		CHECK(strstr(ibench_kernel_names(), ibench_kernel_name(k)));
	}
	CHECK(ibench_kernel_from_name("probe") == -1 && ibench_kernel_from_name("") == -1);

	/* scaled footprints: ceil(size x i / 100), in whole 64-byte lines */
	CHECK(ibench_scaled_footprint(49152, 0) == 0);
	CHECK(ibench_scaled_footprint(49152, 100) == 49152);
	CHECK(ibench_scaled_footprint(49152, 50) == 24576);
	CHECK(ibench_scaled_footprint(49152, 33) == 16256); /* 16220.16 -> 254 lines */
	CHECK(ibench_scaled_footprint(49152, 1) == 512);    /* 491.52 -> 8 lines */
	CHECK(ibench_scaled_footprint(100, 1) == 64);	    /* 1 byte -> 1 line */
	CHECK(ibench_scaled_footprint(UINT64_MAX / 64 * 64, 100) ==
	      UINT64_MAX / 64 * 64); /* no overflow */

	/* duty: work_us = period x intensity / 100, for every kernel and intensity */
	for (int k = 0; k < IBENCH_KERNELS; k++)
		for (long i = 0; i <= 100; i++) {
			struct ibench_plan p = plan(k, i, 1, 24 * GIB, 0.25);

			CHECK(p.kernel == k && p.intensity == i && p.period_us == 20000 &&
			      p.work_us == 200 * i);
		}

	/* footprints per kernel */
	CHECK(plan(IBENCH_CPU_INT, 100, 1, 0, 0.25).footprint == 0 &&
	      plan(IBENCH_CPU_FP, 50, 2, 0, 0.25).alloc_bytes == 0);
	CHECK(plan(IBENCH_L1I, 100, 1, 0, 0.25).footprint == 32 << 10);
	CHECK(plan(IBENCH_L1I, 25, 4, 0, 0.25).alloc_bytes == 0); /* code, not memory */
	CHECK(plan(IBENCH_L1D, 50, 1, 0, 0.25).footprint == 24 << 10);
	CHECK(plan(IBENCH_L2, 25, 1, 0, 0.25).footprint == 512 << 10);
	CHECK(plan(IBENCH_L2, 100, 3, 0, 0.25).per_thread &&
	      plan(IBENCH_L2, 100, 3, 0, 0.25).alloc_bytes == 6 << 20);
	CHECK(plan(IBENCH_LLC, 100, 1, 0, 0.25).footprint == 266240ull << 10);
	CHECK(plan(IBENCH_LLC, 50, 1, 0, 0.25).footprint == 133120ull << 10);
	CHECK(!plan(IBENCH_LLC, 50, 4, 0, 0.25).per_thread);
	CHECK(plan(IBENCH_LLC, 50, 4, 0, 0.25).alloc_bytes == 133120ull << 10);
	/* membw: the buffer is the same at every intensity above 0; the duty cycle sets the
	 * bandwidth */
	CHECK(plan(IBENCH_MEMBW, 100, 1, 0, 0.25).footprint == 4 * (266240ull << 10));
	CHECK(plan(IBENCH_MEMBW, 10, 2, 0, 0.25).footprint == 4 * (266240ull << 10));
	CHECK(plan(IBENCH_MEMBW, 0, 1, 0, 0.25).footprint == 0);
	/* memcap: intensity% of fraction x MemAvailable */
	CHECK(plan(IBENCH_MEMCAP, 100, 1, 8 * GIB, 0.25).footprint == 2 * GIB);
	CHECK(plan(IBENCH_MEMCAP, 50, 2, 8 * GIB, 0.5).footprint == 2 * GIB);
	CHECK(plan(IBENCH_MEMCAP, 100, 1, 10 * GIB, 0.5).alloc_bytes == 5 * GIB);

	/* refusals */
	refused(IBENCH_L1D, 101, 20000, 1, 0, 0.25, "intensity must be between 0 and 100, not 101");
	refused(IBENCH_L1D, -1, 20000, 1, 0, 0.25, "intensity must be between 0 and 100");
	refused(IBENCH_L1D, 50, 0, 1, 0, 0.25, "must be positive");
	refused(IBENCH_L1D, 50, 20000, 0, 0, 0.25, "must be positive");
	refused(IBENCH_KERNELS, 50, 20000, 1, 0, 0.25, "unknown kernel");
	refused(IBENCH_MEMCAP, 50, 20000, 1, 0, 0.25, "MemAvailable is unknown");
	refused(IBENCH_MEMCAP, 50, 20000, 1, 8 * GIB, 0.81,
		"memcap_fraction must be above 0 and at most 0.8");
	refused(IBENCH_MEMCAP, 50, 20000, 1, 8 * GIB, 0, "memcap_fraction");
	/* membw's 1040 MiB in 1 GiB available (above 80%), the L2 x 300 threads in 512 MiB */
	refused(IBENCH_MEMBW, 100, 20000, 1, GIB, 0.25,
		"membw at intensity 100 would allocate 1040 MiB, more than 80% of the 1024 MiB "
		"available; refused");
	refused(IBENCH_L2, 100, 20000, 300, GIB / 2, 0.25,
		"l2 at intensity 100 would allocate 600 MiB");
	/* just below the limit is allowed */
	CHECK(plan(IBENCH_LLC, 100, 1, (266240ull << 10) * 10 / 8 + 1024, 0.25).footprint ==
	      266240ull << 10);

	/* l1i: the generated code is far beyond any L1i, in functions of a stable stride */
	CHECK(ibench_icode_count() >= 512);
	CHECK(ibench_icode_stride() >= 64 &&
	      ibench_icode_stride() * ibench_icode_count() >= 256 << 10);
	CHECK(ibench_icode_run(0, 8, 16, 1) == ibench_icode_run(0, 8, 16, 1));
	CHECK(ibench_icode_run(0, 8, 16, 1) != ibench_icode_run(1, 8, 16, 1));

	/* the probe: cache = min(4 x L2, LLC / 2), mem = 2 x LLC, cpu none; unit_ops defaults */
	{
		struct ibench_probe p;
		struct ibench_caches small = {
		    .l1d = 32 << 10, .l1i = 32 << 10, .l2 = 4 << 20, .llc = 8 << 20};
		char err[256];

		CHECK(ibench_probe_plan(&p, IBENCH_PROBE_CACHE, 0, 0, &caches, 0, err,
					sizeof(err)) == 0);
		CHECK(p.footprint == 8 << 20 && p.unit_ops == 8192);
		CHECK(ibench_probe_plan(&p, IBENCH_PROBE_CACHE, 100, 5, &small, 0, err,
					sizeof(err)) == 0);
		CHECK(p.footprint == 4 << 20 && p.unit_ops == 100 && p.max_units == 5);
		CHECK(ibench_probe_plan(&p, IBENCH_PROBE_MEM, 0, 0, &caches, 0, err, sizeof(err)) ==
		      0);
		CHECK(p.footprint == 2 * (266240ull << 10) && p.unit_ops == 2048);
		CHECK(ibench_probe_plan(&p, IBENCH_PROBE_CPU, 0, 0, &caches, 0, err, sizeof(err)) ==
		      0);
		CHECK(p.footprint == 0 && p.unit_ops == 65536);
		CHECK(ibench_probe_plan(&p, IBENCH_PROBE_MEM, 0, 0, &caches, GIB / 2, err,
					sizeof(err)) == -EINVAL);
		CHECK(strstr(err, "probe mem would allocate 520 MiB"));
		CHECK(ibench_probe_plan(&p, 7, 0, 0, &caches, 0, err, sizeof(err)) == -EINVAL);
		for (int k = 0; k < IBENCH_PROBE_KINDS; k++)
			CHECK(ibench_probe_kind_from_name(ibench_probe_kind_name(k)) == k);
		CHECK(ibench_probe_kind_from_name("llc") == -1);
	}
	return 0;
}
