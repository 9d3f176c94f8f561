/* kafka: see cpi2/kafka.h. */
#include <cpi2/config.h>
#include <cpi2/hostauth.h>
#include <cpi2/kafka.h>
#include <cpi2/log.h>
#include <cpi2/names.h>
#include <cpi2/wire.h>

#include <errno.h>
#include <fcntl.h>
#include <librdkafka/rdkafka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_TOPICS 16

struct cpi2_producer {
	rd_kafka_t *rk; /* owns the topic handles */
	struct {
		char *name;
		rd_kafka_topic_t *rkt;
	} topics[MAX_TOPICS];
	int n_topics;
	struct cpi2_producer_stats stats;
	struct cpi2_codec *dead_letters;
	cpi2_delivery_fn delivery_fn; /* may be NULL */
	void *delivery_arg;
	struct cpi2_hostauth auth; /* signs each record as its host (cpi2/hostauth.h) */
};

struct cpi2_consumer {
	rd_kafka_t *rk;
	rd_kafka_message_t *last; /* destroyed at the next poll */
};

/* The text of the last client file read; props point into it. */
static char *client_file_text;

int cpi2_kafka_prop_is_secret(const char *prop)
{
	static const char *const secrets[] = {
	    "ssl.key.pem",   "ssl_key",		 "sasl.oauthbearer.config",
	    "cpi2.host.key", "cpi2.host.master", NULL};
	size_t len = strcspn(prop, "=");
	char key[256];

	if (len >= sizeof(key))
		len = sizeof(key) - 1;
	memcpy(key, prop, len);
	key[len] = '\0';
	if (strstr(key, "password") || strstr(key, "secret"))
		return 1;
	for (int i = 0; secrets[i]; i++)
		if (!strcmp(key, secrets[i]))
			return 1;
	return 0;
}

int cpi2_kafka_prop_loads_code(const char *prop)
{
	static const char *const code[] = {"plugin.library.paths", "ssl.engine.location",
					   "ssl.providers", "sasl.kerberos.kinit.cmd", NULL};
	size_t len = strcspn(prop, "=");

	while (len > 0 && (prop[len - 1] == ' ' || prop[len - 1] == '\t'))
		len--;
	for (int i = 0; code[i]; i++)
		if (strlen(code[i]) == len && !memcmp(prop, code[i], len))
			return 1;
	return 0;
}

int cpi2_kafka_client_file(const char *path, const char **props, int max, int *n, char *err,
			   size_t errsz)
{
	enum { MAX_SIZE = 65536 };
	struct stat st;
	char *text, *line, *next;
	ssize_t got;
	int fd, rc = 0, lineno = 0, n0 = *n;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errsz, "Kafka client file %s: %s", path, strerror(errno));
		return rc;
	}
	if (fstat(fd, &st)) {
		rc = -errno;
		snprintf(err, errsz, "Kafka client file %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode) || st.st_size >= MAX_SIZE) {
		snprintf(err, errsz, "Kafka client file %s: not a regular file under %d bytes",
			 path, MAX_SIZE);
		close(fd);
		return -EINVAL;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, errsz,
			 "Kafka client file %s: owned by uid %u, not by this process's %u: another "
			 "user could change what it signs in as and loads: chown it",
			 path, (unsigned)st.st_uid, (unsigned)geteuid());
		close(fd);
		return -EPERM;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		snprintf(err, errsz,
			 "Kafka client file %s: mode %04o lets group or others read it, and it "
			 "holds a password: "
			 "chmod 600 it",
			 path, (unsigned)(st.st_mode & 07777));
		close(fd);
		return -EPERM;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		close(fd);
		return -ENOMEM;
	}
	got = read(fd, text, (size_t)st.st_size);
	rc = got < 0 ? -errno : 0;
	close(fd);
	if (got < 0 || got != st.st_size) {
		snprintf(err, errsz, "Kafka client file %s: %s", path,
			 got < 0 ? strerror(-rc) : "changed while read");
		free(text);
		return rc ? rc : -EIO;
	}
	text[st.st_size] = '\0';
	for (line = text; line && *line; line = next) {
		char *s;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		s = cpi2_config_trim(line);
		if (*s == '#' || *s == '\0')
			continue;
		if (!strchr(s, '=') || *s == '=') {
			snprintf(err, errsz, "Kafka client file %s:%d: expected key=value", path,
				 lineno);
			rc = -EINVAL;
			break;
		}
		if (cpi2_kafka_prop_loads_code(s)) {
			snprintf(err, errsz,
				 "Kafka client file %s:%d: %.*s loads code or runs a command in "
				 "this process: refused",
				 path, lineno, (int)strcspn(s, "="), s);
			rc = -EPERM;
			break;
		}
		if (*n >= max) {
			snprintf(err, errsz,
				 "Kafka client file %s:%d: more than %d properties in all", path,
				 lineno, max);
			rc = -E2BIG;
			break;
		}
		props[(*n)++] = s;
	}
	if (rc) {
		*n = n0;
		free(text);
		return rc;
	}
	free(client_file_text);
	client_file_text = text;
	return 0;
}

