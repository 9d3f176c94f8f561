/* wire: see cpi2/wire.h. */
#include <cpi2/wire.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VERSIONS 64
#define MAX_DEPTH 32

/* A message is decoded into a value of its writer's own schema and read by field name: libavro's
 * schema resolution (avro_resolved_writer_new) crashes when the reader has a field the writer
 * lacks (libavro 1.11, Debian 12), which is exactly how this project's schemas evolve. */
struct writer_version {
	uint64_t fingerprint;
	avro_schema_t schema;
	avro_value_iface_t *iface;
	avro_value_t value;
};

struct cpi2_codec {
	const struct cpi2_schema_version *current;
	avro_schema_t schema;
	avro_value_iface_t *iface;
	avro_value_t value; /* for encode */
	struct writer_version writers[MAX_VERSIONS];
	int n_writers;
	avro_writer_t writer;
	avro_reader_t reader;
};

const struct cpi2_schema_version *cpi2_schema_current(const char *message)
{
	const struct cpi2_schema_version *best = NULL;

	for (size_t i = 0; i < CPI2_SCHEMA_VERSIONS_LEN; i++)
		if (strcmp(cpi2_schema_versions[i].message, message) == 0 &&
		    (!best || cpi2_schema_versions[i].version > best->version))
			best = &cpi2_schema_versions[i];
	return best;
}

void cpi2_codec_close(struct cpi2_codec *c)
{
	if (!c)
		return;
	for (int i = 0; i < c->n_writers; i++) {
		avro_value_decref(&c->writers[i].value);
		avro_value_iface_decref(c->writers[i].iface);
		avro_schema_decref(c->writers[i].schema);
	}
	if (c->iface) {
		avro_value_decref(&c->value);
		avro_value_iface_decref(c->iface);
	}
	if (c->schema)
		avro_schema_decref(c->schema);
	if (c->writer)
		avro_writer_free(c->writer);
	if (c->reader)
		avro_reader_free(c->reader);
	free(c);
}

int cpi2_codec_open(struct cpi2_codec **out, const char *message, char *errstr, size_t errsz)
{
	struct cpi2_codec *c;
	int rc = -EINVAL;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->current = cpi2_schema_current(message);
	if (!c->current) {
		snprintf(errstr, errsz, "no schema for message %s", message);
		rc = -ENOENT;
		goto out_free;
	}
	if (avro_schema_from_json_length(c->current->json, strlen(c->current->json), &c->schema)) {
		snprintf(errstr, errsz, "schema %s: %s", message, avro_strerror());
		goto out_free;
	}
	c->iface = avro_generic_class_from_schema(c->schema);
	if (!c->iface || avro_generic_value_new(c->iface, &c->value)) {
		snprintf(errstr, errsz, "schema %s: %s", message, avro_strerror());
		goto out_free;
	}
	for (size_t i = 0; i < CPI2_SCHEMA_VERSIONS_LEN && c->n_writers < MAX_VERSIONS; i++) {
		const struct cpi2_schema_version *v = &cpi2_schema_versions[i];
		struct writer_version *w = &c->writers[c->n_writers];

		if (strcmp(v->message, message) != 0)
			continue;
		if (avro_schema_from_json_length(v->json, strlen(v->json), &w->schema)) {
			snprintf(errstr, errsz, "schema %s v%d: %s", message, v->version,
				 avro_strerror());
			goto out_free;
		}
		w->fingerprint = v->fingerprint;
		w->iface = avro_generic_class_from_schema(w->schema);
		if (!w->iface || avro_generic_value_new(w->iface, &w->value)) {
			snprintf(errstr, errsz, "schema %s v%d: %s", message, v->version,
				 avro_strerror());
			if (w->iface)
				avro_value_iface_decref(w->iface);
			avro_schema_decref(w->schema);
			goto out_free;
		}
		c->n_writers++;
	}
	c->writer = avro_writer_memory(NULL, 0);
	c->reader = avro_reader_memory(NULL, 0);
	*out = c;
	return 0;
out_free:
	cpi2_codec_close(c);
	return rc;
}

avro_value_t *cpi2_codec_value(struct cpi2_codec *c)
{
	return &c->value;
}

