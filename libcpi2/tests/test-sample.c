/* sample: the fast CpiSample encoder writes exactly what the generic codec writes, for every
 * golden CpiSample vector and for random samples; the JSON writer covers the schema's fields in
 * order. */
#include <cpi2/sample.h>
#include <cpi2/wire.h>

#include "golden.h"

static int sym(const char *const *names, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (strcmp(names[i], s) == 0)
			return i;
	return -1;
}

static void from_json(json_t *v, struct cpi2_sample *s)
{
	json_t *o;

	memset(s, 0, sizeof(*s));
	s->host = json_string_value(json_object_get(v, "host"));
	s->task = json_string_value(json_object_get(v, "task"));
	s->job = json_string_value(json_object_get(v, "job"));
	s->task_id = json_string_value(json_object_get(v, "task_id"));
	s->platform = json_string_value(json_object_get(v, "platform"));
	s->task_class = sym(cpi2_task_class_symbols, CPI2_TASK_CLASS_SYMBOLS_LEN,
			    json_string_value(json_object_get(v, "task_class")));
	s->is_protected = json_is_true(json_object_get(v, "is_protected"));
	s->window_start_us = json_integer_value(json_object_get(v, "window_start_us"));
	s->window_us = json_integer_value(json_object_get(v, "window_us"));
	s->cycles = json_integer_value(json_object_get(v, "cycles"));
	s->instructions = json_integer_value(json_object_get(v, "instructions"));
	s->counter_source = sym(cpi2_counter_source_symbols, CPI2_COUNTER_SOURCE_SYMBOLS_LEN,
				json_string_value(json_object_get(v, "counter_source")));
	s->time_running_ratio = json_number_value(json_object_get(v, "time_running_ratio"));
	s->cpu_usage = json_number_value(json_object_get(v, "cpu_usage"));
	if ((o = json_object_get(json_object_get(v, "cpi"), "double")))
		s->has_cpi = true, s->cpi = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "llc_misses"), "long")))
		s->has_llc_misses = true, s->llc_misses = json_integer_value(o);
	if ((o = json_object_get(json_object_get(v, "numa_score"), "double")))
		s->has_numa_score = true, s->numa_score = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "threads"), "int")))
		s->has_threads = true, s->threads = (int32_t)json_integer_value(o);
	if ((o = json_object_get(json_object_get(v, "cpu_pressure"), "double")))
		s->has_cpu_pressure = true, s->cpu_pressure = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "memory_pressure"), "double")))
		s->has_memory_pressure = true, s->memory_pressure = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "memory_pressure_full"), "double")))
		s->has_memory_pressure_full = true, s->memory_pressure_full = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "llc_occupancy_bytes"), "long")))
		s->has_llc_occupancy_bytes = true, s->llc_occupancy_bytes = json_integer_value(o);
	if ((o = json_object_get(json_object_get(v, "memory_bandwidth_bytes_per_s"), "double")))
		s->has_memory_bandwidth = true,
		s->memory_bandwidth_bytes_per_s = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "llc_mpki"), "double")))
		s->has_llc_mpki = true, s->llc_mpki = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "host_cpus"), "int")))
		s->has_host_cpus = true, s->host_cpus = (int32_t)json_integer_value(o);
	if ((o = json_object_get(json_object_get(v, "cpu_per_op"), "double")))
		s->has_cpu_per_op = true, s->cpu_per_op = json_number_value(o);
	if ((o = json_object_get(json_object_get(v, "latency"), "double")))
		s->has_latency = true, s->latency = json_number_value(o);
}

/* an optional double or long through the codec's setters: the value, or null */
static int set_opt_double(avro_value_t *v, const char *name, bool has, double d)
{
	return has ? cpi2_value_set_opt_double(v, name, d) : cpi2_value_set_null(v, name);
}

static int set_opt_long(avro_value_t *v, const char *name, bool has, int64_t l)
{
	return has ? cpi2_value_set_opt_long(v, name, l) : cpi2_value_set_null(v, name);
}

