/* hostauth: the shared vectors (schemas/golden/hostauth.json: host keys and record MACs as
 * Python and Java compute them), the client file's properties (refused when incomplete or
 * malformed), and signing as the file's host or, with the master, as each record's key. */
#include <cpi2/hostauth.h>

#include <errno.h>
#include <jansson.h>
#include <string.h>

#include "check.h"
#include "golden.h"

static const char *str(json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	CHECK(s != NULL, "%s", k);
	return s;
}

int main(void)
{
	json_error_t e;
	json_t *doc = json_load_file(CPI2_SOURCE_DIR "/schemas/golden/hostauth.json", 0, &e);
	unsigned char master[32], key[32], want[32], value[512], mac[16], got[16];
	struct cpi2_hostauth a;
	char err[256], prop[128];
	const char *host;
	size_t i, n;
	json_t *v;

	memset(&a, 0, sizeof(a));
	CHECK(doc != NULL, "hostauth.json:%d: %s", e.line, e.text);
	CHECK(strcmp(str(json_object_get(doc, "headers"), "host"), CPI2_HOSTAUTH_HEADER_HOST) ==
		  0 &&
	      strcmp(str(json_object_get(doc, "headers"), "key_id"), CPI2_HOSTAUTH_HEADER_KEY_ID) ==
		  0 &&
	      strcmp(str(json_object_get(doc, "headers"), "mac"), CPI2_HOSTAUTH_HEADER_MAC) == 0 &&
	      json_integer_value(json_object_get(doc, "mac_len")) == CPI2_HOSTAUTH_MAC_LEN);
	golden_unhex(str(doc, "master_hex"), master, sizeof(master));
	json_array_foreach(json_object_get(doc, "vectors"), i, v)
	{
		cpi2_hostauth_host_key(master, str(v, "host"), key);
		golden_unhex(str(v, "host_key_hex"), want, sizeof(want));
		CHECK(memcmp(key, want, 32) == 0, "host key of %s", str(v, "host"));
		n = golden_unhex(str(v, "value_hex"), value, sizeof(value));
		cpi2_hostauth_mac(key, str(v, "topic"), value, n, mac);
		golden_unhex(str(v, "mac_hex"), want, sizeof(want));
		CHECK(memcmp(mac, want, 16) == 0, "mac of %s", str(v, "host"));

		/* the master signs as the record's Kafka key; a host's file as its host only */
		cpi2_hostauth_free(&a);
		memset(&a, 0, sizeof(a));
		snprintf(prop, sizeof(prop), "cpi2.host.master=%s", str(doc, "master_hex"));
		CHECK(cpi2_hostauth_prop(&a, prop, err, sizeof(err)) == 1 &&
		      cpi2_hostauth_prop(&a, "cpi2.host.key.id=1", err, sizeof(err)) == 1 &&
		      cpi2_hostauth_check(&a, err, sizeof(err)) == 0);
		CHECK(cpi2_hostauth_sign(&a, str(v, "topic"), str(v, "host"),
					 strlen(str(v, "host")), value, n, &host, got) == 0 &&
		      strcmp(host, str(v, "host")) == 0 && memcmp(got, mac, 16) == 0);
		cpi2_hostauth_free(&a);
		memset(&a, 0, sizeof(a));
		snprintf(prop, sizeof(prop), "cpi2.host.key=%s", str(v, "host_key_hex"));
		CHECK(cpi2_hostauth_prop(&a, prop, err, sizeof(err)) == 1);
		snprintf(prop, sizeof(prop), "cpi2.host=%s", str(v, "host"));
		CHECK(cpi2_hostauth_prop(&a, prop, err, sizeof(err)) == 1 &&
		      cpi2_hostauth_prop(&a, "cpi2.host.key.id=1", err, sizeof(err)) == 1 &&
		      cpi2_hostauth_check(&a, err, sizeof(err)) == 0);
		for (int again = 0; again < 2; again++) /* the keyed context used again */
			CHECK(cpi2_hostauth_sign(&a, str(v, "topic"), "other", 5, value, n, &host,
						 got) == 0 &&
			      strcmp(host, str(v, "host")) == 0 && memcmp(got, mac, 16) == 0);
	}
	/* not ours: left to librdkafka; ours but wrong: refused with the reason */
	cpi2_hostauth_free(&a);
	memset(&a, 0, sizeof(a));
	CHECK(cpi2_hostauth_prop(&a, "linger.ms=5", err, sizeof(err)) == 0);
	CHECK(cpi2_hostauth_prop(&a, "cpi2.host.key=abc", err, sizeof(err)) == -EINVAL &&
	      strstr(err, "hex"));
	CHECK(cpi2_hostauth_prop(&a, "cpi2.host=a\nb", err, sizeof(err)) == -EINVAL);
	CHECK(cpi2_hostauth_prop(&a, "cpi2.host.key.id=x", err, sizeof(err)) == -EINVAL);
	CHECK(cpi2_hostauth_prop(&a, "cpi2.hostx=1", err, sizeof(err)) == -EINVAL);
	CHECK(cpi2_hostauth_check(&a, err, sizeof(err)) == 0); /* none: no signature */
	CHECK(cpi2_hostauth_prop(&a, "cpi2.host=node-a", err, sizeof(err)) == 1 &&
	      cpi2_hostauth_check(&a, err, sizeof(err)) == -EINVAL); /* a host without a key */
	cpi2_hostauth_free(&a);
	memset(&a, 0, sizeof(a));
	snprintf(prop, sizeof(prop), "cpi2.host.master=%s", str(doc, "master_hex"));
	CHECK(cpi2_hostauth_prop(&a, prop, err, sizeof(err)) == 1 &&
	      cpi2_hostauth_check(&a, err, sizeof(err)) == -EINVAL); /* no key id */
	CHECK(cpi2_hostauth_prop(&a, "cpi2.host.key.id=7", err, sizeof(err)) == 1 &&
	      cpi2_hostauth_check(&a, err, sizeof(err)) == 0);
	CHECK(cpi2_hostauth_sign(&a, "t", NULL, 0, "v", 1, &host, got) == -EINVAL); /* no key */
	CHECK(cpi2_hostauth_sign(&a, "t", "a\nb", 3, "v", 1, &host, got) == -EINVAL);
	cpi2_hostauth_free(&a);
	json_decref(doc);
	printf("test-hostauth: ok (%zu shared vectors)\n", i);
	return 0;
}