int cpi2_codec_encode(struct cpi2_codec *c, avro_value_t *v, void *buf, size_t bufsz, size_t *len)
{
	uint64_t fp = c->current->fingerprint;
	unsigned char *b = buf;
	size_t size;

	if (avro_value_sizeof(v, &size))
		return -EINVAL;
	if (bufsz < 10 || bufsz - 10 < size)
		return -ENOSPC;
	b[0] = 0xC3;
	b[1] = 0x01;
	for (int i = 0; i < 8; i++)
		b[2 + i] = (unsigned char)(fp >> (8 * i));
	avro_writer_memory_set_dest(c->writer, (const char *)b + 10, (int64_t)size);
	if (avro_value_write(c->writer, v))
		return -EINVAL;
	*len = 10 + size;
	return 0;
}

/* --- validation of untrusted bytes against the writer schema, before libavro reads them:
 * every length must fit in what is left, every union and enum index must exist, nesting is
 * bounded, and nothing may follow the record. libavro would otherwise allocate whatever a
 * length says; strings must be UTF-8. */
struct cursor {
	const unsigned char *p, *end;
};

static int read_varlong(struct cursor *c, int64_t *out)
{
	uint64_t v = 0;
	int shift = 0;

	for (;;) {
		if (c->p == c->end || shift > 63)
			return -1;
		unsigned char b = *c->p++;

		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
	}
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return 0;
}

static int skip(struct cursor *c, int64_t n)
{
	if (n < 0 || n > c->end - c->p)
		return -1;
	c->p += n;
	return 0;
}

int cpi2_utf8_char(const char *s, size_t left)
{
	const unsigned char *p = (const unsigned char *)s;
	int more;
	uint32_t cp;

	if (left == 0)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xC2 && p[0] <= 0xDF)
		more = 1, cp = p[0] & 0x1F;
	else if (p[0] >= 0xE0 && p[0] <= 0xEF)
		more = 2, cp = p[0] & 0x0F;
	else if (p[0] >= 0xF0 && p[0] <= 0xF4)
		more = 3, cp = p[0] & 0x07;
	else
		return 0;
	for (int i = 1; i <= more; i++) {
		if ((size_t)i == left)
			return -(more + 1); /* cut short by the end */
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		cp = cp << 6 | (p[i] & 0x3F);
	}
	if ((more == 2 && (cp < 0x800 || (cp >= 0xD800 && cp <= 0xDFFF))) ||
	    (more == 3 && (cp < 0x10000 || cp > 0x10FFFF)))
		return 0;
	return more + 1;
}

size_t cpi2_utf8_prefix(const char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		int n = cpi2_utf8_char(s + i, len - i);

		if (n <= 0)
			break;
		i += (size_t)n;
	}
	return i;
}

bool cpi2_utf8_valid(const char *s, size_t len)
{
	return cpi2_utf8_prefix(s, len) == len;
}

/* A string's bytes must be UTF-8 (cpi2_utf8_valid). Consumes the string from c. */
static int skip_utf8(struct cursor *c, int64_t n)
{
	const unsigned char *p = c->p;

	if (skip(c, n))
		return -1;
	return cpi2_utf8_valid((const char *)p, (size_t)n) ? 0 : -1;
}

static int check(avro_schema_t s, struct cursor *c, int depth)
{
	int64_t n;

	if (depth > MAX_DEPTH)
		return -1;
	if (avro_typeof(s) == AVRO_LINK) /* a later use of a named type */
		s = avro_schema_link_target(s);
	switch (avro_typeof(s)) {
	case AVRO_NULL:
		return 0;
	case AVRO_BOOLEAN:
		return c->p < c->end && *c->p <= 1 ? (c->p++, 0) : -1;
	case AVRO_INT32:
	case AVRO_INT64:
		return read_varlong(c, &n);
	case AVRO_FLOAT:
		return skip(c, 4);
	case AVRO_DOUBLE:
		return skip(c, 8);
	case AVRO_STRING:
		return read_varlong(c, &n) || skip_utf8(c, n) ? -1 : 0;
	case AVRO_BYTES:
		return read_varlong(c, &n) || skip(c, n) ? -1 : 0;
	case AVRO_FIXED:
		return skip(c, avro_schema_fixed_size(s));
	case AVRO_ENUM:
		return read_varlong(c, &n) || n < 0 || n >= avro_schema_enum_number_of_symbols(s)
			   ? -1
			   : 0;
	case AVRO_UNION:
		if (read_varlong(c, &n) || n < 0 || (size_t)n >= avro_schema_union_size(s))
			return -1;
		return check(avro_schema_union_branch(s, (int)n), c, depth + 1);
	case AVRO_RECORD:
		for (size_t i = 0; i < avro_schema_record_size(s); i++)
			if (check(avro_schema_record_field_get_by_index(s, (int)i), c, depth + 1))
				return -1;
		return 0;
	case AVRO_ARRAY:
	case AVRO_MAP:
		for (;;) {
			if (read_varlong(c, &n))
				return -1;
			if (n == 0)
				return 0;
			if (n < 0) { /* a negative count is followed by the block's size in bytes */
				int64_t bytes;

				if (n == INT64_MIN || read_varlong(c, &bytes) || bytes < 0)
					return -1;
				n = -n;
			}
			if (n >
			    c->end - c->p) /* every item takes at least one byte... except nulls */
				return -1;
			for (int64_t i = 0; i < n; i++) {
				int64_t keylen;

				if (avro_typeof(s) == AVRO_MAP &&
				    (read_varlong(c, &keylen) || skip_utf8(c, keylen)))
					return -1;
				if (check(avro_typeof(s) == AVRO_MAP ? avro_schema_map_values(s)
								     : avro_schema_array_items(s),
					  c, depth + 1))
					return -1;
			}
		}
	default:
		return -1;
	}
}

