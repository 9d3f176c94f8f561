/* cpi2-lab-load: the lab's open-loop load generator for real servers. Each target (a redis or an
 * HTTP server) gets requests at scheduled times (Poisson or fixed gaps at --rate), sent whether
 * or not the earlier ones were answered (pipelined on a few keep-alive connections): a server
 * slowed by interference builds a queue, and the queue shows as latency, as its users would see
 * it (a closed-loop client waits for each answer and hides it). A request's latency runs from
 * when it was due, not from when it was sent, so a late send is counted too. One thread, one
 * epoll loop, nothing blocking after the start. */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cpi2/clock.h>
#include <cpi2/log.h>
#include <cpi2/signals.h>
#include <cpi2/stats.h>

#include "common.h"
#include "load_conf.h"
#include "reply.h"
#include "report.h"

#define MODULE "load"
#define MAX_KEPT (1u << 26)	   /* latencies kept in memory for the percentiles */
#define MAX_OUTSTANDING (1u << 20) /* unanswered requests per connection */
#define RECONNECT_NS 100000000LL   /* a refused connection is tried again after this */
#define READ_CHUNK 65536

struct pending {
	int64_t due, sent; /* ns, monotonic */
};

struct conn {
	int fd; /* -1: down */
	int target;
	bool connecting;  /* waiting for EPOLLOUT to say connected */
	bool want_out;	  /* polled for EPOLLOUT: the socket's buffer was full */
	bool closing;	  /* the server said it closes after an answer */
	int64_t retry_at; /* down: when to connect again */
	char *out;	  /* requests not yet written */
	size_t out_len, out_off, out_cap;
	char *in; /* bytes of answers not yet taken */
	size_t in_len, in_cap;
	struct pending *q; /* unanswered requests, oldest first (a ring) */
	size_t q_head, q_n, q_cap;
};

struct series {
	uint64_t *v;
	size_t n, cap;
};

struct target {
	int64_t next; /* ns: when its next request is due */
	uint64_t rng;
	struct conn *conns;
	int rr;
	uint64_t due, answered, errors, refused, reconnects, unanswered;
	struct series lat, lag;
};

static struct load_conf conf;
static struct target targets[LOAD_MAX_TARGETS];
static struct series all_lat;
static uint64_t not_kept;
static FILE *out;
static int64_t t0, t0_unix_us; /* the start: monotonic ns, and the wall clock then */
static int ep;

static void series_add(struct series *s, uint64_t v)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 4096;
		uint64_t *nv;

		if (cap > MAX_KEPT || !(nv = realloc(s->v, cap * sizeof(*nv)))) {
			not_kept++;
			return;
		}
		s->v = nv;
		s->cap = cap;
	}
	s->v[s->n++] = v;
}

/* xorshift64*: the arrivals' and keys' randomness, reproducible from --seed */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static int64_t gap_ns(struct target *t)
{
	double mean = 1e9 / conf.rate;

	if (!conf.poisson)
		return (int64_t)mean;
	/* uniform in (0, 1]: an exponential gap */
	double u = ((double)(rnd(&t->rng) >> 11) + 1.0) / 9007199254740992.0;

	return (int64_t)(-log(u) * mean);
}

static int grow(char **buf, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t c = *cap ? *cap : 4096;

	while (c < need)
		c *= 2;
	char *b = realloc(*buf, c);

	if (!b)
		return -ENOMEM;
	*buf = b;
	*cap = c;
	return 0;
}

/* Append the bytes of one request for target ti to c's output. */
static int request(struct conn *c, struct target *t)
{
	char req[1200];
	int n;

	if (conf.proto == LOAD_REDIS) {
		char key[32];
		int kn = snprintf(key, sizeof(key), "cpi2:lab:%08llu",
				  (unsigned long long)(rnd(&t->rng) % (uint64_t)conf.keys));

		n = snprintf(req, sizeof(req), "*2\r\n$3\r\nGET\r\n$%d\r\n%s\r\n", kn, key);
	} else {
		n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", conf.path,
			     conf.host[c->target]);
	}
	if (n < 0 || (size_t)n >= sizeof(req) || grow(&c->out, &c->out_cap, c->out_len + (size_t)n))
		return -ENOMEM;
	memcpy(c->out + c->out_len, req, (size_t)n);
	c->out_len += (size_t)n;
	return 0;
}