/* The same sample through the generic codec, field by field with the library's setters. */
static size_t via_codec(struct cpi2_codec *c, const struct cpi2_sample *s, unsigned char *buf,
			size_t size)
{
	avro_value_t *v = cpi2_codec_value(c);
	size_t len;
	int rc = 0;

	avro_value_reset(v);
	rc |= cpi2_value_set_string(v, "host", s->host);
	rc |= cpi2_value_set_string(v, "task", s->task);
	rc |= cpi2_value_set_string(v, "job", s->job);
	rc |= cpi2_value_set_string(v, "task_id", s->task_id);
	rc |= cpi2_value_set_string(v, "platform", s->platform);
	rc |= cpi2_value_set_enum(v, "task_class", cpi2_task_class_symbols[s->task_class]);
	rc |= cpi2_value_set_bool(v, "is_protected", s->is_protected);
	rc |= cpi2_value_set_long(v, "window_start_us", s->window_start_us);
	rc |= cpi2_value_set_long(v, "window_us", s->window_us);
	rc |= cpi2_value_set_long(v, "cycles", s->cycles);
	rc |= cpi2_value_set_long(v, "instructions", s->instructions);
	rc |= cpi2_value_set_enum(v, "counter_source",
				  cpi2_counter_source_symbols[s->counter_source]);
	rc |= cpi2_value_set_double(v, "time_running_ratio", s->time_running_ratio);
	rc |= cpi2_value_set_double(v, "cpu_usage", s->cpu_usage);
	rc |= set_opt_double(v, "cpi", s->has_cpi, s->cpi);
	rc |= set_opt_long(v, "llc_misses", s->has_llc_misses, s->llc_misses);
	rc |= set_opt_double(v, "numa_score", s->has_numa_score, s->numa_score);
	rc |= s->has_threads ? cpi2_value_set_opt_int(v, "threads", s->threads)
			     : cpi2_value_set_null(v, "threads");
	rc |= set_opt_double(v, "cpu_pressure", s->has_cpu_pressure, s->cpu_pressure);
	rc |= set_opt_double(v, "memory_pressure", s->has_memory_pressure, s->memory_pressure);
	rc |= set_opt_double(v, "memory_pressure_full", s->has_memory_pressure_full,
			     s->memory_pressure_full);
	rc |= set_opt_long(v, "llc_occupancy_bytes", s->has_llc_occupancy_bytes,
			   s->llc_occupancy_bytes);
	rc |= set_opt_double(v, "memory_bandwidth_bytes_per_s", s->has_memory_bandwidth,
			     s->memory_bandwidth_bytes_per_s);
	rc |= set_opt_double(v, "llc_mpki", s->has_llc_mpki, s->llc_mpki);
	rc |= s->has_host_cpus ? cpi2_value_set_opt_int(v, "host_cpus", s->host_cpus)
			       : cpi2_value_set_null(v, "host_cpus");
	rc |= set_opt_double(v, "cpu_per_op", s->has_cpu_per_op, s->cpu_per_op);
	rc |= set_opt_double(v, "latency", s->has_latency, s->latency);
	CHECK(rc == 0);
	CHECK(cpi2_codec_encode(c, v, buf, size, &len) == 0);
	return len;
}