static int set(rd_kafka_conf_t *conf, const char *kv, char *errstr, size_t errsz)
{
	char key[256];
	const char *eq = strchr(kv, '=');

	if (!eq || eq == kv || (size_t)(eq - kv) >= sizeof(key)) {
		snprintf(errstr, errsz, "Kafka property '%s' is not key=value", kv);
		return -EINVAL;
	}
	memcpy(key, kv, (size_t)(eq - kv));
	key[eq - kv] = '\0';
	if (rd_kafka_conf_set(conf, key, eq + 1, errstr, errsz) != RD_KAFKA_CONF_OK)
		return -EINVAL;
	return 0;
}

/* The client's configuration: brokers, defaults, then props; the agents' own cpi2.* properties
 * (the host key) go to auth, not to librdkafka. */
static int configure(rd_kafka_conf_t *conf, const char *brokers, const char *const *defaults,
		     const char *const *props, struct cpi2_hostauth *auth, char *errstr,
		     size_t errsz)
{
	if (rd_kafka_conf_set(conf, "bootstrap.servers", brokers, errstr, errsz) !=
	    RD_KAFKA_CONF_OK)
		return -EINVAL;
	for (; defaults && *defaults; defaults++)
		if (set(conf, *defaults, errstr, errsz))
			return -EINVAL;
	for (; props && *props; props++) {
		int rc = cpi2_hostauth_prop(auth, *props, errstr, errsz);

		if (rc < 0 || (rc == 0 && set(conf, *props, errstr, errsz)))
			return -EINVAL;
	}
	return cpi2_hostauth_check(auth, errstr, errsz) ? -EINVAL : 0;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
	struct cpi2_producer *p = opaque;

	(void)rk;
	if (m->err) {
		p->stats.failed++;
		if (p->stats.failed <= 10 || p->stats.failed % 10000 == 0)
			cpi2_log(CPI2_LOG_WARN, "kafka",
				 "delivery to %s failed: %s (%llu failures so far)",
				 rd_kafka_topic_name(m->rkt), rd_kafka_err2str(m->err),
				 (unsigned long long)p->stats.failed);
	} else {
		p->stats.delivered++;
	}
	if (p->delivery_fn)
		p->delivery_fn(p->delivery_arg, m->key, m->key_len, m->payload, m->len,
			       m->err ? -EIO : 0);
}

static void on_log(const rd_kafka_t *rk, int level, const char *fac, const char *buf)
{
	(void)rk;
	cpi2_log(level <= 3   ? CPI2_LOG_ERR
		 : level <= 4 ? CPI2_LOG_WARN
		 : level <= 6 ? CPI2_LOG_INFO
			      : CPI2_LOG_DEBUG,
		 "kafka", "%s: %s", fac, buf);
}

int cpi2_producer_new(struct cpi2_producer **out, const char *brokers, const char *const *props,
		      char *errstr, size_t errsz)
{
	static const char *const defaults[] = {
	    "enable.idempotence=true", "compression.codec=lz4", "linger.ms=5",
	    /* bounded memory: at most this much waits for the broker */
	    "queue.buffering.max.messages=1000000", "queue.buffering.max.kbytes=262144", NULL};
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	struct cpi2_producer *p = calloc(1, sizeof(*p));

	if (!p) {
		rd_kafka_conf_destroy(conf);
		return -ENOMEM;
	}
	if (configure(conf, brokers, defaults, props, &p->auth, errstr, errsz)) {
		rd_kafka_conf_destroy(conf);
		free(p);
		return -EINVAL;
	}
	rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
	rd_kafka_conf_set_log_cb(conf, on_log);
	rd_kafka_conf_set_opaque(conf, p);
	p->rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, errstr,
			     errsz); /* conf is destroyed by librdkafka */
	if (!p->rk) {
		free(p);
		return -EINVAL;
	}
	*out = p;
	return 0;
}

static rd_kafka_topic_t *topic(struct cpi2_producer *p, const char *name)
{
	for (int i = 0; i < p->n_topics; i++)
		if (strcmp(p->topics[i].name, name) == 0)
			return p->topics[i].rkt;
	if (p->n_topics == MAX_TOPICS)
		return NULL;
	p->topics[p->n_topics].rkt = rd_kafka_topic_new(p->rk, name, NULL);
	p->topics[p->n_topics].name = strdup(name);
	return p->topics[p->n_topics++].rkt;
}