static int push(struct conn *c, int64_t due, int64_t sent)
{
	if (c->q_n == c->q_cap) {
		size_t cap = c->q_cap ? 2 * c->q_cap : 256;
		struct pending *q;

		if (c->q_n >= MAX_OUTSTANDING || !(q = malloc(cap * sizeof(*q))))
			return -ENOMEM;
		for (size_t i = 0; i < c->q_n; i++)
			q[i] = c->q[(c->q_head + i) % c->q_cap];
		free(c->q);
		c->q = q;
		c->q_cap = cap;
		c->q_head = 0;
	}
	c->q[(c->q_head + c->q_n++) % c->q_cap] = (struct pending){due, sent};
	return 0;
}

/* how a request ended */
enum outcome { ANSWERED, FAILED, UNANSWERED };

static void record(int ti, int64_t due, int64_t sent, int64_t done, enum outcome how)
{
	struct target *t = &targets[ti];
	uint64_t lat = (uint64_t)(done - due), lag = sent > due ? (uint64_t)(sent - due) : 0;

	if (how == ANSWERED) {
		t->answered++;
		series_add(&t->lat, lat);
		series_add(&t->lag, lag);
		series_add(&all_lat, lat);
	} else if (how == FAILED) {
		t->errors++;
	} else {
		t->unanswered++;
	}
	if (out)
		fprintf(out, "%d,%lld,%lld,%lld,%d\n", ti, (long long)((due - t0) / 1000),
			(long long)(lat / 1000), (long long)(lag / 1000), how == ANSWERED);
}

static int conn_open(struct conn *c, int64_t now)
{
	struct sockaddr_in sa = {.sin_family = AF_INET,
				 .sin_port = htons((uint16_t)conf.port[c->target])};
	int one = 1;

	if (inet_pton(AF_INET, conf.host[c->target], &sa.sin_addr) != 1)
		return -EINVAL;
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -errno;
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) && errno != EINPROGRESS) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		c->retry_at = now + RECONNECT_NS;
		return -e;
	}
	c->connecting = true;
	c->closing = false;
	c->want_out = true;
	struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP, .data.ptr = c};

	if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev)) {
		int e = errno;

		close(c->fd);
		c->fd = -1;
		return -e;
	}
	return 0;
}

static void poll_out(struct conn *c, bool want)
{
	struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0),
				 .data.ptr = c};

	if (c->want_out != want && !epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev))
		c->want_out = want;
}

/* Every unanswered request of c, ended at now as how says. */
static void end_all(struct conn *c, int64_t now, enum outcome how)
{
	while (c->q_n) {
		struct pending p = c->q[c->q_head];

		c->q_head = (c->q_head + 1) % c->q_cap;
		c->q_n--;
		record(c->target, p.due, p.sent, now, how);
	}
}

/* The connection is gone (closed by the server, reset): its unanswered requests are sent again
 * on a new one, still counted from when they were due. A connection that never came up (the
 * server refused it) fails what it held, and is tried again after RECONNECT_NS. */
static void conn_lost(struct conn *c, int64_t now, const char *why)
{
	struct target *t = &targets[c->target];
	bool was_up = !c->connecting;

	cpi2_log(was_up ? CPI2_LOG_DEBUG : CPI2_LOG_WARN, MODULE,
		 "%s:%d: connection %s (%s), %zu unanswered", conf.host[c->target],
		 conf.port[c->target], was_up ? "lost" : "refused", why, c->q_n);
	epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	c->fd = -1;
	c->connecting = false;
	c->in_len = c->out_len = c->out_off = 0;
	t->reconnects++;
	if (!was_up || conn_open(c, now)) {
		end_all(c, now, FAILED);
		c->retry_at = now + RECONNECT_NS;
		return;
	}
	for (size_t i = 0; i < c->q_n; i++)
		if (request(c, t))
			break;
}

static void conn_flush(struct conn *c, int64_t now)
{
	while (c->fd >= 0 && !c->connecting && c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN)
				poll_out(c, true);
			if (errno == EAGAIN || errno == EINTR)
				return;
			conn_lost(c, now, strerror(errno));
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->fd >= 0 && !c->connecting && c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		poll_out(c, false);
	}
}

