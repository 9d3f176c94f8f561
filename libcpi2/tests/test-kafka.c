/* test-kafka: against the local stack's real Kafka, a dead letter sent with cpi2_dead_letter
 * is delivered (delivery report counted and passed to the cpi2_producer_on_delivery callback
 * with its key) and read back by a consumer, decodable as DeadLetter
 * with the same reason and payload. Starts the stack (make up) when Kafka does not answer. */
#include <cpi2/config.h>
#include <cpi2/kafka.h>
#include <cpi2/wire.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

/* The stack's address, from the environment make exports (stack/stack.env), else the defaults. */
static const char *env_or(const char *name, const char *fallback)
{
	const char *v = getenv(name);

	return v && *v ? v : fallback;
}

static bool kafka_answers(const char *host, int port)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	bool ok;

	inet_pton(AF_INET, host, &a.sin_addr);
	ok = fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
	if (fd >= 0)
		close(fd);
	return ok;
}

/* What the delivery reports told the callback. */
struct reports {
	int acked, failed, wrong_key;
};

static void on_report(void *arg, const void *key, size_t keylen, const void *val, size_t vallen,
		      int err)
{
	struct reports *r = arg;

	if (keylen != 4 || memcmp(key, "host", 4) || !val || vallen == 0)
		r->wrong_key++;
	if (err)
		r->failed++;
	else
		r->acked++;
}

int main(void)
{
	const char *host = env_or("STACK_HOST", "127.0.0.1"),
		   *topics[] = {"cpi2.dead-letter", NULL};
	int port = atoi(env_or("KAFKA_PORT", "9092"));
	char brokers[128], client[1024];
	/* as admin (the stack's client file, when it has one): the test reads dead letters back */
	const char *props[CPI2_CONFIG_MAX_PROPS], *cprops[CPI2_CONFIG_MAX_PROPS];
	int nprops = 0;
	struct cpi2_producer *p;
	struct cpi2_consumer *c;
	struct cpi2_producer_stats st;
	struct reports reports = {0};
	struct cpi2_codec *codec;
	struct cpi2_message in = {.topic = "cpi2.samples",
				  .partition = 3,
				  .offset = 42,
				  .key = "host",
				  .keylen = 4,
				  .payload = "\x01\x02junk",
				  .len = 6};
	struct cpi2_message m;
	char err[256], reason[96], group[64];
	bool found = false;
	time_t until;
	int32_t done_partition = -1;
	int64_t done_offset = -1, resumed;

	snprintf(brokers, sizeof(brokers), "%s:%d", host, port);
	if (!kafka_answers(host, port) &&
	    system("make -s -C " CPI2_SOURCE_DIR " up >/dev/null") != 0) {
		fprintf(stderr, "test-kafka: Kafka at %s does not answer and make up failed\n",
			brokers);
		return 1;
	}
	snprintf(client, sizeof(client), "%s/secrets/kafka-admin.properties",
		 env_or("STACK_DIR", CPI2_SOURCE_DIR "/.stack"));
	if (access(client, F_OK) == 0)
		CHECK(cpi2_kafka_client_file(client, props, CPI2_CONFIG_MAX_PROPS - 2, &nprops, err,
					     sizeof(err)) == 0);
	for (int i = 0; i < nprops; i++)
		cprops[i] = props[i];
	props[nprops] = NULL;
	cprops[nprops] = "auto.offset.reset=earliest";
	cprops[nprops + 1] = NULL;
	snprintf(reason, sizeof(reason), "test-kafka %ld.%d", (long)time(NULL), (int)getpid());
	snprintf(group, sizeof(group), "test-kafka-%d-%ld", (int)getpid(), (long)time(NULL));

	CHECK(cpi2_producer_new(&p, brokers, props, err, sizeof(err)) == 0);
	cpi2_producer_on_delivery(p, on_report, &reports);
	CHECK(cpi2_dead_letter(p, "test-kafka", &in, reason) == 0);
	for (until = time(NULL) + 15; time(NULL) < until; usleep(10000)) {
		cpi2_producer_poll(p);
		cpi2_producer_get_stats(p, &st);
		if (st.delivered == 1)
			break;
	}
	CHECK(st.sent == 1 && st.delivered == 1 && st.failed == 0);
	/* flush serves the delivery reports: the counters are final after it. The reason is cut
	 * inside a character (as a hostile name in a reason buffer may be): its UTF-8 part goes. */
	CHECK(cpi2_dead_letter(p, "test-kafka", &in, "flushed \xc3") == 0);
	CHECK(cpi2_producer_flush(p, 15000) == 0);
	cpi2_producer_get_stats(p, &st);
	CHECK(st.sent == 2 && st.delivered == 2 && st.failed == 0);
	/* the callback saw both acknowledgements, each with the message's key */
	CHECK(reports.acked == 2 && reports.failed == 0 && reports.wrong_key == 0);
	CHECK(cpi2_producer_close(p, 5000) == 0);

	CHECK(cpi2_codec_open(&codec, "DeadLetter", err, sizeof(err)) == 0);
	CHECK(cpi2_consumer_new(&c, brokers, group, topics, cprops, err, sizeof(err)) == 0);
	for (until = time(NULL) + 60; !found && time(NULL) < until;) {
		avro_value_t *v;
		const char *s;
		bool is_null;
		int64_t off;

		if (cpi2_consumer_poll(c, 500, &m) != 1)
			continue;
		if (cpi2_codec_decode(codec, m.payload, m.len, &v, err, sizeof(err)) != 0)
			continue;
		if (cpi2_value_get_string(v, "reason", &s, &is_null) != 0 || is_null ||
		    strcmp(s, reason))
			continue;
		found = true;
		CHECK(cpi2_value_get_string(v, "component", &s, &is_null) == 0 &&
		      !strcmp(s, "test-kafka"));
		CHECK(cpi2_value_get_string(v, "source_topic", &s, &is_null) == 0 &&
		      !strcmp(s, "cpi2.samples"));
		CHECK(cpi2_value_get_long(v, "offset", &off, &is_null) == 0 && off == 42);
		CHECK(m.keylen == 4 && memcmp(m.key, "host", 4) == 0);
		CHECK(cpi2_consumer_commit(c) == 0);
		done_partition = m.partition;
		done_offset = m.offset;
	}
	CHECK(found);
	cpi2_consumer_close(c);

	/* The group resumes after the message marked done: close committed its offset. The
	 * "flushed" letter came after it on the same partition (same key). */
	CHECK(cpi2_consumer_new(&c, brokers, group, topics, cprops, err, sizeof(err)) == 0);
	for (resumed = -1, until = time(NULL) + 60; resumed < 0 && time(NULL) < until;) {
		if (cpi2_consumer_poll(c, 500, &m) == 1 && m.partition == done_partition)
			resumed = m.offset;
	}
	CHECK(resumed > done_offset);
	cpi2_consumer_close(c);
	cpi2_codec_close(codec);
	printf("test-kafka: dead letter delivered and read back\n");
	return 0;
}