int cpi2_producer_send(struct cpi2_producer *p, const char *name, const void *key, size_t keylen,
		       const void *val, size_t vallen)
{
	rd_kafka_topic_t *rkt = topic(p, name);
	unsigned char mac[CPI2_HOSTAUTH_MAC_LEN];
	rd_kafka_resp_err_t err;
	const char *host;

	if (!rkt)
		return -EIO;
	if (p->auth.mode == CPI2_HOSTAUTH_NONE ||
	    cpi2_hostauth_sign(&p->auth, name, key, keylen, val, vallen, &host, mac)) {
		/* unsigned: no key, or (the master) no host to sign as, e.g. a dead letter of a
		 * keyless message; the job refuses an unsigned sample or action */
		err = rd_kafka_produce(rkt, RD_KAFKA_PARTITION_UA, RD_KAFKA_MSG_F_COPY, (void *)val,
				       vallen, key, keylen, NULL) == -1
			  ? rd_kafka_last_error()
			  : RD_KAFKA_RESP_ERR_NO_ERROR;
	} else {
		/* signed as its host: the job drops a record whose signature is not its host's */
		err = rd_kafka_producev(
		    p->rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
		    RD_KAFKA_V_VALUE((void *)val, vallen), RD_KAFKA_V_KEY(key, keylen),
		    RD_KAFKA_V_HEADER(CPI2_HOSTAUTH_HEADER_HOST, host, (ssize_t)strlen(host)),
		    RD_KAFKA_V_HEADER(CPI2_HOSTAUTH_HEADER_KEY_ID, p->auth.key_id,
				      (ssize_t)strlen(p->auth.key_id)),
		    RD_KAFKA_V_HEADER(CPI2_HOSTAUTH_HEADER_MAC, mac, (ssize_t)sizeof(mac)),
		    RD_KAFKA_V_END);
	}
	if (err) {
		if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
			p->stats.dropped_queue_full++;
			return -ENOBUFS;
		}
		return -EIO;
	}
	p->stats.sent++;
	return 0;
}

void cpi2_producer_poll(struct cpi2_producer *p)
{
	rd_kafka_poll(p->rk, 0);
}

void cpi2_producer_on_delivery(struct cpi2_producer *p, cpi2_delivery_fn fn, void *arg)
{
	p->delivery_fn = fn;
	p->delivery_arg = arg;
}

void cpi2_producer_get_stats(struct cpi2_producer *p, struct cpi2_producer_stats *out)
{
	*out = p->stats;
}

int cpi2_producer_flush(struct cpi2_producer *p, int timeout_ms)
{
	rd_kafka_flush(p->rk, timeout_ms);
	return rd_kafka_outq_len(p->rk);
}

int cpi2_producer_close(struct cpi2_producer *p, int timeout_ms)
{
	int left;

	if (!p)
		return 0;
	rd_kafka_flush(p->rk, timeout_ms);
	cpi2_hostauth_free(&p->auth);
	left = rd_kafka_outq_len(p->rk);
	if (left > 0)
		cpi2_log(CPI2_LOG_WARN, "kafka", "%d messages not delivered after %d ms: dropped",
			 left, timeout_ms);
	for (int i = 0; i < p->n_topics; i++) {
		rd_kafka_topic_destroy(p->topics[i].rkt);
		free(p->topics[i].name);
	}
	rd_kafka_destroy(p->rk);
	cpi2_codec_close(p->dead_letters);
	free(p);
	return left;
}

int cpi2_consumer_new(struct cpi2_consumer **out, const char *brokers, const char *group_id,
		      const char *const *topics, const char *const *props, char *errstr,
		      size_t errsz)
{
	/* Offsets are stored by cpi2_consumer_commit and committed by librdkafka once a second and
	 * at close: committing every message (one OffsetCommit request each) queued tens of
	 * thousands of requests behind a burst of old messages, and close waited 20-30 s for them.
	 */
	static const char *const defaults[] = {
	    "enable.auto.commit=true",	    "enable.auto.offset.store=false",
	    "auto.commit.interval.ms=1000", "auto.offset.reset=earliest",
	    "enable.partition.eof=false",   NULL};
	rd_kafka_conf_t *conf = rd_kafka_conf_new();
	rd_kafka_topic_partition_list_t *list;
	struct cpi2_consumer *c = calloc(1, sizeof(*c));
	struct cpi2_hostauth unused = {0}; /* a consumer signs nothing */
	int n = 0;

	if (!c) {
		rd_kafka_conf_destroy(conf);
		return -ENOMEM;
	}
	if (configure(conf, brokers, defaults, props, &unused, errstr, errsz) ||
	    rd_kafka_conf_set(conf, "group.id", group_id, errstr, errsz) != RD_KAFKA_CONF_OK) {
		rd_kafka_conf_destroy(conf);
		free(c);
		return -EINVAL;
	}
	rd_kafka_conf_set_log_cb(conf, on_log);
	c->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr,
			     errsz); /* conf is destroyed by librdkafka */
	if (!c->rk) {
		free(c);
		return -EINVAL;
	}
	rd_kafka_poll_set_consumer(c->rk);
	while (topics[n])
		n++;
	list = rd_kafka_topic_partition_list_new(n);
	for (int i = 0; i < n; i++)
		rd_kafka_topic_partition_list_add(list, topics[i], RD_KAFKA_PARTITION_UA);
	rd_kafka_resp_err_t err = rd_kafka_subscribe(c->rk, list);

	rd_kafka_topic_partition_list_destroy(list);
	if (err) {
		snprintf(errstr, errsz, "subscribe: %s", rd_kafka_err2str(err));
		rd_kafka_destroy(c->rk);
		free(c);
		return -EINVAL;
	}
	*out = c;
	return 0;
}

