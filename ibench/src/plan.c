/* plan: see plan.h. */
#include "plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const names[IBENCH_KERNELS] = {"cpu-int", "cpu-fp", "l1i",	"l1d",
						  "l2",	     "llc",    "membw", "memcap"};

int ibench_name_index(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(name, names[i]))
			return i;
	return -1;
}

int ibench_kernel_from_name(const char *name)
{
	return ibench_name_index(names, IBENCH_KERNELS, name);
}

const char *ibench_kernel_name(int kernel)
{
	return kernel >= 0 && kernel < IBENCH_KERNELS ? names[kernel] : "?";
}

const char *ibench_kernel_names(void)
{
	return "cpu-int, cpu-fp, l1i, l1d, l2, llc, membw, memcap";
}

uint64_t ibench_scaled_footprint(uint64_t size, long intensity)
{
	uint64_t i = (uint64_t)intensity, bytes;

	if (intensity <= 0)
		return 0;
	/* ceil(size * i / 100) without overflowing size * i */
	bytes = size / 100 * i + ((size % 100) * i + 99) / 100;
	return (bytes + IBENCH_LINE - 1) / IBENCH_LINE * IBENCH_LINE;
}

int ibench_plan_make(int kernel, long intensity, long period_us, long threads,
		     const struct ibench_caches *caches, uint64_t mem_available,
		     double memcap_fraction, struct ibench_plan *plan, char *err, size_t errsz)
{
	struct ibench_plan p = {.kernel = kernel, .intensity = intensity, .period_us = period_us};

	if (kernel < 0 || kernel >= IBENCH_KERNELS) {
		snprintf(err, errsz, "unknown kernel (one of %s)", ibench_kernel_names());
		return -EINVAL;
	}
	if (intensity < 0 || intensity > 100) {
		snprintf(err, errsz, "intensity must be between 0 and 100, not %ld", intensity);
		return -EINVAL;
	}
	if (period_us <= 0 || threads < 1) {
		snprintf(err, errsz, "the period and the number of threads must be positive");
		return -EINVAL;
	}
	p.work_us = period_us * intensity / 100;
	switch (kernel) {
	case IBENCH_CPU_INT:
	case IBENCH_CPU_FP:
		break;
	case IBENCH_L1I:
		p.footprint = ibench_scaled_footprint(caches->l1i, intensity);
		break; /* code, generated once: nothing allocated */
	case IBENCH_L1D:
		p.footprint = ibench_scaled_footprint(caches->l1d, intensity);
		p.per_thread = true;
		break;
	case IBENCH_L2:
		p.footprint = ibench_scaled_footprint(caches->l2, intensity);
		p.per_thread = true;
		break;
	case IBENCH_LLC:
		p.footprint = ibench_scaled_footprint(caches->llc, intensity);
		break;
	case IBENCH_MEMBW:
		/* bandwidth grows with the duty cycle alone; the buffer is always well beyond the
		 * LLC */
		p.footprint = intensity ? caches->llc * IBENCH_MEMBW_LLC_MULTIPLE : 0;
		break;
	case IBENCH_MEMCAP:
		if (!(memcap_fraction > 0 && memcap_fraction <= IBENCH_MEM_MAX_FRACTION)) {
			snprintf(err, errsz,
				 "memcap_fraction must be above 0 and at most %.1f, not %g",
				 IBENCH_MEM_MAX_FRACTION, memcap_fraction);
			return -EINVAL;
		}
		if (!mem_available) {
			snprintf(err, errsz,
				 "memcap: MemAvailable is unknown, so no safe size can be chosen");
			return -EINVAL;
		}
		p.footprint = ibench_scaled_footprint(
		    (uint64_t)((double)mem_available * memcap_fraction), intensity);
		break;
	}
	if (kernel != IBENCH_L1I)
		p.alloc_bytes = p.per_thread ? p.footprint * (uint64_t)threads : p.footprint;
	if (mem_available &&
	    (double)p.alloc_bytes > (double)mem_available * IBENCH_MEM_MAX_FRACTION) {
		snprintf(err, errsz,
			 "%s at intensity %ld would allocate %llu MiB, more than %.0f%% of the "
			 "%llu MiB available; "
			 "refused",
			 names[kernel], intensity, (unsigned long long)(p.alloc_bytes >> 20),
			 IBENCH_MEM_MAX_FRACTION * 100, (unsigned long long)(mem_available >> 20));
		return -EINVAL;
	}
	*plan = p;
	return 0;
}