int cpi2_codec_decode(struct cpi2_codec *c, const void *buf, size_t len, avro_value_t **out,
		      char *errstr, size_t errsz)
{
	const unsigned char *b = buf;
	struct writer_version *w = NULL;
	struct cursor cur;
	uint64_t fp = 0;

	if (!buf || len < 10) {
		snprintf(errstr, errsz, "message too short for single-object encoding: %zu bytes",
			 buf ? len : 0);
		return -EINVAL;
	}
	if (b[0] != 0xC3 || b[1] != 0x01) {
		snprintf(errstr, errsz, "not Avro single-object encoding: bad magic %02x%02x", b[0],
			 b[1]);
		return -EINVAL;
	}
	for (int i = 0; i < 8; i++)
		fp |= (uint64_t)b[2 + i] << (8 * i);
	for (int i = 0; i < c->n_writers; i++)
		if (c->writers[i].fingerprint == fp)
			w = &c->writers[i];
	if (!w) {
		snprintf(errstr, errsz, "unknown writer schema fingerprint %016llx for %s",
			 (unsigned long long)fp, c->current->message);
		return -ENOENT;
	}
	cur.p = b + 10;
	cur.end = b + len;
	if (check(w->schema, &cur, 0)) {
		snprintf(errstr, errsz, "malformed or truncated %s payload (%zu bytes)",
			 c->current->message, len - 10);
		return -EINVAL;
	}
	if (cur.p != cur.end) {
		snprintf(errstr, errsz, "%zu trailing bytes after the %s record",
			 (size_t)(cur.end - cur.p), c->current->message);
		return -EINVAL;
	}
	avro_value_reset(&w->value);
	avro_reader_memory_set_source(c->reader, (const char *)b + 10, (int64_t)(len - 10));
	if (avro_value_read(c->reader, &w->value)) {
		snprintf(errstr, errsz, "malformed %s payload: %s", c->current->message,
			 avro_strerror());
		return -EINVAL;
	}
	*out = &w->value;
	return 0;
}

/* --- field helpers --- */

static int field(avro_value_t *rec, const char *name, avro_value_t *f)
{
	return avro_value_get_by_name(rec, name, f, NULL) ? -ENOENT : 0;
}

/* For a ["null", X] union, select branch X (set=true) or null; plain fields pass through. */
static int branch(avro_value_t *f, bool non_null, avro_value_t *out)
{
	avro_schema_t s;

	if (avro_value_get_type(f) != AVRO_UNION) {
		*out = *f;
		return non_null ? 0 : -EINVAL;
	}
	s = avro_value_get_schema(f);
	for (size_t i = 0; i < avro_schema_union_size(s); i++) {
		bool is_null = avro_typeof(avro_schema_union_branch(s, (int)i)) == AVRO_NULL;

		if (is_null != non_null)
			return avro_value_set_branch(f, (int)i, out) ? -EINVAL : 0;
	}
	return -EINVAL;
}

