/* kernels: see kernels.h. */
#include "kernels.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "icode.h"

const char *ibench_op_unit(int kernel)
{
	switch (kernel) {
	case IBENCH_CPU_INT:
		return "64-bit integer multiply-xor-shift step";
	case IBENCH_CPU_FP:
		return "double-precision multiply-add";
	case IBENCH_L1I:
		return "call of a generated function";
	case IBENCH_L1D:
		return "cache line read-modify-write, sequential";
	case IBENCH_L2:
	case IBENCH_LLC:
		return "cache line read-modify-write, random";
	case IBENCH_MEMBW:
		return "cache line streamed (read from the source, written to the destination)";
	case IBENCH_MEMCAP:
		return "cache line read-modify-write, one per page, round-robin";
	}
	return "?";
}

int ibench_run_init(struct ibench_run *run, int64_t duration_ns)
{
	pthread_condattr_t attr;
	int rc;

	atomic_init(&run->stop, 0);
	atomic_init(&run->finished, 0);
	run->deadline_ns =
	    duration_ns > 0 ? cpi2_clock_ns(CLOCK_MONOTONIC) + duration_ns : INT64_MAX;
	rc = pthread_mutex_init(&run->lock, NULL);
	if (rc)
		return -rc;
	pthread_condattr_init(&attr);
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(&run->wake, &attr);
	pthread_condattr_destroy(&attr);
	if (rc) {
		pthread_mutex_destroy(&run->lock);
		return -rc;
	}
	return 0;
}

void ibench_run_stop(struct ibench_run *run)
{
	pthread_mutex_lock(&run->lock);
	atomic_store(&run->stop, 1);
	pthread_cond_broadcast(&run->wake);
	pthread_mutex_unlock(&run->lock);
}

void ibench_run_destroy(struct ibench_run *run)
{
	pthread_cond_destroy(&run->wake);
	pthread_mutex_destroy(&run->lock);
}

void ibench_worker_init(struct ibench_worker *w, const struct ibench_plan *plan, int index)
{
	long page = sysconf(_SC_PAGESIZE);

	w->plan = plan;
	w->rng = 0x9E3779B97F4A7C15ull * (uint64_t)(index + 1) | 1;
	w->page_lines = page > (long)IBENCH_LINE ? (size_t)page / IBENCH_LINE : 1;
	for (int i = 0; i < 8; i++) {
		w->acc[i] = (uint64_t)i * 0x2545F4914F6CDD1Dull + 1;
		w->facc[i] = 1.0 + i;
	}
	if (plan->kernel == IBENCH_L1I && plan->footprint) {
		size_t stride = ibench_icode_stride(), n = (plan->footprint + stride - 1) / stride;

		w->l1i_funcs = n < ibench_icode_count() ? n : ibench_icode_count();
	}
}

/* xorshift64*: the line choices of l2 and llc */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

/* Four independent chains, so the integer units rather than one chain's latency set the pace. */
static void cpu_int(struct ibench_worker *w)
{
	uint64_t a = w->acc[0], b = w->acc[1], c = w->acc[2], d = w->acc[3];

	for (int i = 0; i < 4096; i++) {
		a = (a ^ (a >> 17)) * 0x9E3779B97F4A7C15ull;
		b = (b ^ (b >> 13)) * 0xBF58476D1CE4E5B9ull;
		c = (c ^ (c >> 11)) * 0x94D049BB133111EBull;
		d = (d ^ (d >> 7)) * 0xD6E8FEB86659FD93ull;
	}
	w->acc[0] = a, w->acc[1] = b, w->acc[2] = c, w->acc[3] = d;
	w->ops += 4 * 4096;
}

/* Eight independent multiply-adds that converge (x -> 1000), so no value overflows or turns
 * subnormal. */
static void cpu_fp(struct ibench_worker *w)
{
	double x[8];

	memcpy(x, w->facc, sizeof(x));
	for (int i = 0; i < 2048; i++)
		for (int k = 0; k < 8; k++)
			x[k] = x[k] * 0.999999 + 0.001;
	memcpy(w->facc, x, sizeof(x));
	w->ops += 8 * 2048;
}

static void l1i(struct ibench_worker *w)
{
	size_t calls = 64;

	if (!w->l1i_funcs)
		return;
	w->acc[0] = ibench_icode_run(w->pos, w->l1i_funcs, calls, w->acc[0]);
	w->pos = (w->pos + calls) % w->l1i_funcs;
	w->ops += calls;
	w->bytes += calls * ibench_icode_stride();
}

static void l1d(struct ibench_worker *w)
{
	size_t pos = w->pos;

	for (int i = 0; i < 4096; i++) {
		w->buf[pos * IBENCH_LINE_WORDS] += 1;
		if (++pos == w->lines)
			pos = 0;
	}
	w->pos = pos;
	w->ops += 4096;
	w->bytes += 4096 * IBENCH_LINE;
}

