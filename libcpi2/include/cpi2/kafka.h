/* kafka: the producer and consumer of the host agents, on librdkafka. Kafka properties are
 * passed through unchanged ("key=value", like -X of kcat). The producer never blocks its
 * caller: a full queue is a counted drop. */
#ifndef CPI2_KAFKA_H
#define CPI2_KAFKA_H

#include <stddef.h>
#include <stdint.h>

struct cpi2_producer;
struct cpi2_consumer;

struct cpi2_producer_stats {
	uint64_t sent;		     /* accepted into the queue */
	uint64_t delivered;	     /* acknowledged by the broker */
	uint64_t failed;	     /* delivery failed after retries */
	uint64_t dropped_queue_full; /* refused: the bounded queue was full */
};

struct cpi2_message {
	const char *topic;
	int32_t partition;
	int64_t offset;
	const void *key;
	size_t keylen;
	const void *payload;
	size_t len;
	int64_t timestamp_ms; /* the message's Kafka timestamp, or -1 */
};

/* Is the librdkafka property (its key, or "key=value") a secret (sasl.password,
 * ssl.key.password, sasl.oauthbearer.client.secret, an inline private key...)? Secrets are
 * refused on a command line, where every local user reads them in ps and /proc; they belong in
 * a client file. */
int cpi2_kafka_prop_is_secret(const char *prop);

/* Does the librdkafka property (its key, or "key=value") load code into the process or run a
 * command (plugin.library.paths, ssl.engine.location, ssl.providers, sasl.kerberos.kinit.cmd)?
 * The agents refuse those, in a client file and with -X: they run as uid 0. */
int cpi2_kafka_prop_loads_code(const char *prop);

/* Read a Kafka client file (librdkafka properties, "key=value" lines, '#' comments: e.g.
 * security.protocol, sasl.mechanisms, sasl.username, sasl.password, ssl.ca.location) and append
 * its properties to props[*n...] (at most max in all; no NULL is added). The file must be a
 * regular file owned by this process's uid that neither group nor others may read or write
 * (mode 0600 or stricter): it holds a password, any local user who can read it signs in as its
 * principal, and its owner decides what the process loads; a property that loads code
 * (cpi2_kafka_prop_loads_code) is refused. The strings stay
 * valid until the next call (one client file per process). Returns 0, or -errno with a reason
 * naming path (and line). */
int cpi2_kafka_client_file(const char *path, const char **props, int max, int *n, char *err,
			   size_t errsz);

/* A producer with idempotence, lz4 compression and a bounded queue; props override defaults.
 * Returns 0 or -EINVAL with a reason. */
int cpi2_producer_new(struct cpi2_producer **out, const char *brokers, const char *const *props,
		      char *errstr, size_t errsz);

/* Queue one message (copied). Returns 0, -ENOBUFS when the queue is full (counted as dropped),
 * or -EIO. Never blocks. */
int cpi2_producer_send(struct cpi2_producer *p, const char *topic, const void *key, size_t keylen,
		       const void *val, size_t vallen);

/* Serve delivery reports (call often; never blocks). */
void cpi2_producer_poll(struct cpi2_producer *p);

/* A delivery report: err is 0 when the broker acknowledged the message (the producer is
 * idempotent, so acks=all: every in-sync replica has it, and a retry after a broker failover is
 * not written twice), else -EIO (delivery failed for good). key and val are the message as sent,
 * valid during the call. */
typedef void (*cpi2_delivery_fn)(void *arg, const void *key, size_t keylen, const void *val,
				 size_t vallen, int err);

/* Call fn for every delivery report from now on (NULL: none), from cpi2_producer_poll, _flush
 * and _close, after the counters are updated. */
void cpi2_producer_on_delivery(struct cpi2_producer *p, cpi2_delivery_fn fn, void *arg);

/* Counters so far. */
void cpi2_producer_get_stats(struct cpi2_producer *p, struct cpi2_producer_stats *out);

/* Wait at most timeout_ms for the queue to drain (delivery reports are served, so the
 * counters are final after it). Returns the number of messages still waiting. */
int cpi2_producer_flush(struct cpi2_producer *p, int timeout_ms);

/* Flush for at most timeout_ms, log what is left, destroy. Returns the number of messages
 * that were not delivered in time (0 when everything went out). */
int cpi2_producer_close(struct cpi2_producer *p, int timeout_ms);

/* A consumer of topics in group group_id (offsets committed by cpi2_consumer_commit).
 * Returns 0 or -EINVAL with a reason. */
int cpi2_consumer_new(struct cpi2_consumer **out, const char *brokers, const char *group_id,
		      const char *const *topics, const char *const *props, char *errstr,
		      size_t errsz);

/* Wait up to timeout_ms for a message. Returns 1 with *msg (valid until the next poll or
 * close), 0 on timeout or end of partition, or -errno for a consumer error. */
int cpi2_consumer_poll(struct cpi2_consumer *c, int timeout_ms, struct cpi2_message *msg);

/* Mark the last message returned by poll as done: its offset is committed within a second
 * (auto.commit.interval.ms) and at close. 0 or -EIO. */
int cpi2_consumer_commit(struct cpi2_consumer *c);

/* Commit what was marked done, leave the group and destroy. */
void cpi2_consumer_close(struct cpi2_consumer *c);

/* Send a DeadLetter record (component, source topic, partition, offset, reason, payload) to
 * cpi2.dead-letter. Returns 0 or -errno. */
int cpi2_dead_letter(struct cpi2_producer *p, const char *component, const struct cpi2_message *m,
		     const char *reason);

#endif