static void conn_read(struct conn *c, int64_t now)
{
	for (;;) {
		if (grow(&c->in, &c->in_cap, c->in_len + READ_CHUNK)) {
			conn_lost(c, now, "out of memory");
			return;
		}
		ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			break;
		if (n <= 0) {
			conn_lost(c, now, n ? strerror(errno) : "closed by the server");
			return;
		}
		c->in_len += (size_t)n;
	}
	size_t at = 0;

	while (at < c->in_len) {
		bool error = false, close_after = false;
		long n = conf.proto == LOAD_REDIS
			     ? reply_redis(c->in + at, c->in_len - at, &error)
			     : reply_http(c->in + at, c->in_len - at, &error, &close_after);

		if (n == 0)
			break;
		if (n < 0 || !c->q_n) {
			cpi2_log(CPI2_LOG_WARN, MODULE, "%s:%d: %s; the connection is dropped",
				 conf.host[c->target], conf.port[c->target],
				 n < 0 ? "an answer that is not the protocol's"
				       : "an answer to no request");
			conn_lost(c, now, "bad answer");
			return;
		}
		struct pending p = c->q[c->q_head];

		c->q_head = (c->q_head + 1) % c->q_cap;
		c->q_n--;
		record(c->target, p.due, p.sent, now, error ? FAILED : ANSWERED);
		at += (size_t)n;
		if (close_after) {
			c->closing = true;
			break;
		}
	}
	memmove(c->in, c->in + at, c->in_len - at);
	c->in_len -= at;
	if (c->closing)
		conn_lost(c, now, "Connection: close");
}

/* One request of target t, due at due: to its next connection that is up. */
static void issue(struct target *t, int ti, int64_t due, int64_t now)
{
	t->due++;
	for (int k = 0; k < conf.connections; k++) {
		struct conn *c = &t->conns[(t->rr + k) % conf.connections];

		if (c->fd < 0 && now >= c->retry_at && conn_open(c, now))
			continue;
		if (c->fd < 0)
			continue;
		size_t len = c->out_len;

		t->rr = (t->rr + k + 1) % (int)conf.connections;
		if (request(c, t))
			break;
		if (push(c, due, now)) {
			c->out_len = len;
			break;
		}
		return;
	}
	t->refused++;
	record(ti, due, now, now, FAILED);
}

/* SET every key on every target before the first request, blocking: the GETs find values. */
static int preload(char *err, size_t errsz)
{
	char *val = malloc((size_t)conf.value_bytes + 1);

	if (!val)
		return -ENOMEM;
	memset(val, 'v', (size_t)conf.value_bytes);
	for (int ti = 0; ti < conf.ntargets; ti++) {
		struct sockaddr_in sa = {.sin_family = AF_INET,
					 .sin_port = htons((uint16_t)conf.port[ti])};
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		char *buf = NULL, *in = NULL;
		size_t cap = 0, len = 0, in_cap = 0, in_len = 0;
		long answers = 0, errors = 0;

		inet_pton(AF_INET, conf.host[ti], &sa.sin_addr);
		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			snprintf(err, errsz, "%s:%d: connect: %s", conf.host[ti], conf.port[ti],
				 strerror(errno));
			free(val);
			return -EIO;
		}
		for (long k = 0; k < conf.keys; k++) {
			char head[128];
			int n = snprintf(head, sizeof(head),
					 "*3\r\n$3\r\nSET\r\n$17\r\ncpi2:lab:%08ld\r\n$%ld\r\n", k,
					 conf.value_bytes);

			if (grow(&buf, &cap, len + (size_t)n + (size_t)conf.value_bytes + 2))
				break;
			memcpy(buf + len, head, (size_t)n);
			memcpy(buf + len + n, val, (size_t)conf.value_bytes);
			memcpy(buf + len + n + conf.value_bytes, "\r\n", 2);
			len += (size_t)n + (size_t)conf.value_bytes + 2;
		}
		for (size_t off = 0; off < len;) {
			ssize_t n = send(fd, buf + off, len - off, MSG_NOSIGNAL);

			if (n <= 0)
				break;
			off += (size_t)n;
			/* read as it goes: the server's answers must not fill its send buffer */
			while (!grow(&in, &in_cap, in_len + READ_CHUNK)) {
				ssize_t r = recv(fd, in + in_len, in_cap - in_len, MSG_DONTWAIT);

				if (r <= 0)
					break;
				in_len += (size_t)r;
			}
		}
		for (size_t at = 0; answers < conf.keys;) {
			bool e = false;
			long n = reply_redis(in + at, in_len - at, &e);

			if (n > 0) {
				answers++;
				errors += e;
				at += (size_t)n;
				continue;
			}
			if (n < 0 || grow(&in, &in_cap, in_len + READ_CHUNK))
				break;
			ssize_t r = recv(fd, in + in_len, in_cap - in_len, 0);

			if (r <= 0)
				break;
			in_len += (size_t)r;
		}
		close(fd);
		free(buf);
		free(in);
		if (answers < conf.keys || errors) {
			snprintf(err, errsz, "%s:%d: SET of %ld keys: %ld answers, %ld errors",
				 conf.host[ti], conf.port[ti], conf.keys, answers, errors);
			free(val);
			return -EIO;
		}
	}
	free(val);
	return 0;
}