/* Random lines, eight independent accesses at a time (iBench's SSA form) so misses overlap. */
static void random_lines(struct ibench_worker *w)
{
	uint64_t *buf = w->buf, n = w->lines;

	for (int i = 0; i < 128; i++) {
		uint64_t r0 = rnd(&w->rng), r1 = rnd(&w->rng), r2 = rnd(&w->rng), r3 = rnd(&w->rng);

		buf[((r0 >> 32) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r0 & 0xffffffffu) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r1 >> 32) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r1 & 0xffffffffu) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r2 >> 32) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r2 & 0xffffffffu) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r3 >> 32) * n >> 32) * IBENCH_LINE_WORDS] += 1;
		buf[((r3 & 0xffffffffu) * n >> 32) * IBENCH_LINE_WORDS] += 1;
	}
	w->ops += 128 * 8;
	w->bytes += 128 * 8 * IBENCH_LINE;
}

static void membw(struct ibench_worker *w)
{
	size_t lines = 1024, pos = w->pos;

	if (pos + lines > w->lines)
		lines = w->lines - pos;
	const uint64_t *src = w->buf + pos * IBENCH_LINE_WORDS;
	uint64_t *dst = w->dst + pos * IBENCH_LINE_WORDS;

	for (size_t i = 0; i < lines * IBENCH_LINE_WORDS; i++)
		dst[i] = src[i] * 3 + 1;
	w->pos = pos + lines == w->lines ? 0 : pos + lines;
	w->ops += lines;
	w->bytes += lines * 2 * IBENCH_LINE;
}

/* A chunk faults in at most 64 pages, so a work period overruns by little while it grows. */
static void memcap(struct ibench_worker *w)
{
	size_t pos = w->pos;

	for (int i = 0; i < 64; i++) {
		w->buf[pos * IBENCH_LINE_WORDS] += 1;
		pos += w->page_lines;
		if (pos > w->visited)
			w->visited = pos < w->lines ? pos : w->lines;
		if (pos >= w->lines)
			pos = 0;
	}
	w->pos = pos;
	w->ops += 64;
	w->bytes += 64 * IBENCH_LINE;
}

void ibench_kernel_chunk(struct ibench_worker *w)
{
	int kernel = w->plan->kernel;

	if (kernel >= IBENCH_L1D && !w->lines)
		return; /* a data kernel (l1d and after) with no lines: intensity 0 */
	switch (kernel) {
	case IBENCH_CPU_INT:
		cpu_int(w);
		break;
	case IBENCH_CPU_FP:
		cpu_fp(w);
		break;
	case IBENCH_L1I:
		l1i(w);
		break;
	case IBENCH_L1D:
		l1d(w);
		break;
	case IBENCH_L2:
	case IBENCH_LLC:
		random_lines(w);
		break;
	case IBENCH_MEMBW:
		membw(w);
		break;
	case IBENCH_MEMCAP:
		memcap(w);
		break;
	}
}

/* Sleep until the absolute time t (CLOCK_MONOTONIC ns) or until the run stops. */
static void sleep_until(struct ibench_run *run, int64_t t)
{
	struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};

	pthread_mutex_lock(&run->lock);
	while (!atomic_load(&run->stop) && cpi2_clock_ns(CLOCK_MONOTONIC) < t)
		if (pthread_cond_timedwait(&run->wake, &run->lock, &ts) == ETIMEDOUT)
			break;
	pthread_mutex_unlock(&run->lock);
}

void ibench_worker_loop(struct ibench_worker *w, struct ibench_run *run)
{
	const int64_t period = w->plan->period_us * 1000, work = w->plan->work_us * 1000;
	int64_t start = cpi2_clock_ns(CLOCK_MONOTONIC), now = start;

	while (!atomic_load_explicit(&run->stop, memory_order_relaxed) && now < run->deadline_ns) {
		int64_t work_end =
		    start + work < run->deadline_ns ? start + work : run->deadline_ns;

		while (now < work_end && !atomic_load_explicit(&run->stop, memory_order_relaxed)) {
			ibench_kernel_chunk(w);
			now = cpi2_clock_ns(CLOCK_MONOTONIC);
		}
		if (work < period)
			sleep_until(run, start + period < run->deadline_ns ? start + period
									   : run->deadline_ns);
		now = cpi2_clock_ns(CLOCK_MONOTONIC);
		start += period;
		if (now >= start + period) /* descheduled for a whole period: start afresh */
			start = now;
	}
	atomic_fetch_add(&run->finished, 1);
}

void *ibench_map(size_t bytes, unsigned flags)
{
	void *p;

	if (!bytes)
		bytes = IBENCH_LINE;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
#ifdef MADV_HUGEPAGE
	if ((flags & IBENCH_MAP_HUGE) && bytes >= (2u << 20))
		madvise(p, bytes, MADV_HUGEPAGE);
#endif
	if (flags & IBENCH_MAP_TOUCH)
		memset(p, 1, bytes);
	return p;
}

void ibench_unmap(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes ? bytes : IBENCH_LINE);
}
