/* hostauth: what an agent writes to Kafka, signed with its host's own key, so the detection job
 * can tell which host produced a record (the broker does not say). The algorithm, the headers and
 * the test vectors: python/cpi2/hostauth.py, schemas/golden/hostauth.json.
 *
 * A host's key is HMAC-SHA256(master, "cpi2 host key v1\0" host). A record gets the headers
 * cpi2-host (the host), cpi2-key (the master's id) and cpi2-mac (the first 16 bytes of
 * HMAC-SHA256(the host's key, topic "\0" value)). An agent signs as the host of its Kafka client
 * file (cpi2.host, cpi2.host.key, cpi2.host.key.id: issued per node with its Kafka principal), or,
 * a simulator of many hosts, as each record's Kafka key with the master (cpi2.host.master). */
#ifndef CPI2_HOSTAUTH_H
#define CPI2_HOSTAUTH_H

#include <stdbool.h>
#include <stddef.h>

#define CPI2_HOSTAUTH_KEY_LEN 32
#define CPI2_HOSTAUTH_MAC_LEN 16
#define CPI2_HOSTAUTH_HOST_MAX 255
#define CPI2_HOSTAUTH_HEADER_HOST "cpi2-host"
#define CPI2_HOSTAUTH_HEADER_KEY_ID "cpi2-key"
#define CPI2_HOSTAUTH_HEADER_MAC "cpi2-mac"

struct cpi2_hostauth {
	enum { CPI2_HOSTAUTH_NONE, CPI2_HOSTAUTH_HOST, CPI2_HOSTAUTH_MASTER } mode;
	char key_id[16];
	char host[CPI2_HOSTAUTH_HOST_MAX + 1];	    /* HOST: the host signed as */
	unsigned char key[CPI2_HOSTAUTH_KEY_LEN];   /* HOST: its key; MASTER: the master */
	char last_host[CPI2_HOSTAUTH_HOST_MAX + 1]; /* MASTER: the last host derived, and its key */
	unsigned char last_key[CPI2_HOSTAUTH_KEY_LEN];
	void *ctx; /* the MAC's context, keyed with ctx_key when ctx_keyed (OpenSSL EVP_MAC_CTX) */
	unsigned char ctx_key[CPI2_HOSTAUTH_KEY_LEN];
	bool ctx_keyed;
};

/* Free what signing keeps (the MAC's context). */
void cpi2_hostauth_free(struct cpi2_hostauth *a);

/* Take a "cpi2.host...=value" property (from a Kafka client file). Returns 1 when it is one of
 * ours (taken), 0 when it is not (a librdkafka property), or -EINVAL with a reason. */
int cpi2_hostauth_prop(struct cpi2_hostauth *a, const char *kv, char *err, size_t errsz);

/* After the properties: complete (a key id and a key or a master, a host with a key) or none.
 * Returns 0 or -EINVAL with a reason. */
int cpi2_hostauth_check(const struct cpi2_hostauth *a, char *err, size_t errsz);

/* out = the host's key under master. */
void cpi2_hostauth_host_key(const unsigned char master[CPI2_HOSTAUTH_KEY_LEN], const char *host,
			    unsigned char out[CPI2_HOSTAUTH_KEY_LEN]);

/* mac = the record's MAC under a host's key. */
void cpi2_hostauth_mac(const unsigned char key[CPI2_HOSTAUTH_KEY_LEN], const char *topic,
		       const void *value, size_t len, unsigned char mac[CPI2_HOSTAUTH_MAC_LEN]);

/* Sign a record of topic (its Kafka key kkey, kkeylen bytes: the host, for MASTER): *host is the
 * host signed as, mac its MAC. Returns 0, or -EINVAL when MASTER has no usable key to sign as. */
int cpi2_hostauth_sign(struct cpi2_hostauth *a, const char *topic, const void *kkey, size_t kkeylen,
		       const void *value, size_t len, const char **host,
		       unsigned char mac[CPI2_HOSTAUTH_MAC_LEN]);

#endif