static void report(double run_s, double cpu_s, const char *stopped_by)
{
	struct ibench_report r;
	uint64_t due = 0, answered = 0, errors = 0, refused = 0, unanswered = 0, reconnects = 0;
	char key[64];

	for (int i = 0; i < conf.ntargets; i++) {
		due += targets[i].due;
		answered += targets[i].answered;
		errors += targets[i].errors;
		refused += targets[i].refused;
		unanswered += targets[i].unanswered;
		reconnects += targets[i].reconnects;
	}
	ibench_report_begin(&r, stdout, !strcmp(conf.report, "json"));
	ibench_report_str(&r, "program", "cpi2-lab-load");
	ibench_report_str(&r, "protocol", conf.protocol);
	ibench_report_int(&r, "targets", conf.ntargets);
	ibench_report_num(&r, "rate_hz", conf.rate);
	ibench_report_str(&r, "arrivals", conf.arrivals);
	ibench_report_int(&r, "start_unix_us", (long long)t0_unix_us);
	ibench_report_u64(&r, "requests", due);
	ibench_report_u64(&r, "answered", answered);
	ibench_report_u64(&r, "errors", errors);
	ibench_report_u64(&r, "refused", refused);
	ibench_report_u64(&r, "unanswered", unanswered);
	ibench_report_u64(&r, "reconnects", reconnects);
	ibench_report_num(&r, "achieved_rate_hz", run_s > 0 ? (double)answered / run_s : 0);
	ibench_report_num(&r, "p50_us", cpi2_percentile_u64(all_lat.v, all_lat.n, 50) / 1e3);
	ibench_report_num(&r, "p90_us", cpi2_percentile_u64(all_lat.v, all_lat.n, 90) / 1e3);
	ibench_report_num(&r, "p99_us", cpi2_percentile_u64(all_lat.v, all_lat.n, 99) / 1e3);
	ibench_report_num(&r, "p999_us", cpi2_percentile_u64(all_lat.v, all_lat.n, 99.9) / 1e3);
	ibench_report_num(&r, "max_us", all_lat.n ? all_lat.v[all_lat.n - 1] / 1e3 : 0);
	for (int i = 0; i < conf.ntargets; i++) {
		struct target *t = &targets[i];

		snprintf(key, sizeof(key), "t%d_p99_us", i);
		ibench_report_num(&r, key, cpi2_percentile_u64(t->lat.v, t->lat.n, 99) / 1e3);
		snprintf(key, sizeof(key), "t%d_lag_p99_us", i);
		ibench_report_num(&r, key, cpi2_percentile_u64(t->lag.v, t->lag.n, 99) / 1e3);
	}
	ibench_report_u64(&r, "not_kept", not_kept);
	ibench_report_num(&r, "run_s", run_s);
	ibench_report_num(&r, "cpu_s", cpu_s);
	ibench_report_str(&r, "out", conf.out);
	ibench_report_str(&r, "stopped_by", stopped_by);
	ibench_report_end(&r);
}