int main(void)
{
	json_t *vectors = golden_load(), *vec, *schema, *fields, *f;
	unsigned char want[4096], got[4096], ref[4096];
	struct cpi2_codec *c;
	struct cpi2_sample s;
	char err[256], json[4096];
	size_t i, n, len;
	int golden = 0;

	CHECK(cpi2_codec_open(&c, "CpiSample", err, sizeof(err)) == 0);
	/* the JSON writer writes the current schema's fields, all of them, in order (the binary
	 * encoder's order is checked against the codec below) */
	json_error_t e;
	schema = json_loads(cpi2_schema_current("CpiSample")->json, 0, &e);
	CHECK(schema != NULL);
	fields = json_object_get(schema, "fields");
	memset(&s, 0, sizeof(s));
	s.host = s.task = s.job = s.task_id = s.platform = "x";
	CHECK(cpi2_sample_to_json(&s, json, sizeof(json)) > 0);
	json_t *keys = json_loads(json, 0, &e);
	const char *key;
	json_t *val;
	CHECK(keys != NULL && json_object_size(keys) == json_array_size(fields), "%s", json);
	i = 0;
	json_object_foreach(keys, key, val)
	{
		f = json_array_get(fields, i++);
		CHECK(!strcmp(key, json_string_value(json_object_get(f, "name"))),
		      "CpiSample field %zu is %s in the schema but %s in the JSON writer", i - 1,
		      json_string_value(json_object_get(f, "name")), key);
	}
	json_decref(keys);

	json_array_foreach(vectors, i, vec)
	{
		if (strcmp(json_string_value(json_object_get(vec, "message")), "CpiSample") != 0)
			continue;
		from_json(json_object_get(vec, "value"), &s);
		CHECK(cpi2_sample_encode(&s, got, sizeof(got), &len) == 0);
		n = golden_unhex(json_string_value(json_object_get(vec, "hex")), want,
				 sizeof(want));
		CHECK(len == n && memcmp(got, want, n) == 0);
		CHECK(cpi2_sample_to_json(&s, json, sizeof(json)) > 0);
		json_t *back = json_loads(json, 0, &e);
		CHECK(back && !strcmp(json_string_value(json_object_get(back, "host")), s.host));
		json_decref(back);
		golden++;
	}
	CHECK(golden >= 5);

	/* random samples: fast path == codec */
	srand(7);
	char strs[5][64];
	for (int r = 0; r < 5000; r++) {
		for (int k = 0; k < 5; k++) {
			int m = rand() % 60;
			for (int q = 0; q < m; q++)
				strs[k][q] = (char)(32 + rand() % 95);
			strs[k][m] = '\0';
		}
		s = (struct cpi2_sample){strs[0],
					 strs[1],
					 strs[2],
					 strs[3],
					 strs[4],
					 rand() % 4,
					 rand() % 2,
					 ((int64_t)rand() << 31) ^ rand(),
					 rand(),
					 ((int64_t)rand() << 20) - rand(),
					 rand(),
					 rand() % 4,
					 (double)rand() / RAND_MAX,
					 rand() / 1e6,
					 rand() % 2,
					 rand() / 1e5,
					 rand() % 2,
					 -(int64_t)rand(),
					 rand() % 2,
					 rand() / 3e9,
					 rand() % 2,
					 rand() - RAND_MAX / 2,
					 rand() % 2,
					 (double)rand() / RAND_MAX,
					 rand() % 2,
					 rand() / 7e9,
					 rand() % 2,
					 rand() / 9e9,
					 rand() % 2,
					 ((int64_t)rand() << 8) - rand(),
					 rand() % 2,
					 rand() * 3.5,
					 rand() % 2,
					 rand() / 1e7,
					 rand() % 2,
					 rand() % 1024,
					 rand() % 2,
					 rand() / 1e12,
					 rand() % 2,
					 rand() / 3e8};
		CHECK(cpi2_sample_encode(&s, got, sizeof(got), &len) == 0);
		n = via_codec(c, &s, ref, sizeof(ref));
		CHECK(len == n && memcmp(got, ref, n) == 0);
		CHECK(cpi2_sample_encode(&s, got, len - 1, &n) == -ENOSPC);
	}
	s.task_class = 9;
	CHECK(cpi2_sample_encode(&s, got, sizeof(got), &len) == -EINVAL);
	s.task_class = 0;
	s.host = NULL;
	CHECK(cpi2_sample_encode(&s, got, sizeof(got), &len) == -EINVAL);
	cpi2_codec_close(c);
	json_decref(schema);
	golden_free();
	printf("test-sample: ok (%d golden vectors, 5000 random samples equal to the codec)\n",
	       golden);
	return 0;
}
