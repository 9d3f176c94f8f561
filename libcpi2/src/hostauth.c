/* hostauth: see cpi2/hostauth.h. */
#include <cpi2/hostauth.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/params.h>

#include <cpi2/wire.h>

static const char label[] = "cpi2 host key v1"; /* and its NUL */

static int unhex(const char *s, unsigned char *out, size_t n)
{
	if (strlen(s) != 2 * n)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1 ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i]) ||
		    !strchr("0123456789abcdefABCDEF", s[2 * i + 1]))
			return -EINVAL;
		out[i] = (unsigned char)v;
	}
	return 0;
}

/* A host name as the agents and the job take it: 1..255 bytes of UTF-8, no control character. */
static bool host_ok(const char *h, size_t len)
{
	if (len == 0 || len > CPI2_HOSTAUTH_HOST_MAX || !cpi2_utf8_valid(h, len))
		return false;
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)h[i] < 0x20 || h[i] == 0x7f)
			return false;
	return true;
}

int cpi2_hostauth_prop(struct cpi2_hostauth *a, const char *kv, char *err, size_t errsz)
{
	const char *eq = strchr(kv, '='), *v;
	size_t klen;

	if (strncmp(kv, "cpi2.", 5) != 0)
		return 0;
	if (!eq) {
		snprintf(err, errsz, "%s: expected key=value", kv);
		return -EINVAL;
	}
	klen = (size_t)(eq - kv);
	v = eq + 1;
	if (klen == strlen("cpi2.host") && !strncmp(kv, "cpi2.host", klen)) {
		if (!host_ok(v, strlen(v))) {
			snprintf(err, errsz, "cpi2.host: not a host name");
			return -EINVAL;
		}
		snprintf(a->host, sizeof(a->host), "%s", v);
		return 1;
	}
	if (klen == strlen("cpi2.host.key.id") && !strncmp(kv, "cpi2.host.key.id", klen)) {
		if (!*v || strlen(v) >= sizeof(a->key_id) || strspn(v, "0123456789") != strlen(v)) {
			snprintf(err, errsz, "cpi2.host.key.id: a number of at most %zu digits",
				 sizeof(a->key_id) - 1);
			return -EINVAL;
		}
		snprintf(a->key_id, sizeof(a->key_id), "%s", v);
		return 1;
	}
	if ((klen == strlen("cpi2.host.key") && !strncmp(kv, "cpi2.host.key", klen)) ||
	    (klen == strlen("cpi2.host.master") && !strncmp(kv, "cpi2.host.master", klen))) {
		bool master = kv[klen - 1] == 'r';

		if (a->mode != CPI2_HOSTAUTH_NONE) {
			snprintf(err, errsz, "cpi2.host.key and cpi2.host.master: one, once");
			return -EINVAL;
		}
		if (unhex(v, a->key, sizeof(a->key))) {
			snprintf(err, errsz, "%.*s: %d hex digits", (int)klen, kv,
				 2 * CPI2_HOSTAUTH_KEY_LEN);
			return -EINVAL;
		}
		a->mode = master ? CPI2_HOSTAUTH_MASTER : CPI2_HOSTAUTH_HOST;
		return 1;
	}
	snprintf(err, errsz,
		 "%.*s: not a property of the agents (cpi2.host, cpi2.host.key, "
		 "cpi2.host.key.id, cpi2.host.master)",
		 (int)klen, kv);
	return -EINVAL;
}

int cpi2_hostauth_check(const struct cpi2_hostauth *a, char *err, size_t errsz)
{
	if (a->mode == CPI2_HOSTAUTH_NONE && !a->host[0] && !a->key_id[0])
		return 0;
	if (a->mode == CPI2_HOSTAUTH_NONE || !a->key_id[0] ||
	    (a->mode == CPI2_HOSTAUTH_HOST) != (a->host[0] != '\0')) {
		snprintf(err, errsz,
			 "the host key needs cpi2.host.key.id and either cpi2.host with "
			 "cpi2.host.key, or cpi2.host.master alone");
		return -EINVAL;
	}
	return 0;
}

/* HMAC-SHA256 of the two parts a, b under key (OpenSSL 3's EVP_MAC); out: 32 bytes. */
static void hmac2(const unsigned char *key, size_t keylen, const void *a, size_t alen,
		  const void *b, size_t blen, unsigned char out[CPI2_HOSTAUTH_KEY_LEN])
{
	static EVP_MAC *hmac;
	OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0),
			       OSSL_PARAM_construct_end()};
	EVP_MAC_CTX *c;
	size_t n = 0;

	if (!hmac)
		hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	c = hmac ? EVP_MAC_CTX_new(hmac) : NULL;
	if (!c || !EVP_MAC_init(c, key, keylen, params) || !EVP_MAC_update(c, a, alen) ||
	    !EVP_MAC_update(c, b, blen) || !EVP_MAC_final(c, out, &n, CPI2_HOSTAUTH_KEY_LEN) ||
	    n != CPI2_HOSTAUTH_KEY_LEN)
		memset(out, 0, CPI2_HOSTAUTH_KEY_LEN); /* no memory: a MAC no job accepts */
	EVP_MAC_CTX_free(c);
}

