/* wire: the codec encodes every golden vector to exactly its bytes (the same bytes Java and
 * Python produce), decodes them back, and refuses random and truncated input with a reason. */
#include <cpi2/wire.h>

#include "golden.h"

int main(void)
{
	json_t *vectors = golden_load(), *vec;
	unsigned char want[4096], got[4096];
	char err[512];
	size_t i, n, len, len2;
	int checked = 0;

	json_array_foreach(vectors, i, vec)
	{
		struct cpi2_codec *c;
		const char *msg = json_string_value(json_object_get(vec, "message"));
		avro_value_t *v, *dec;

		CHECK(cpi2_codec_open(&c, msg, err, sizeof(err)) == 0);
		v = cpi2_codec_value(c);
		avro_value_reset(v);
		golden_fill(v, json_object_get(vec, "value"));
		CHECK(cpi2_codec_encode(c, v, got, sizeof(got), &len) == 0);
		n = golden_unhex(json_string_value(json_object_get(vec, "hex")), want,
				 sizeof(want));
		if (len != n || memcmp(got, want, n) != 0)
			fprintf(stderr, "vector %s: C bytes differ from the golden hex\n",
				json_string_value(json_object_get(vec, "name")));
		CHECK(len == n && memcmp(got, want, n) == 0);
		/* the fingerprint in the vector is the one in the generated header */
		char fp[17];
		snprintf(fp, sizeof(fp), "%016llx",
			 (unsigned long long)cpi2_schema_current(msg)->fingerprint);
		CHECK(strcmp(fp, json_string_value(json_object_get(vec, "fingerprint"))) == 0);
		/* decode and re-encode: the same bytes */
		CHECK(cpi2_codec_decode(c, want, n, &dec, err, sizeof(err)) == 0);
		CHECK(avro_value_equal(dec, v));
		CHECK(cpi2_codec_encode(c, dec, got, sizeof(got), &len2) == 0 && len2 == n &&
		      memcmp(got, want, n) == 0);
		/* every truncation and a trailing byte are refused with a reason */
		for (size_t cut = 0; cut < n; cut++) {
			err[0] = '\0';
			CHECK(cpi2_codec_decode(c, want, cut, &dec, err, sizeof(err)) != 0 &&
			      err[0]);
		}
		want[n] = 0;
		CHECK(cpi2_codec_decode(c, want, n + 1, &dec, err, sizeof(err)) != 0 &&
		      strstr(err, "trailing"));
		/* random payloads behind a valid header, and random bytes: refused or decoded,
		 * never a crash */
		srand(42);
		for (int r = 0; r < 20000; r++) {
			size_t m = (size_t)(rand() % 200);
			for (size_t k = 0; k < m; k++)
				got[k] = (unsigned char)rand();
			if (r % 2 == 0 && m >= 10)
				memcpy(got, want, 10);
			else if (r % 3 == 0 && m > 10) {
				memcpy(got, want, m < n ? m : n);
				got[10 + (size_t)rand() % (m - 10)] ^=
				    (unsigned char)(1 + rand() % 255);
			}
			err[0] = '\0';
			if (cpi2_codec_decode(c, got, m, &dec, err, sizeof(err)) != 0)
				CHECK(err[0] != '\0');
		}
		cpi2_codec_close(c);
		checked++;
	}
	/* unknown fingerprint and wrong message type */
	struct cpi2_codec *c;
	avro_value_t *dec;
	unsigned char junk[32] = {0xC3, 0x01, 1, 2, 3, 4, 5, 6, 7, 8};
	CHECK(cpi2_codec_open(&c, "Incident", err, sizeof(err)) == 0);
	CHECK(cpi2_codec_decode(c, junk, sizeof(junk), &dec, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "unknown"));
	junk[0] = 0;
	CHECK(cpi2_codec_decode(c, junk, sizeof(junk), &dec, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "magic"));
	CHECK(cpi2_codec_decode(c, junk, 3, &dec, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "short"));
	cpi2_codec_close(c);
	CHECK(cpi2_codec_open(&c, "NoSuchMessage", err, sizeof(err)) == -ENOENT);
	/* An Incident written by schema v1 (before suspects had a lift) decodes with today's codec:
	 * its fields read by name, the suspect's later field reads as absent. */
	static const char v1_incident[] = "c301491e9e221bbaf0c438686f73742d303030312d31373030303030"
					  "3630303030303030302d3112686f73742d"
					  "3030303180988cbe8789850602286c732f7765627365617263682d6c"
					  "6561662d31371c7765627365617263682d"
					  "6c65616604703100003333333333330340cdccccccccccec3f000000"
					  "0000000040cdccccccccccfc3f9a999999"
					  "9999b93f8080f2818389850680988cbe87898506041a62617463682f"
					  "766964656f2d3320766964656f2d70726f"
					  "63657373696e6702713d0ad7a370dd3f0000000000000c40186c732f"
					  "636f6e74656e742d3124636f6e74656e74"
					  "2d6469676974697a696e6700295c8fc2f528dc3f000000000000f03f"
					  "000000021a62617463682f766964656f2d"
					  "330220766964656f2d70726f63657373696e67020202713d0ad7a370"
					  "dd3f029a9999999999b93f02d8040285eb"
					  "51b81e85e33f";
	const char *sym, *host;
	double cap;
	bool is_null;
	avro_value_t suspects, first, lift;
	n = golden_unhex(v1_incident, want, sizeof(want));
	CHECK(cpi2_codec_open(&c, "Incident", err, sizeof(err)) == 0);
	CHECK(cpi2_codec_decode(c, want, n, &dec, err, sizeof(err)) == 0);
	CHECK(cpi2_value_get_string(dec, "host", &host, &is_null) == 0 &&
	      strcmp(host, "host-0001") == 0);
	CHECK(cpi2_value_get_enum(dec, "decision", &sym) == 0 && strcmp(sym, "THROTTLE") == 0);
	CHECK(cpi2_value_get_double(dec, "cap_cpu", &cap, &is_null) == 0 && !is_null && cap == 0.1);
	CHECK(avro_value_get_by_name(dec, "suspects", &suspects, NULL) == 0);
	CHECK(avro_value_get_by_index(&suspects, 0, &first, NULL) == 0);
	CHECK(avro_value_get_by_name(&first, "lift", &lift, NULL) != 0);
	cpi2_codec_close(c);
	golden_free();
	printf("test-wire: ok (%d golden vectors, C bytes equal Java's)\n", checked);
	return 0;
}
