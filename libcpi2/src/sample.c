/* sample: see cpi2/sample.h. Avro binary encoding: longs and ints as zig-zag varints,
 * strings as a length then bytes, booleans as one byte, doubles as 8 little-endian bytes,
 * enums as their symbol index, unions as the branch index then the value. */
#include <cpi2/sample.h>
#include <cpi2/wire.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* The encoder below writes CpiSample's fields by hand, in schema order: a field added to the
 * schema stops the build here until the encoder and the JSON writer write it too. */
_Static_assert(CPI2_CPI_SAMPLE_FIELDS_LEN == 27,
	       "CpiSample's fields changed: update cpi2_sample_encode and cpi2_sample_to_json");

struct out {
	unsigned char *p, *end;
};

static inline int put_long(struct out *o, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);

	if (o->end - o->p < 10)
		return -ENOSPC;
	while (z > 0x7f) {
		*o->p++ = (unsigned char)((z & 0x7f) | 0x80);
		z >>= 7;
	}
	*o->p++ = (unsigned char)z;
	return 0;
}

static inline int put_string(struct out *o, const char *s)
{
	size_t n;

	if (!s)
		return -EINVAL;
	n = strlen(s);
	if (put_long(o, (int64_t)n))
		return -ENOSPC;
	if ((size_t)(o->end - o->p) < n)
		return -ENOSPC;
	memcpy(o->p, s, n);
	o->p += n;
	return 0;
}

static inline int put_double(struct out *o, double d)
{
	uint64_t bits;

	if (o->end - o->p < 8)
		return -ENOSPC;
	memcpy(&bits, &d, 8);
	for (int i = 0; i < 8; i++)
		*o->p++ = (unsigned char)(bits >> (8 * i));
	return 0;
}

static inline int put_byte(struct out *o, unsigned char b)
{
	if (o->end == o->p)
		return -ENOSPC;
	*o->p++ = b;
	return 0;
}

/* an optional (union null first) long or double: branch 0, or branch 1 then the value */
static inline int put_opt_long(struct out *o, bool has, int64_t v)
{
	return has ? (put_long(o, 1) | put_long(o, v)) : put_long(o, 0);
}

static inline int put_opt_double(struct out *o, bool has, double v)
{
	return has ? (put_long(o, 1) | put_double(o, v)) : put_long(o, 0);
}

int cpi2_sample_encode(const struct cpi2_sample *s, void *buf, size_t bufsz, size_t *len)
{
	static uint64_t fp;
	struct out o = {buf, (unsigned char *)buf + bufsz};
	int rc = 0;

	if (!fp) {
		const struct cpi2_schema_version *v = cpi2_schema_current("CpiSample");

		if (!v)
			return -ENOENT;
		fp = v->fingerprint;
	}
	if (s->task_class < 0 || s->task_class >= CPI2_TASK_CLASS_SYMBOLS_LEN ||
	    s->counter_source < 0 || s->counter_source >= CPI2_COUNTER_SOURCE_SYMBOLS_LEN)
		return -EINVAL;
	if (!s->host || !s->task || !s->job || !s->task_id || !s->platform)
		return -EINVAL;
	if (bufsz < 10)
		return -ENOSPC;
	*o.p++ = 0xC3;
	*o.p++ = 0x01;
	for (int i = 0; i < 8; i++)
		*o.p++ = (unsigned char)(fp >> (8 * i));
	rc |= put_string(&o, s->host);
	rc |= put_string(&o, s->task);
	rc |= put_string(&o, s->job);
	rc |= put_string(&o, s->task_id);
	rc |= put_string(&o, s->platform);
	rc |= put_long(&o, s->task_class);
	rc |= put_byte(&o, s->is_protected ? 1 : 0);
	rc |= put_long(&o, s->window_start_us);
	rc |= put_long(&o, s->window_us);
	rc |= put_long(&o, s->cycles);
	rc |= put_long(&o, s->instructions);
	rc |= put_long(&o, s->counter_source);
	rc |= put_double(&o, s->time_running_ratio);
	rc |= put_double(&o, s->cpu_usage);
	rc |= put_opt_double(&o, s->has_cpi, s->cpi);
	rc |= put_opt_long(&o, s->has_llc_misses, s->llc_misses);
	rc |= put_opt_double(&o, s->has_numa_score, s->numa_score);
	rc |= put_opt_long(&o, s->has_threads, s->threads);
	rc |= put_opt_double(&o, s->has_cpu_pressure, s->cpu_pressure);
	rc |= put_opt_double(&o, s->has_memory_pressure, s->memory_pressure);
	rc |= put_opt_double(&o, s->has_memory_pressure_full, s->memory_pressure_full);
	rc |= put_opt_long(&o, s->has_llc_occupancy_bytes, s->llc_occupancy_bytes);
	rc |= put_opt_double(&o, s->has_memory_bandwidth, s->memory_bandwidth_bytes_per_s);
	rc |= put_opt_double(&o, s->has_llc_mpki, s->llc_mpki);
	rc |= put_opt_long(&o, s->has_host_cpus, s->host_cpus);
	rc |= put_opt_double(&o, s->has_cpu_per_op, s->cpu_per_op);
	rc |= put_opt_double(&o, s->has_latency, s->latency);
	if (rc)
		return -ENOSPC; /* strings and enums were checked above: only room can be short */
	*len = (size_t)(o.p - (unsigned char *)buf);
	return 0;
}

