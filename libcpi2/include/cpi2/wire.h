/* wire: the project's wire format on libavro. Every Kafka message is Avro single-object
 * encoding: C3 01, the 8-byte little-endian CRC-64-AVRO fingerprint of the writer schema, the
 * binary payload. A codec knows every archived version of its message (generated at build
 * time from schemas/versions/) and decodes any of them. */
#ifndef CPI2_WIRE_H
#define CPI2_WIRE_H

#include <avro.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpi2_schemas_gen.h"

struct cpi2_codec;

/* The newest archived version of a message ("CpiSample"), or NULL. */
const struct cpi2_schema_version *cpi2_schema_current(const char *message);

/* Open a codec for message. Returns 0 or -errno with a reason in errstr. */
int cpi2_codec_open(struct cpi2_codec **out, const char *message, char *errstr, size_t errsz);

/* A reusable value of the current schema to fill before cpi2_codec_encode (owned by the codec). */
avro_value_t *cpi2_codec_value(struct cpi2_codec *c);

/* Encode v (a value of the current schema) with the single-object header into buf.
 * Returns 0, or -ENOSPC if bufsz is too small, or -EINVAL. */
int cpi2_codec_encode(struct cpi2_codec *c, avro_value_t *v, void *buf, size_t bufsz, size_t *len);

/* Decode a message written by any archived version into a value of that writer's schema, owned
 * by the codec and valid until the next decode of the same version. Read it by field name (the
 * getters below): a field added after the writer's version reads as -ENOENT, i.e. its default.
 * (libavro's schema resolution crashes on added fields.) Returns 0 or -EINVAL / -ENOENT with a
 * reason: too short, bad magic, unknown fingerprint, malformed or truncated payload (a length past
 * the end, an enum or union index out of range, a string that is not UTF-8), trailing bytes. */
int cpi2_codec_decode(struct cpi2_codec *c, const void *buf, size_t len, avro_value_t **out,
		      char *errstr, size_t errsz);

/* Free the codec and its values. */
void cpi2_codec_close(struct cpi2_codec *c);

/* UTF-8 as the Avro specification asks of strings (Java and Python decoders would otherwise
 * read other characters than the C agents): no overlong forms, no surrogates, nothing above
 * U+10FFFF. cpi2_utf8_char: the length (1..4) of the valid character at s (left bytes there), 0
 * when the bytes are not one, -n when they begin an n-byte character that left cuts short. */
int cpi2_utf8_char(const char *s, size_t left);
bool cpi2_utf8_valid(const char *s, size_t len);
/* The length of the longest prefix of s[0..len) that is UTF-8. */
size_t cpi2_utf8_prefix(const char *s, size_t len);

/* Field setters on a record value; the ["null", X] forms pick the branch. 0 or -errno; a string
 * that is not UTF-8 is refused (-EINVAL). */
int cpi2_value_set_string(avro_value_t *rec, const char *field, const char *s);
int cpi2_value_set_long(avro_value_t *rec, const char *field, int64_t v);
int cpi2_value_set_int(avro_value_t *rec, const char *field, int32_t v);
int cpi2_value_set_double(avro_value_t *rec, const char *field, double v);
int cpi2_value_set_bool(avro_value_t *rec, const char *field, bool v);
int cpi2_value_set_bytes(avro_value_t *rec, const char *field, const void *p, size_t len);
int cpi2_value_set_enum(avro_value_t *rec, const char *field, const char *symbol);
int cpi2_value_set_null(avro_value_t *rec, const char *field);
int cpi2_value_set_opt_string(avro_value_t *rec, const char *field, const char *s);
int cpi2_value_set_opt_long(avro_value_t *rec, const char *field, int64_t v);
int cpi2_value_set_opt_int(avro_value_t *rec, const char *field, int32_t v);
int cpi2_value_set_opt_double(avro_value_t *rec, const char *field, double v);

/* Field getters for plain and ["null", X] fields (*is_null tells which; may be NULL when the
 * field cannot be null). Return 0, -ENOENT for an unknown field, -EINVAL for a type mismatch. */
int cpi2_value_get_string(avro_value_t *rec, const char *field, const char **s, bool *is_null);
int cpi2_value_get_long(avro_value_t *rec, const char *field, int64_t *v, bool *is_null);
int cpi2_value_get_int(avro_value_t *rec, const char *field, int32_t *v, bool *is_null);
int cpi2_value_get_double(avro_value_t *rec, const char *field, double *v, bool *is_null);
int cpi2_value_get_enum(avro_value_t *rec, const char *field, const char **symbol);

#endif
