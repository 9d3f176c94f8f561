/* The shared golden vectors (schemas/golden/vectors.json) for the C tests: load them, and
 * fill an avro_value_t from a value in Avro's JSON encoding, generically. */
#ifndef CPI2_TEST_GOLDEN_H
#define CPI2_TEST_GOLDEN_H
#include <avro.h>
#include <jansson.h>
#include <string.h>

#include "check.h"

static json_t *golden_doc;

/* Free what golden_load loaded (call at the end of a test). */
static inline void golden_free(void)
{
	json_decref(golden_doc);
	golden_doc = NULL;
}

static inline json_t *golden_load(void)
{
	json_error_t e;
	json_t *doc = golden_doc =
	    json_load_file(CPI2_SOURCE_DIR "/schemas/golden/vectors.json", JSON_ALLOW_NUL, &e);

	if (!doc)
		fprintf(stderr, "vectors.json:%d: %s\n", e.line, e.text);
	CHECK(doc != NULL);
	return json_object_get(doc, "vectors");
}

static inline size_t golden_unhex(const char *hex, unsigned char *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	CHECK(n <= max);
	for (size_t i = 0; i < n; i++)
		CHECK(sscanf(hex + 2 * i, "%2hhx", &out[i]) == 1);
	return n;
}

/* Bytes in Avro JSON are a string of code points 0-255 (UTF-8 in the file). */
static inline size_t golden_bytes(const char *s, size_t len, unsigned char *out)
{
	size_t n = 0;
	const unsigned char *end = (const unsigned char *)s + len;

	for (const unsigned char *p = (const unsigned char *)s; p < end;) {
		if (*p < 0x80) {
			out[n++] = *p++;
		} else {
			out[n++] = (unsigned char)(((p[0] & 0x1f) << 6) | (p[1] & 0x3f));
			p += 2;
		}
	}
	return n;
}

static inline const char *golden_branch_name(avro_schema_t s)
{
	if (avro_typeof(s) == AVRO_LINK)
		s = avro_schema_link_target(s);
	switch (avro_typeof(s)) {
	case AVRO_STRING:
		return "string";
	case AVRO_BYTES:
		return "bytes";
	case AVRO_INT32:
		return "int";
	case AVRO_INT64:
		return "long";
	case AVRO_FLOAT:
		return "float";
	case AVRO_DOUBLE:
		return "double";
	case AVRO_BOOLEAN:
		return "boolean";
	case AVRO_NULL:
		return "null";
	default:
		return avro_schema_name(s);
	}
}

static inline void golden_fill(avro_value_t *v, json_t *j)
{
	avro_schema_t s = avro_value_get_schema(v);
	avro_value_t child;
	unsigned char bytes[1024];

	switch (avro_value_get_type(v)) {
	case AVRO_STRING:
		CHECK(avro_value_set_string(v, json_string_value(j)) == 0);
		break;
	case AVRO_BYTES: {
		size_t n = golden_bytes(json_string_value(j), json_string_length(j), bytes);
		CHECK(avro_value_set_bytes(v, bytes, n) == 0);
		break;
	}
	case AVRO_INT32:
		CHECK(avro_value_set_int(v, (int32_t)json_integer_value(j)) == 0);
		break;
	case AVRO_INT64:
		CHECK(avro_value_set_long(v, (int64_t)json_integer_value(j)) == 0);
		break;
	case AVRO_DOUBLE:
		CHECK(avro_value_set_double(v, json_number_value(j)) == 0);
		break;
	case AVRO_FLOAT:
		CHECK(avro_value_set_float(v, (float)json_number_value(j)) == 0);
		break;
	case AVRO_BOOLEAN:
		CHECK(avro_value_set_boolean(v, json_is_true(j)) == 0);
		break;
	case AVRO_NULL:
		CHECK(avro_value_set_null(v) == 0);
		break;
	case AVRO_ENUM: {
		int i = avro_schema_enum_get_by_name(s, json_string_value(j));
		CHECK(i >= 0);
		CHECK(avro_value_set_enum(v, i) == 0);
		break;
	}
	case AVRO_RECORD:
		for (size_t i = 0; i < avro_schema_record_size(s); i++) {
			const char *name;
			CHECK(avro_value_get_by_index(v, i, &child, &name) == 0);
			json_t *f = json_object_get(j, name);
			CHECK(f != NULL);
			golden_fill(&child, f);
		}
		break;
	case AVRO_ARRAY: {
		size_t i;
		json_t *item;
		json_array_foreach(j, i, item)
		{
			CHECK(avro_value_append(v, &child, NULL) == 0);
			golden_fill(&child, item);
		}
		break;
	}
	case AVRO_UNION: {
		const char *key = NULL;
		json_t *inner = NULL;
		if (!json_is_null(j)) {
			void *it = json_object_iter(j);
			CHECK(it != NULL);
			key = json_object_iter_key(it);
			inner = json_object_iter_value(it);
			if (strrchr(key, '.'))
				key = strrchr(key, '.') + 1;
		}
		for (size_t b = 0; b < avro_schema_union_size(s); b++) {
			const char *name = golden_branch_name(avro_schema_union_branch(s, (int)b));
			if ((key == NULL && strcmp(name, "null") == 0) ||
			    (key && strcmp(name, key) == 0)) {
				CHECK(avro_value_set_branch(v, (int)b, &child) == 0);
				golden_fill(&child, key ? inner : j);
				return;
			}
		}
		CHECK(!"no union branch matches the vector");
		break;
	}
	default:
		CHECK(!"unsupported type in a golden vector");
	}
}
#endif