/* JSON string with escapes; returns chars written or -1. */
static int json_str(char *b, size_t n, const char *s)
{
	size_t o = 0;

	if (o + 1 >= n)
		return -1;
	b[o++] = '"';
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (o + 7 >= n)
			return -1;
		if (c == '"' || c == '\\') {
			b[o++] = '\\';
			b[o++] = (char)c;
		} else if (c < 0x20) {
			o += (size_t)snprintf(b + o, n - o, "\\u%04x", c);
		} else {
			b[o++] = (char)c;
		}
	}
	if (o + 2 >= n)
		return -1;
	b[o++] = '"';
	b[o] = '\0';
	return (int)o;
}

/* an optional field's JSON text: the number, or null (out holds 32 chars) */
static void opt_double(char *out, bool has, double v)
{
	snprintf(out, 32, has ? "%.17g" : "null", v);
}

static void opt_long(char *out, bool has, int64_t v)
{
	snprintf(out, 32, has ? "%lld" : "null", (long long)v);
}

int cpi2_sample_to_json(const struct cpi2_sample *s, char *buf, size_t bufsz)
{
	const char *strs[] = {s->host, s->task, s->job, s->task_id, s->platform};
	char opt[13][32];
	size_t o = 0;
	int n;

	if (s->task_class < 0 || s->task_class >= CPI2_TASK_CLASS_SYMBOLS_LEN ||
	    s->counter_source < 0 || s->counter_source >= CPI2_COUNTER_SOURCE_SYMBOLS_LEN)
		return -EINVAL;
	if (bufsz < 2)
		return -ENOSPC;
	buf[o++] = '{';
	for (int i = 0; i < 5; i++) {
		n = snprintf(buf + o, bufsz - o, "%s\"%s\":", i ? "," : "",
			     cpi2_cpi_sample_fields[i]);
		if (n < 0 || (size_t)n >= bufsz - o)
			return -ENOSPC;
		o += (size_t)n;
		n = json_str(buf + o, bufsz - o, strs[i] ? strs[i] : "");
		if (n < 0)
			return -ENOSPC;
		o += (size_t)n;
	}
	opt_double(opt[0], s->has_cpi, s->cpi);
	opt_long(opt[1], s->has_llc_misses, s->llc_misses);
	opt_double(opt[2], s->has_numa_score, s->numa_score);
	opt_long(opt[3], s->has_threads, s->threads);
	opt_double(opt[4], s->has_cpu_pressure, s->cpu_pressure);
	opt_double(opt[5], s->has_memory_pressure, s->memory_pressure);
	opt_double(opt[6], s->has_memory_pressure_full, s->memory_pressure_full);
	opt_long(opt[7], s->has_llc_occupancy_bytes, s->llc_occupancy_bytes);
	opt_double(opt[8], s->has_memory_bandwidth, s->memory_bandwidth_bytes_per_s);
	opt_double(opt[9], s->has_llc_mpki, s->llc_mpki);
	opt_long(opt[10], s->has_host_cpus, s->host_cpus);
	opt_double(opt[11], s->has_cpu_per_op, s->cpu_per_op);
	opt_double(opt[12], s->has_latency, s->latency);
	n = snprintf(
	    buf + o, bufsz - o,
	    ",\"task_class\":\"%s\",\"is_protected\":%s,\"window_start_us\":%lld,\"window_us\":%"
	    "lld,"
	    "\"cycles\":%lld,\"instructions\":%lld,\"counter_source\":\"%s\",\"time_running_"
	    "ratio\":%.17g,"
	    "\"cpu_usage\":%.17g,\"cpi\":%s,\"llc_misses\":%s,\"numa_score\":%s,\"threads\":%s,"
	    "\"cpu_pressure\":%s,\"memory_pressure\":%s,\"memory_pressure_full\":%s,"
	    "\"llc_occupancy_bytes\":%s,\"memory_bandwidth_bytes_per_s\":%s,\"llc_mpki\":%s,"
	    "\"host_cpus\":%s,\"cpu_per_op\":%s,\"latency\":%s}",
	    cpi2_task_class_symbols[s->task_class], s->is_protected ? "true" : "false",
	    (long long)s->window_start_us, (long long)s->window_us, (long long)s->cycles,
	    (long long)s->instructions, cpi2_counter_source_symbols[s->counter_source],
	    s->time_running_ratio, s->cpu_usage, opt[0], opt[1], opt[2], opt[3], opt[4], opt[5],
	    opt[6], opt[7], opt[8], opt[9], opt[10], opt[11], opt[12]);
	if (n < 0 || (size_t)n >= bufsz - o)
		return -ENOSPC;
	return (int)(o + (size_t)n);
}