int cpi2_consumer_poll(struct cpi2_consumer *c, int timeout_ms, struct cpi2_message *msg)
{
	rd_kafka_message_t *m;
	rd_kafka_timestamp_type_t tstype;

	if (c->last) {
		rd_kafka_message_destroy(c->last);
		c->last = NULL;
	}
	m = rd_kafka_consumer_poll(c->rk, timeout_ms);
	if (!m)
		return 0;
	if (m->err) {
		int rc = m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF ? 0 : -EIO;

		if (rc)
			cpi2_log(CPI2_LOG_WARN, "kafka", "consumer: %s",
				 rd_kafka_message_errstr(m));
		rd_kafka_message_destroy(m);
		return rc;
	}
	c->last = m;
	msg->topic = rd_kafka_topic_name(m->rkt);
	msg->partition = m->partition;
	msg->offset = m->offset;
	msg->key = m->key;
	msg->keylen = m->key_len;
	msg->payload = m->payload;
	msg->len = m->len;
	msg->timestamp_ms = rd_kafka_message_timestamp(m, &tstype);
	return 1;
}

int cpi2_consumer_commit(struct cpi2_consumer *c)
{
	if (!c->last)
		return 0;
	/* Stored here, committed within a second (and at close): a crash replays at most the
	 * messages after the last commit that reached the broker (at least once). */
	return rd_kafka_offset_store(c->last->rkt, c->last->partition, c->last->offset) ? -EIO : 0;
}

void cpi2_consumer_close(struct cpi2_consumer *c)
{
	if (!c)
		return;
	if (c->last)
		rd_kafka_message_destroy(c->last);
	rd_kafka_consumer_close(c->rk);
	rd_kafka_destroy(c->rk);
	free(c);
}

int cpi2_dead_letter(struct cpi2_producer *p, const char *component, const struct cpi2_message *m,
		     const char *reason)
{
	char err[256];
	avro_value_t *v;
	struct timeval tv;
	size_t len, cap = m->len + strlen(reason) + strlen(component) + strlen(m->topic) + 128;
	size_t ok = cpi2_utf8_prefix(reason, strlen(reason));
	char *buf, *cut = NULL;
	int rc = 0;

	if (reason[ok] && (cut = strndup(reason, ok)) != NULL)
		reason = cut; /* a reason cut inside a character (from a hostile message): its
			       * UTF-8 part, so the dead letter is still written */

	if (!p->dead_letters &&
	    (rc = cpi2_codec_open(&p->dead_letters, "DeadLetter", err, sizeof(err)))) {
		cpi2_log(CPI2_LOG_ERR, "kafka", "dead letter: %s", err);
		return rc;
	}
	v = cpi2_codec_value(p->dead_letters);
	avro_value_reset(v);
	gettimeofday(&tv, NULL);
	rc |= cpi2_value_set_long(v, "at_us", (int64_t)tv.tv_sec * 1000000 + tv.tv_usec);
	rc |= cpi2_value_set_string(v, "component", component);
	rc |= cpi2_value_set_string(v, "source_topic", m->topic);
	rc |= cpi2_value_set_int(v, "partition", m->partition);
	rc |= cpi2_value_set_long(v, "offset", m->offset);
	rc |= cpi2_value_set_string(v, "reason", reason);
	rc |= cpi2_value_set_bytes(v, "payload", m->payload ? m->payload : "", m->len);
	free(cut);
	buf = malloc(cap);
	if (rc || !buf || cpi2_codec_encode(p->dead_letters, v, buf, cap, &len)) {
		free(buf);
		return -EINVAL;
	}
	rc = cpi2_producer_send(p, CPI2_TOPIC_DEAD_LETTER, m->key, m->keylen, buf, len);
	free(buf);
	return rc;
}