int main(int argc, char **argv)
{
	char err[1024];
	int rc;

	rc = load_conf_parse(&conf, argc, argv, err, sizeof(err));
	if (rc == 1)
		return 0;
	if (rc) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 2;
	}
	for (int i = 0; i < conf.ntargets; i++) {
		struct in_addr a;

		if (inet_pton(AF_INET, conf.host[i], &a) != 1) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "targets: '%s' is not an IPv4 address",
				 conf.host[i]);
			return 2;
		}
	}
	if (lab_pin(MODULE, conf.cpu))
		return 2;
	if (conf.rt_priority > 0) {
		struct sched_param sp = {.sched_priority = (int)conf.rt_priority};

		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "SCHED_FIFO at priority %ld: %s",
				 conf.rt_priority, strerror(errno));
			return 2;
		}
	}
	if (conf.proto == LOAD_REDIS && preload(err, sizeof(err))) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "%s", err);
		return 1;
	}
	if (conf.out[0]) {
		if (!(out = fopen(conf.out, "we"))) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "open %s: %s", conf.out, strerror(errno));
			return 2;
		}
		fputs("target,sched_us,latency_us,lag_us,ok\n", out);
	}
	if ((rc = cpi2_signal_install())) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "signal handlers: %s", strerror(-rc));
		return 1;
	}
	if ((ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "epoll: %s", strerror(errno));
		return 1;
	}
	t0 = cpi2_clock_ns(CLOCK_MONOTONIC);
	t0_unix_us = cpi2_clock_us(CLOCK_REALTIME);
	for (int i = 0; i < conf.ntargets; i++) {
		struct target *t = &targets[i];

		t->rng = (uint64_t)conf.seed * 0x9E3779B97F4A7C15ULL + (uint64_t)i + 1;
		if (!(t->conns = calloc((size_t)conf.connections, sizeof(*t->conns)))) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "out of memory");
			return 1;
		}
		for (int k = 0; k < conf.connections; k++) {
			t->conns[k].target = i;
			if ((rc = conn_open(&t->conns[k], t0))) {
				cpi2_log(CPI2_LOG_ERR, MODULE, "%s:%d: connect: %s", conf.host[i],
					 conf.port[i], strerror(-rc));
				return 1;
			}
		}
		t->next = t0 + gap_ns(t);
	}
	int64_t end = conf.duration_s > 0 ? t0 + (int64_t)(conf.duration_s * 1e9) : INT64_MAX;
	int64_t stop_at = 0;
	const char *stopped_by = "duration";
	struct epoll_event evs[64];

	for (;;) {
		int64_t now = cpi2_clock_ns(CLOCK_MONOTONIC), wake = INT64_MAX;
		size_t outstanding = 0;

		if (!stop_at && (now >= end || cpi2_signal_stop)) {
			stop_at = now;
			stopped_by = cpi2_signal_stop ? "signal" : "duration";
		}
		for (int i = 0; i < conf.ntargets; i++) {
			struct target *t = &targets[i];

			while (!stop_at && t->next <= now) {
				issue(t, i, t->next, now);
				t->next += gap_ns(t);
			}
			if (!stop_at && t->next < wake)
				wake = t->next;
			for (int k = 0; k < conf.connections; k++) {
				conn_flush(&t->conns[k], now);
				outstanding += t->conns[k].q_n;
			}
		}
		if (stop_at && (!outstanding || now - stop_at >= (int64_t)(conf.drain_s * 1e9)))
			break;
		if (stop_at)
			wake = stop_at + (int64_t)(conf.drain_s * 1e9);
		int64_t wait = wake > now ? wake - now : 0;
		struct timespec ts = {wait / 1000000000, wait % 1000000000};
		int n = epoll_pwait2(ep, evs, 64, wake == INT64_MAX ? NULL : &ts, NULL);

		if (n < 0 && errno != EINTR) {
			cpi2_log(CPI2_LOG_ERR, MODULE, "epoll_pwait2: %s", strerror(errno));
			return 1;
		}
		now = cpi2_clock_ns(CLOCK_MONOTONIC);
		for (int e = 0; e < n; e++) {
			struct conn *c = evs[e].data.ptr;

			if (c->fd < 0)
				continue;
			if (c->connecting && (evs[e].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
				int soerr = 0;
				socklen_t sl = sizeof(soerr);

				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &soerr, &sl);
				if (soerr) {
					conn_lost(c, now, strerror(soerr));
					continue;
				}
				c->connecting = false;
			}
			if (evs[e].events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP))
				conn_read(c, now);
			if (c->fd >= 0 && (evs[e].events & EPOLLOUT))
				conn_flush(c, now);
		}
	}
	int64_t done = cpi2_clock_ns(CLOCK_MONOTONIC);
	double run_s = (double)(done - t0) / 1e9;

	for (int i = 0; i < conf.ntargets; i++)
		for (int k = 0; k < conf.connections; k++) {
			struct conn *c = &targets[i].conns[k];

			/* no answer by the end of the drain: in the file, not ok */
			end_all(c, done, UNANSWERED);
			if (c->fd >= 0)
				close(c->fd);
			free(c->out);
			free(c->in);
			free(c->q);
		}
	if (out && fclose(out)) {
		cpi2_log(CPI2_LOG_ERR, MODULE, "write %s: %s", conf.out, strerror(errno));
		rc = 1;
	}
	report(run_s, lab_cpu_seconds(), stopped_by);
	for (int i = 0; i < conf.ntargets; i++) {
		free(targets[i].conns);
		free(targets[i].lat.v);
		free(targets[i].lag.v);
	}
	free(all_lat.v);
	return rc;
}