#define SETTER(name, ctype, call)                                                                  \
	int cpi2_value_set_##name(avro_value_t *rec, const char *fname, ctype v)                   \
	{                                                                                          \
		avro_value_t f, b;                                                                 \
		if (field(rec, fname, &f) || branch(&f, true, &b))                                 \
			return -ENOENT;                                                            \
		return call(&b, v) ? -EINVAL : 0;                                                  \
	}                                                                                          \
	int cpi2_value_set_opt_##name(avro_value_t *rec, const char *fname, ctype v)               \
	{                                                                                          \
		return cpi2_value_set_##name(rec, fname, v);                                       \
	}

/* A string the decoders would refuse is never encoded. */
static int set_utf8(avro_value_t *v, const char *s)
{
	return !s || !cpi2_utf8_valid(s, strlen(s)) ? EINVAL : avro_value_set_string(v, s);
}

SETTER(string, const char *, set_utf8)
SETTER(long, int64_t, avro_value_set_long)
SETTER(int, int32_t, avro_value_set_int)
SETTER(double, double, avro_value_set_double)

int cpi2_value_set_bool(avro_value_t *rec, const char *fname, bool v)
{
	avro_value_t f, b;

	if (field(rec, fname, &f) || branch(&f, true, &b))
		return -ENOENT;
	return avro_value_set_boolean(&b, v) ? -EINVAL : 0;
}

int cpi2_value_set_bytes(avro_value_t *rec, const char *fname, const void *p, size_t len)
{
	avro_value_t f, b;

	if (field(rec, fname, &f) || branch(&f, true, &b))
		return -ENOENT;
	return avro_value_set_bytes(&b, (void *)p, len) ? -EINVAL : 0;
}

int cpi2_value_set_enum(avro_value_t *rec, const char *fname, const char *symbol)
{
	avro_value_t f, b;
	int i;

	if (field(rec, fname, &f) || branch(&f, true, &b))
		return -ENOENT;
	i = avro_schema_enum_get_by_name(avro_value_get_schema(&b), symbol);
	if (i < 0)
		return -EINVAL;
	return avro_value_set_enum(&b, i) ? -EINVAL : 0;
}

int cpi2_value_set_null(avro_value_t *rec, const char *fname)
{
	avro_value_t f, b;

	if (field(rec, fname, &f))
		return -ENOENT;
	if (branch(&f, false, &b))
		return -EINVAL;
	return avro_value_set_null(&b) ? -EINVAL : 0;
}

/* The field's value, or is_null=true for the null branch of a union. */
static int get(avro_value_t *rec, const char *fname, avro_value_t *out, bool *is_null)
{
	avro_value_t f;

	if (is_null)
		*is_null = false;
	if (field(rec, fname, &f))
		return -ENOENT;
	if (avro_value_get_type(&f) == AVRO_UNION) {
		if (avro_value_get_current_branch(&f, out))
			return -EINVAL;
		if (avro_value_get_type(out) == AVRO_NULL) {
			if (!is_null)
				return -EINVAL;
			*is_null = true;
		}
		return 0;
	}
	*out = f;
	return 0;
}

#define GETTER(name, ctype, call)                                                                  \
	int cpi2_value_get_##name(avro_value_t *rec, const char *fname, ctype *v, bool *is_null)   \
	{                                                                                          \
		avro_value_t b;                                                                    \
		int rc = get(rec, fname, &b, is_null);                                             \
		if (rc || (is_null && *is_null))                                                   \
			return rc;                                                                 \
		return call ? -EINVAL : 0;                                                         \
	}

GETTER(long, int64_t, avro_value_get_long(&b, v))
GETTER(int, int32_t, avro_value_get_int(&b, v))
GETTER(double, double, avro_value_get_double(&b, v))

int cpi2_value_get_string(avro_value_t *rec, const char *fname, const char **s, bool *is_null)
{
	avro_value_t b;
	size_t size;
	int rc = get(rec, fname, &b, is_null);

	if (rc || (is_null && *is_null)) {
		*s = NULL;
		return rc;
	}
	return avro_value_get_string(&b, s, &size) ? -EINVAL : 0;
}

int cpi2_value_get_enum(avro_value_t *rec, const char *fname, const char **symbol)
{
	avro_value_t b;
	bool is_null;
	int i, rc = get(rec, fname, &b, &is_null);

	if (rc || is_null)
		return rc ? rc : -EINVAL;
	if (avro_value_get_enum(&b, &i))
		return -EINVAL;
	*symbol = avro_schema_enum_get(avro_value_get_schema(&b), i);
	return *symbol ? 0 : -EINVAL;
}
