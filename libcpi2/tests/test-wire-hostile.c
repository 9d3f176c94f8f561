/* wire, hostile payloads: strings that are not UTF-8 (invalid bytes, overlong forms, surrogates,
 * past U+10FFFF, cut short), refused by the decoder and by the encoder's setters, enum and union
 * indexes out of range, and optional strings that switch branch from one message to the next are
 * refused or decoded, and nothing the codec allocates is lost: LeakSanitizer checks the heap while
 * the codec still holds its last value, and again after it is closed. */
#include <cpi2/wire.h>

#include <errno.h>
#include <string.h>

#include "check.h"
#include "lsan.h"

static struct cpi2_codec *codec;
static unsigned char buf[1024];

/* Set a string field to any bytes, past the setters' UTF-8 check (a hostile writer's message). */
static void raw_string(avro_value_t *v, const char *name, const char *s)
{
	avro_value_t f, b;

	CHECK(avro_value_get_by_name(v, name, &f, NULL) == 0);
	if (avro_value_get_type(&f) == AVRO_UNION) {
		CHECK(avro_value_set_branch(&f, 1, &b) == 0);
		f = b;
	}
	CHECK(avro_value_set_string(&f, s) == 0);
}

/* Encode a ControlCommand whose host (["null", "string"]) is host (NULL: null) and whose
 * operator (a plain string) is op; returns the length. */
static size_t command(const char *host, const char *op)
{
	avro_value_t *v = cpi2_codec_value(codec);
	size_t len;

	avro_value_reset(v);
	CHECK(cpi2_value_set_string(v, "command_id", "c-1") == 0);
	CHECK(cpi2_value_set_long(v, "issued_at_us", 1700000000000000LL) == 0);
	CHECK(cpi2_value_set_enum(v, "command", "CAP") == 0);
	if (host)
		raw_string(v, "host", host);
	else
		CHECK(cpi2_value_set_null(v, "host") == 0);
	CHECK(cpi2_value_set_opt_string(v, "task", "batch/a") == 0);
	CHECK(cpi2_value_set_opt_double(v, "cap_cpu", 0.1) == 0);
	CHECK(cpi2_value_set_null(v, "duration_s") == 0);
	raw_string(v, "operator", op);
	CHECK(cpi2_value_set_string(v, "reason", "") == 0);
	CHECK(cpi2_codec_encode(codec, v, buf, sizeof(buf), &len) == 0);
	return len;
}

static int decode(size_t len, avro_value_t **out)
{
	char err[256] = "";
	int rc = cpi2_codec_decode(codec, buf, len, out, err, sizeof(err));

	CHECK(rc == 0 || err[0] != '\0');
	return rc;
}

/* The host decodes to exactly host, or is refused when want_ok is false. */
static void host_roundtrip(const char *host, bool want_ok)
{
	avro_value_t *dec;
	const char *got;
	bool is_null;
	size_t len = command(host, "op");

	if (!want_ok) {
		CHECK(decode(len, &dec) == -EINVAL);
		return;
	}
	CHECK(decode(len, &dec) == 0);
	CHECK(cpi2_value_get_string(dec, "host", &got, &is_null) == 0);
	CHECK(host ? !is_null && strcmp(got, host) == 0 : is_null);
}

int main(void)
{
	static const char *bad[] = {
	    "\xff",
	    "h\x80",
	    "\xc0\xaf",
	    "\xc1\xbf",
	    "\xe0\x80\xaf",
	    "\xed\xa0\x80",
	    "\xf0\x80\x80\xaf",
	    "\xf4\x90\x80\x80",
	    "\xf5\x80\x80\x80",
	    "ab\xe2\x82",
	    "\xe2\x28\xa1",
	    "\xc3",
	};
	static const char *good[] = {"host-1",
				     "h\xc3\xa9te",
				     "\xe2\x82\xac",
				     "\xf0\x9f\x98\x80",
				     "\xf4\x8f\xbf\xbf",
				     "\xef\xbf\xbd",
				     ""};
	char err[256];
	avro_value_t *dec;
	size_t len;
	unsigned char *p;
	int refused = 0;

	CHECK(cpi2_codec_open(&codec, "ControlCommand", err, sizeof(err)) == 0);
	/* the encoder refuses what its decoders would: no record with such a string is written */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(
		    cpi2_value_set_string(cpi2_codec_value(codec), "operator", bad[i]) == -EINVAL &&
		    cpi2_value_set_opt_string(cpi2_codec_value(codec), "host", bad[i]) == -EINVAL);
	CHECK(cpi2_utf8_char("\xe2\x82", 2) == -3 && cpi2_utf8_char("\xe2\x28\xa1", 3) == 0 &&
	      cpi2_utf8_char("\xf0\x9f\x98\x80", 4) == 4);
	for (int round = 0; round < 200; round++) {
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			host_roundtrip(bad[i], false);
			/* the same bytes in a plain string field */
			len = command("host-1", bad[i]);
			CHECK(decode(len, &dec) == -EINVAL);
			/* and a valid host between them: the union switches branch and back */
			host_roundtrip(good[i % (sizeof(good) / sizeof(good[0]))], true);
			host_roundtrip(NULL, true);
		}
		for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
			host_roundtrip(good[i], true);
		/* the enum after command_id (06 "c-1") and issued_at_us: index 4 of 4 symbols */
		len = command("host-1", "op");
		p = memmem(buf, len,
			   "\x06"
			   "c-1",
			   4);
		CHECK(p != NULL);
		p += 4;
		while (*p & 0x80)
			p++;
		p++;
		CHECK(*p == 0x00); /* CAP */
		*p = 0x08;
		CHECK(decode(len, &dec) == -EINVAL);
		*p = 0x01; /* -1 */
		CHECK(decode(len, &dec) == -EINVAL);
		/* the host's union index: 2 of ["null", "string"] */
		*p = 0x00;
		CHECK(p[1] == 0x02);
		p[1] = 0x04;
		CHECK(decode(len, &dec) == -EINVAL);
		p[1] = 0x02;
		CHECK(decode(len, &dec) == 0);
		/* every single-byte change of a valid message: refused or decoded, never lost */
		for (size_t i = 10; i < len; i++) {
			unsigned char was = buf[i];

			buf[i] = (unsigned char)(was ^ (1u << (round % 8)));
			refused += decode(len, &dec) != 0;
			buf[i] = was;
		}
		if (round % 50 == 0)
			CHECK(LEAK_CHECK());
	}
	CHECK(refused > 0);
	/* a live codec holding an optional string, a plain one, then nothing left after close */
	host_roundtrip("host-1", true);
	CHECK(LEAK_CHECK());
	cpi2_codec_close(codec);
	CHECK(LEAK_CHECK());
	printf("test-wire-hostile: ok (%d one-byte changes refused)\n", refused);
	return 0;
}
