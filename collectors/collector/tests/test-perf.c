/* perf: the CPI arithmetic (sums over CPUs, multiplexing scale, no CPI without instructions
 * or for software events), the event names, and a sample built from counts encoded by the fast
 * encoder and read back through the generic codec. The perf path itself on a real cgroup is
 * test_perf_vs_perf_stat.py. */
#include "perf.h"

#include <cpi2/sample.h>
#include <cpi2/wire.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1.0, fabs(b));
}

int main(void)
{
	struct perf_spec hw, sw;
	struct perf_counts out;
	char err[256];

	CHECK(perf_spec_parse("hardware", &hw, err, sizeof(err)) == 0);
	CHECK(hw.n_events == 2 && hw.counter_source == CPI2_COUNTER_SOURCE_REF_CYCLES &&
	      !strcmp(hw.name[1], "instructions"));
	CHECK(perf_spec_parse("task-clock", &sw, err, sizeof(err)) == 0);
	CHECK(sw.n_events == 1 && sw.counter_source == CPI2_COUNTER_SOURCE_SOFTWARE);
	CHECK(perf_spec_parse("cache-misses", &sw, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "task-clock"));
	CHECK(perf_spec_parse("task-clock", &sw, err, sizeof(err)) == 0);

	/* two CPUs, no multiplexing: plain sums, CPI = cycles / instructions */
	struct perf_reading r1[2] = {{100, 100, {3000, 1000}}, {50, 50, {1000, 1000}}};
	perf_counts_compute(&hw, r1, 2, &out);
	CHECK(out.cycles == 4000 && out.instructions == 2000 && out.has_cpi && near(out.cpi, 2.0));
	CHECK(near(out.time_running_ratio, 1.0));

	/* multiplexed: CPU 0 ran a quarter of the time it was enabled, so its counts are x4 */
	struct perf_reading r2[2] = {{400, 100, {3000, 1000}}, {100, 100, {1000, 500}}};
	perf_counts_compute(&hw, r2, 2, &out);
	CHECK(out.cycles == 13000 && out.instructions == 4500 && near(out.cpi, 13000.0 / 4500.0));
	CHECK(near(out.time_running_ratio, 200.0 / 500.0));

	/* a CPU where the group was enabled but never ran contributes nothing (no division by 0) */
	struct perf_reading r3[2] = {{1000, 0, {0, 0}}, {10, 10, {7, 0}}};
	perf_counts_compute(&hw, r3, 2, &out);
	CHECK(out.cycles == 7 && out.instructions == 0 && !out.has_cpi &&
	      near(out.time_running_ratio, 10.0 / 1010.0));

	/* never scheduled at all: ratio 1, nothing counted, no CPI */
	struct perf_reading r4[1] = {{0, 0, {0, 0}}};
	perf_counts_compute(&hw, r4, 1, &out);
	CHECK(out.cycles == 0 && out.instructions == 0 && !out.has_cpi &&
	      out.time_running_ratio == 1.0);

	/* a software event never has CPI */
	struct perf_reading r5[1] = {{10, 10, {123456, 999}}};
	perf_counts_compute(&sw, r5, 1, &out);
	CHECK(out.cycles == 123456 && out.instructions == 0 && !out.has_cpi);

	/* absurd counters stay within a long */
	struct perf_reading r6[1] = {{UINT64_MAX, 1, {UINT64_MAX, 1}}};
	perf_counts_compute(&hw, r6, 1, &out);
	CHECK(out.cycles > 0 && out.instructions > 0);

	/* LLC misses as the hardware group's third event: scaled like the others, per thousand
	 * instructions; none without instructions, and none for a software event */
	CHECK(!hw.llc && !out.has_llc_misses && !out.has_llc_mpki);
	struct perf_spec llc = hw;
	CHECK(perf_spec_add_llc(&llc) == 0 && llc.n_events == 3 && llc.llc == 2 &&
	      !strcmp(llc.name[2], "cache-misses"));
	CHECK(perf_spec_add_llc(&sw) == -EINVAL && sw.n_events == 1 && !sw.llc);
	struct perf_reading r7[2] = {{400, 100, {3000, 1000, 5}}, {100, 100, {1000, 500, 7}}};
	perf_counts_compute(&llc, r7, 2, &out);
	CHECK(out.instructions == 4500 && out.has_llc_misses && out.llc_misses == 27);
	CHECK(out.has_llc_mpki && near(out.llc_mpki, 1000.0 * 27 / 4500), "%g", out.llc_mpki);
	struct perf_reading r8[1] = {{10, 10, {100, 0, 3}}};
	perf_counts_compute(&llc, r8, 1, &out);
	CHECK(out.has_llc_misses && out.llc_misses == 3 && !out.has_llc_mpki && !out.has_cpi);

	/* a sample from counts: fast encoder == what the codec decodes */
	perf_counts_compute(&hw, r2, 2, &out);
	struct cpi2_sample s = {.host = "h1",
				.task = "jobs/web/3",
				.job = "web",
				.task_id = "3",
				.platform = "GenuineIntel/6/85/Xeon",
				.task_class = CPI2_TASK_CLASS_BATCH,
				.window_start_us = 1700000000000000,
				.window_us = 10000000,
				.cycles = out.cycles,
				.instructions = out.instructions,
				.counter_source = hw.counter_source,
				.time_running_ratio = out.time_running_ratio,
				.cpu_usage = 0.5,
				.has_cpi = out.has_cpi,
				.cpi = out.cpi,
				.has_threads = true,
				.threads = 4};
	unsigned char buf[1024];
	size_t len;
	struct cpi2_codec *codec;
	avro_value_t *v;
	double cpi, ratio;
	int64_t cycles;
	int32_t threads;
	const char *sym;
	bool is_null;

	CHECK(cpi2_sample_encode(&s, buf, sizeof(buf), &len) == 0);
	CHECK(cpi2_codec_open(&codec, "CpiSample", err, sizeof(err)) == 0);
	CHECK(cpi2_codec_decode(codec, buf, len, &v, err, sizeof(err)) == 0);
	CHECK(cpi2_value_get_double(v, "cpi", &cpi, &is_null) == 0 && !is_null &&
	      near(cpi, 13000.0 / 4500.0));
	CHECK(cpi2_value_get_double(v, "time_running_ratio", &ratio, NULL) == 0 &&
	      near(ratio, 0.4));
	CHECK(cpi2_value_get_long(v, "cycles", &cycles, NULL) == 0 && cycles == 13000);
	CHECK(cpi2_value_get_int(v, "threads", &threads, &is_null) == 0 && !is_null &&
	      threads == 4);
	CHECK(cpi2_value_get_enum(v, "counter_source", &sym) == 0 && !strcmp(sym, "REF_CYCLES"));
	/* and a software sample decodes with a null CPI */
	perf_counts_compute(&sw, r5, 1, &out);
	s.counter_source = sw.counter_source;
	s.has_cpi = out.has_cpi;
	CHECK(cpi2_sample_encode(&s, buf, sizeof(buf), &len) == 0);
	CHECK(cpi2_codec_decode(codec, buf, len, &v, err, sizeof(err)) == 0);
	CHECK(cpi2_value_get_double(v, "cpi", &cpi, &is_null) == 0 && is_null);
	CHECK(cpi2_value_get_enum(v, "counter_source", &sym) == 0 && !strcmp(sym, "SOFTWARE"));
	cpi2_codec_close(codec);
	printf("test-perf: ok\n");
	return 0;
}