void cpi2_hostauth_host_key(const unsigned char master[CPI2_HOSTAUTH_KEY_LEN], const char *host,
			    unsigned char out[CPI2_HOSTAUTH_KEY_LEN])
{
	hmac2(master, CPI2_HOSTAUTH_KEY_LEN, label, sizeof(label) /* its NUL too */, host,
	      strnlen(host, CPI2_HOSTAUTH_HOST_MAX), out);
}

void cpi2_hostauth_mac(const unsigned char key[CPI2_HOSTAUTH_KEY_LEN], const char *topic,
		       const void *value, size_t len, unsigned char mac[CPI2_HOSTAUTH_MAC_LEN])
{
	unsigned char full[CPI2_HOSTAUTH_KEY_LEN];

	hmac2(key, CPI2_HOSTAUTH_KEY_LEN, topic, strlen(topic) + 1, value, len, full);
	memcpy(mac, full, CPI2_HOSTAUTH_MAC_LEN);
	OPENSSL_cleanse(full, sizeof(full));
}

/* The record's MAC under key, with a's context kept keyed (a record costs no allocation and no
 * key set-up; the key's pads are all HMAC computes again). */
static void sign_with(struct cpi2_hostauth *a, const unsigned char key[CPI2_HOSTAUTH_KEY_LEN],
		      const char *topic, const void *value, size_t len,
		      unsigned char mac[CPI2_HOSTAUTH_MAC_LEN])
{
	static EVP_MAC *hmac;
	OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", "SHA256", 0),
			       OSSL_PARAM_construct_end()};
	unsigned char full[CPI2_HOSTAUTH_KEY_LEN];
	EVP_MAC_CTX *c = a->ctx;
	size_t n = 0;
	int ok;

	if (!hmac)
		hmac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	if (!c && hmac) {
		c = a->ctx = EVP_MAC_CTX_new(hmac);
		a->ctx_keyed = false;
	}
	if (c && (!a->ctx_keyed || memcmp(a->ctx_key, key, CPI2_HOSTAUTH_KEY_LEN) != 0)) {
		ok = EVP_MAC_init(c, key, CPI2_HOSTAUTH_KEY_LEN, params);
		memcpy(a->ctx_key, key, CPI2_HOSTAUTH_KEY_LEN);
		a->ctx_keyed = ok;
	} else {
		ok = c && EVP_MAC_init(c, NULL, 0, NULL); /* the same key */
	}
	if (!ok || !EVP_MAC_update(c, (const unsigned char *)topic, strlen(topic) + 1) ||
	    !EVP_MAC_update(c, value, len) || !EVP_MAC_final(c, full, &n, sizeof(full)) ||
	    n != sizeof(full)) {
		cpi2_hostauth_mac(key, topic, value, len, mac); /* the slow way */
		return;
	}
	memcpy(mac, full, CPI2_HOSTAUTH_MAC_LEN);
	OPENSSL_cleanse(full, sizeof(full));
}

void cpi2_hostauth_free(struct cpi2_hostauth *a)
{
	EVP_MAC_CTX_free(a->ctx);
	a->ctx = NULL;
	a->ctx_keyed = false;
	OPENSSL_cleanse(a->key, sizeof(a->key));
	OPENSSL_cleanse(a->ctx_key, sizeof(a->ctx_key));
	OPENSSL_cleanse(a->last_key, sizeof(a->last_key));
}

int cpi2_hostauth_sign(struct cpi2_hostauth *a, const char *topic, const void *kkey, size_t kkeylen,
		       const void *value, size_t len, const char **host,
		       unsigned char mac[CPI2_HOSTAUTH_MAC_LEN])
{
	if (a->mode == CPI2_HOSTAUTH_HOST) {
		*host = a->host;
		sign_with(a, a->key, topic, value, len, mac);
		return 0;
	}
	if (a->mode != CPI2_HOSTAUTH_MASTER || !kkey || !host_ok(kkey, kkeylen) ||
	    memchr(kkey, '\0', kkeylen))
		return -EINVAL;
	if (strlen(a->last_host) != kkeylen || memcmp(a->last_host, kkey, kkeylen) != 0) {
		memcpy(a->last_host, kkey, kkeylen);
		a->last_host[kkeylen] = '\0';
		cpi2_hostauth_host_key(a->key, a->last_host, a->last_key);
	}
	*host = a->last_host;
	sign_with(a, a->last_key, topic, value, len, mac);
	return 0;
}
