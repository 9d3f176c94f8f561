/* scrape, svcsignal: a task's metrics endpoint settings (URLs, selectors, quantiles), HTTP
 * answers (lengths, chunks, statuses, types, encodings, cut short, too large), the values of two
 * scrapes (the real exporters' answers in libcpi2/tests/data/promtext, and tables: counters
 * that restart, do not move or are missing, histogram quantiles as PromQL computes them, summary
 * quantiles), and scrapes over real sockets against a server thread that answers well, in
 * chunks, slowly, too much or not at all: each ends by its deadline, the loop never waits
 * longer. */
#include "scrape.h"
#include "svcsignal.h"

#include <cpi2/clock.h>

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void conf_cases(void)
{
	static const struct {
		const char *url, *work, *latency, *q, *host, *path;
	} ok[] = {
	    {"http://127.0.0.1:9121/metrics", "redis_commands_processed_total", NULL, NULL,
	     "127.0.0.1:9121", "/metrics"},
	    {"http://10.0.0.5", "x", NULL, NULL, "10.0.0.5:80", "/metrics"},
	    {"http://10.0.0.5:8080", NULL, "h", "0.99", "10.0.0.5:8080", "/metrics"},
	    {"http://[::1]:9113/stats?format=prom", "nginx_http_requests_total", NULL, NULL,
	     "[::1]:9113", "/stats?format=prom"},
	    {"http://127.0.0.1:1/", "a{b=~\"c|d\"}", "s{cmd=\"get\"}", "1", "127.0.0.1:1", "/"},
	    /* as cpi2-k8s-identity writes a selector with blanks, '#' and a quote in a value */
	    {"http://10.0.0.1:9121/metrics", "reqs_total{path=\"/a \\\"b\\\" #c\",code=~\"2..\"}",
	     NULL, NULL, "10.0.0.1:9121", "/metrics"},
	};
	static const struct {
		const char *url, *work, *latency, *q, *why;
	} bad[] = {
	    {"https://127.0.0.1/metrics", "x", NULL, NULL, "only http"},
	    {"http://redis.local:9121/metrics", "x", NULL, NULL, "not an IPv4 address"},
	    {"http://[fe80::zz]:1/", "x", NULL, NULL, "not an IPv6 address"},
	    {"http://[::1:1/", "x", NULL, NULL, "without ']'"},
	    {"http://127.0.0.1:0/", "x", NULL, NULL, "port"},
	    {"http://127.0.0.1:65536/", "x", NULL, NULL, "port"},
	    {"http://127.0.0.1:-1/", "x", NULL, NULL, "port"},
	    {"http://127.0.0.1:80x/", "x", NULL, NULL, "port"},
	    {"http://127.0.0.1?a", "x", NULL, NULL, "'/' expected"},
	    {"http://127.0.0.1/a b", "x", NULL, NULL, "blank"},
	    {"http://127.0.0.1/a\r\nHost: evil", "x", NULL, NULL, "control"},
	    {"http://127.0.0.1/a#frag", "x", NULL, NULL, "'#'"},
	    {"http://127.0.0.1/", NULL, NULL, NULL, "work= or latency="},
	    {"http://127.0.0.1/", "x{", NULL, NULL, "work: selector"},
	    {"http://127.0.0.1/", NULL, "x{a=~\"(\"}", NULL, "latency: selector"},
	    {"http://127.0.0.1/", NULL, "x", "1.5", "latency_quantile"},
	    {"http://127.0.0.1/", NULL, "x", "NaN", "latency_quantile"},
	    {"http://127.0.0.1/", "x", NULL, "0.5", "latency_quantile"},
	};
	struct svc_conf c;
	char err[512];

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		CHECK(svc_conf_parse(&c, ok[i].url, ok[i].work, ok[i].latency, ok[i].q, err,
				     sizeof(err)) == 0,
		      "%s: %s", ok[i].url, err);
		CHECK(!strcmp(c.host, ok[i].host) && !strcmp(c.path, ok[i].path), "%s: %s %s",
		      ok[i].url, c.host, c.path);
		CHECK(c.has_work == !!ok[i].work && c.has_latency == !!ok[i].latency);
		CHECK(ok[i].q ? c.quantile == atof(ok[i].q) : c.quantile < 0);
		svc_conf_free(&c);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(svc_conf_parse(&c, bad[i].url, bad[i].work, bad[i].latency, bad[i].q, err,
				     sizeof(err)) == -EINVAL,
		      "%s parsed", bad[i].url);
		CHECK(strstr(err, bad[i].why), "%s: '%s', want '%s'", bad[i].url, err, bad[i].why);
		CHECK(!c.has_work && !c.has_latency);
	}
}

static void http_cases(void)
{
	static const struct {
		const char *in;
		bool eof;
		enum http_parse want;
		const char *body_or_why;
	} cases[] = {
	    {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\nContent-Type: text/plain; version=0.0.4; "
	     "charset=utf-8\r\n\r\na 1\n",
	     false, HTTP_DONE, "a 1\n"},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\na 1", false, HTTP_MORE, ""},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\na 1", true, HTTP_ERROR, "cut short"},
	    {"HTTP/1.1 200 OK\r\nContent-Len", false, HTTP_MORE, ""},
	    {"HTTP/1.1 200 OK\r\nContent-Len", true, HTTP_ERROR, "cut short"},
	    {"", true, HTTP_ERROR, "no answer"},
	    {"HTTP/1.0 200 OK\r\n\r\na 1\nb 2\n", false, HTTP_MORE, ""},
	    {"HTTP/1.0 200 OK\r\n\r\na 1\nb 2\n", true, HTTP_DONE, "a 1\nb 2\n"},
	    {"HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n4;x=y\r\na 1\n\r\n"
	     "4\r\nb 2\n\r\n0\r\nX-Trailer: 1\r\n\r\n",
	     false, HTTP_DONE, "a 1\nb 2\n"},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\na 1\n\r\n", false,
	     HTTP_MORE, ""},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\na 1\n\r\n", true,
	     HTTP_ERROR, "cut short"},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", false, HTTP_ERROR,
	     "chunk size"},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\na 1\nXX", false, HTTP_ERROR,
	     "CRLF"},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffff0\r\n", false,
	     HTTP_ERROR, "chunk size too large"},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n100001\r\n", false, HTTP_ERROR,
	     "larger than allowed"},
	    {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, HTTP_ERROR,
	     "transfer encoding"},
	    {"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\n", false, HTTP_ERROR,
	     "content encoding"},
	    {"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.google.protobuf\r\n\r\n", false,
	     HTTP_ERROR, "content type"},
	    {"HTTP/1.1 200 OK\r\nContent-Type: text/plainx\r\n\r\n", false, HTTP_ERROR,
	     "content type"},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", false,
	     HTTP_ERROR, "both"},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", false, HTTP_ERROR,
	     "two Content-Lengths"},
	    {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", false, HTTP_ERROR, "Content-Length"},
	    {"HTTP/1.1 200 OK\r\nContent-Length: 2000000\r\n\r\n", false, HTTP_ERROR,
	     "larger than allowed"},
	    {"HTTP/1.1 200 OK\r\n\r\n", false, HTTP_MORE, ""},
	    {"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", false, HTTP_ERROR,
	     "status 404"},
	    {"HTTP/1.1 301 Moved\r\nLocation: /x\r\n\r\n", false, HTTP_ERROR, "status 301"},
	    {"HTTP/1.1 2000 OK\r\n\r\n", false, HTTP_ERROR, "status"},
	    {"HTTP/2 200\r\n\r\n", false, HTTP_ERROR, "not an HTTP/1"},
	    {"SSH-2.0-OpenSSH\r\n\r\n", false, HTTP_ERROR, "not an HTTP/1"},
	    {"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n", false, HTTP_ERROR, "header"},
	    {"HTTP/1.1 200 OK\r\nnocolon\r\n\r\n", false, HTTP_ERROR, "header"},
	};
	char buf[256], detail[160], *body;
	size_t len;
	int reason;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum http_parse rc;

		strcpy(buf, cases[i].in);
		body = NULL;
		len = 0;
		rc = http_parse(buf, strlen(buf), cases[i].eof, 1 << 20, &body, &len, &reason,
				detail, sizeof(detail));
		CHECK(rc == cases[i].want, "case %zu: %d", i, rc);
		if (rc == HTTP_DONE)
			CHECK(len == strlen(cases[i].body_or_why) &&
				  !memcmp(body, cases[i].body_or_why, len),
			      "case %zu: '%.*s'", i, (int)len, body);
		if (rc == HTTP_ERROR)
			CHECK(strstr(detail, cases[i].body_or_why) &&
				  (reason == SVC_HTTP || reason == SVC_TOO_LARGE),
			      "case %zu: '%s'", i, detail);
	}
	/* a head that never ends */
	char *head = malloc(40000);

	memset(head, 'x', 39999);
	head[39999] = '\0';
	CHECK(http_parse(head, 39999, false, 1 << 20, &body, &len, &reason, detail,
			 sizeof(detail)) == HTTP_ERROR &&
	      strstr(detail, "head too long"));
	free(head);
}

static char *fixture(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), "%s/libcpi2/tests/data/promtext/%s", CPI2_SOURCE_DIR, name);
	CHECK((f = fopen(path, "rb")) != NULL, "%s", path);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

static void point(const struct svc_conf *c, const char *text, uint64_t cpu_ns, struct svc_point *p)
{
	char *copy = strdup(text), detail[256];

	svc_point_parse(c, copy, strlen(copy), p, detail, sizeof(detail));
	p->has_cpu = true;
	p->cpu_ns = cpu_ns;
	free(copy);
}

static void values_of_real_exporters(void)
{
	struct svc_conf c;
	struct svc_point a = {0}, b = {0};
	struct svc_values v;
	char err[512], *ta, *tb;
	size_t la, lb;

	/* redis_exporter 1.45: commands processed, and GET's mean from the LATENCYSTATS summary
	 * (microseconds) */
	CHECK(svc_conf_parse(&c, "http://127.0.0.1:9121/metrics", "redis_commands_processed_total",
			     "redis_latency_percentiles_usec{cmd=\"get\"}", NULL, err,
			     sizeof(err)) == 0);
	ta = fixture("redis-exporter-1.45-a.txt", &la);
	tb = fixture("redis-exporter-1.45-b.txt", &lb);
	point(&c, ta, 1000000000, &a);
	point(&c, tb, 1000000000 + 5014000, &b);
	CHECK(a.ok && b.ok);
	svc_compute(&c, &a, &b, &v);
	CHECK(v.has_cpu_per_op && fabs(v.cpu_per_op - 1e-6) < 1e-15, "%g", v.cpu_per_op);
	CHECK(v.has_latency && fabs(v.latency - 761.0 / 5000) < 1e-12, "%g", v.latency);
	/* no earlier scrape */
	svc_compute(&c, NULL, &b, &v);
	CHECK(!v.has_cpu_per_op && v.cpu_per_op_reason == SVC_NO_BASELINE &&
	      v.latency_reason == SVC_NO_BASELINE);
	/* the same scrape twice: no work */
	svc_compute(&c, &b, &b, &v);
	CHECK(v.cpu_per_op_reason == SVC_NO_WORK && v.latency_reason == SVC_NO_WORK);
	/* b before a: redis restarted */
	svc_compute(&c, &b, &a, &v);
	CHECK(v.cpu_per_op_reason == SVC_RESET && v.latency_reason == SVC_RESET);
	/* the summary's p99 as redis reports it (its quantile label is in percent) */
	svc_conf_free(&c);
	CHECK(svc_conf_parse(&c, "http://127.0.0.1:9121/metrics", NULL,
			     "redis_latency_percentiles_usec{cmd=\"config|get\"}", "1", err,
			     sizeof(err)) == 0);
	point(&c, tb, 0, &b);
	svc_compute(&c, NULL, &b, &v);
	CHECK(v.latency_reason == SVC_MISSING, "%d", v.latency_reason); /* no quantile="1" */
	svc_conf_free(&c);
	free(ta);
	free(tb);

	/* nginx exporter 0.11: requests */
	CHECK(svc_conf_parse(&c, "http://127.0.0.1:9113/metrics", "nginx_http_requests_total", NULL,
			     NULL, err, sizeof(err)) == 0);
	ta = fixture("nginx-exporter-0.11-a.txt", &la);
	tb = fixture("nginx-exporter-0.11-b.txt", &lb);
	point(&c, ta, 0, &a);
	point(&c, tb, 91175000, &b);
	svc_compute(&c, &a, &b, &v);
	CHECK(v.has_cpu_per_op && fabs(v.cpu_per_op - 1e-6) < 1e-15 && !v.has_latency &&
		  v.latency_reason == SVC_OK,
	      "%g", v.cpu_per_op);
	/* a gauge is no work counter */
	svc_conf_free(&c);
	CHECK(svc_conf_parse(&c, "http://127.0.0.1:9113/metrics", "nginx_connections_active", NULL,
			     NULL, err, sizeof(err)) == 0);
	point(&c, ta, 0, &a);
	point(&c, tb, 1, &b);
	svc_compute(&c, &a, &b, &v);
	CHECK(v.cpu_per_op_reason == SVC_MISSING);
	svc_conf_free(&c);
	free(ta);
	free(tb);

	/* Prometheus 2.42's own request histogram, mean and p50 of one handler */
	CHECK(svc_conf_parse(&c, "http://127.0.0.1:9090/metrics",
			     "prometheus_http_requests_total{handler=\"/metrics\"}",
			     "prometheus_http_request_duration_seconds{handler=\"/metrics\"}",
			     "0.5", err, sizeof(err)) == 0);
	ta = fixture("prometheus-2.42-a.txt", &la);
	tb = fixture("prometheus-2.42-b.txt", &lb);
	point(&c, ta, 0, &a);
	point(&c, tb, 1000, &b);
	CHECK(a.ok && b.ok && b.n > 10);
	svc_compute(&c, &a, &b, &v);
	CHECK(v.has_latency && v.latency > 0 && v.latency <= 0.1, "%g %d", v.latency,
	      v.latency_reason);
	CHECK(v.has_cpu_per_op, "%d", v.cpu_per_op_reason);
	svc_conf_free(&c);
	free(ta);
	free(tb);
	svc_point_free(&a);
	svc_point_free(&b);
}

static double latency_of(const char *work, const char *lat, const char *q, const char *ta,
			 const char *tb, int *reason)
{
	struct svc_conf c;
	struct svc_point a = {0}, b = {0};
	struct svc_values v;
	char err[512];

	CHECK(svc_conf_parse(&c, "http://127.0.0.1/", work, lat, q, err, sizeof(err)) == 0, "%s",
	      err);
	point(&c, ta, 0, &a);
	point(&c, tb, 1000000, &b);
	svc_compute(&c, ta[0] == '-' ? NULL : &a, &b, &v);
	*reason = lat ? v.latency_reason : v.cpu_per_op_reason;
	svc_conf_free(&c);
	svc_point_free(&a);
	svc_point_free(&b);
	return lat ? (v.has_latency ? v.latency : NAN) : (v.has_cpu_per_op ? v.cpu_per_op : NAN);
}

static void value_tables(void)
{
	static const struct {
		const char *work, *lat, *q, *a, *b;
		double want;
		int reason;
	} cases[] = {
	    /* work summed over the series selected, each series' own increase */
	    {"w", NULL, NULL, "w{x=\"1\"} 10\nw{x=\"2\"} 5\n", "w{x=\"2\"} 8\nw{x=\"1\"} 12\n",
	     1e-3 / 5, SVC_OK},
	    {"w{x=\"1\"}", NULL, NULL, "w{x=\"1\"} 10\nw{x=\"2\"} 5\n",
	     "w{x=\"1\"} 14\nw{x=\"2\"} 9\n", 1e-3 / 4, SVC_OK},
	    {"w{x=~\"1|2\"}", NULL, NULL, "w{x=\"1\"} 10\nw{x=\"3\"} 5\n",
	     "w{x=\"1\"} 14\nw{x=\"3\"} 9\nw{x=\"2\"} 100\n", 1e-3 / 4, SVC_OK}, /* new series */
	    {"w", NULL, NULL, "w{x=\"1\"} 10\n", "w{x=\"2\"} 12\n", NAN, SVC_NO_BASELINE},
	    {"w", NULL, NULL, "w 10\n", "w 9\n", NAN, SVC_RESET},
	    {"w", NULL, NULL, "w{x=\"1\"} 10\nw{x=\"2\"} 5\n", "w{x=\"1\"} 20\nw{x=\"2\"} 4\n", NAN,
	     SVC_RESET},
	    {"w", NULL, NULL, "w 10\n", "w 10\n", NAN, SVC_NO_WORK},
	    {"w", NULL, NULL, "w 10\n", "v 10\n", NAN, SVC_MISSING},
	    {"w", NULL, NULL, "w 10\n", "w +Inf\n", NAN, SVC_GARBAGE},
	    {"w", NULL, NULL, "w 10\n", "w 1\nw 2\n", NAN, SVC_GARBAGE}, /* twice */
	    {"w", NULL, NULL, "w 10\n", "w{\n", NAN, SVC_GARBAGE},
	    {"w", NULL, NULL, "-", "w 10\n", NAN, SVC_NO_BASELINE},
	    /* a histogram's _count is a work counter */
	    {"h_count", NULL, NULL, "# TYPE h histogram\nh_count 1\n",
	     "# TYPE h histogram\nh_count 3\n", 1e-3 / 2, SVC_OK},
	    /* the mean */
	    {NULL, "h", NULL, "h_sum 1\nh_count 10\n", "h_sum 3\nh_count 20\n", 0.2, SVC_OK},
	    {NULL, "h", NULL, "h_sum 1\nh_count 10\n", "h_sum 3\nh_count 10\n", NAN, SVC_NO_WORK},
	    {NULL, "h", NULL, "h_sum 1\nh_count 10\n", "h_sum 3\nh_count 5\n", NAN, SVC_RESET},
	    {NULL, "h", NULL, "h_sum 1\nh_count 10\n", "h_count 12\n", NAN, SVC_MISSING},
	    {NULL, "h{a=\"x\"}", NULL,
	     "h_sum{a=\"x\"} 1\nh_count{a=\"x\"} 1\nh_sum{a=\"y\"} 1\n"
	     "h_count{a=\"y\"} 1\n",
	     "h_sum{a=\"x\"} 2\nh_count{a=\"x\"} 3\nh_sum{a=\"y\"} 9\nh_count{a=\"y\"} 2\n", 0.5,
	     SVC_OK},
	    /* histogram quantiles: histogram_quantile(q, sum by (le) (increase(h_bucket))) */
	    {NULL, "h", "0.5",
	     "h_bucket{le=\"0.1\"} 0\nh_bucket{le=\"0.2\"} 0\nh_bucket{le=\"+Inf\"} 0\n",
	     "h_bucket{le=\"0.1\"} 50\nh_bucket{le=\"0.2\"} 100\nh_bucket{le=\"+Inf\"} 100\n", 0.1,
	     SVC_OK},
	    {NULL, "h", "0.75",
	     "h_bucket{le=\"0.1\"} 0\nh_bucket{le=\"0.2\"} 0\nh_bucket{le=\"+Inf\"} 0\n",
	     "h_bucket{le=\"0.1\"} 50\nh_bucket{le=\"0.2\"} 100\nh_bucket{le=\"+Inf\"} 100\n", 0.15,
	     SVC_OK},
	    {NULL, "h", "0.25", "h_bucket{le=\"0.1\"} 0\nh_bucket{le=\"+Inf\"} 0\n",
	     "h_bucket{le=\"0.1\"} 100\nh_bucket{le=\"+Inf\"} 100\n", 0.025, SVC_OK},
	    {NULL, "h", "0.99",
	     "h_bucket{le=\"1\"} 0\nh_bucket{le=\"2\"} 0\nh_bucket{le=\"+Inf\"} 0\n",
	     "h_bucket{le=\"1\"} 0\nh_bucket{le=\"2\"} 0\nh_bucket{le=\"+Inf\"} 10\n", 2, SVC_OK},
	    /* two series summed by le, in another order */
	    {NULL, "h", "0.5",
	     "h_bucket{s=\"a\",le=\"1\"} 0\nh_bucket{s=\"a\",le=\"+Inf\"} 0\n"
	     "h_bucket{s=\"b\",le=\"1\"} 0\nh_bucket{s=\"b\",le=\"+Inf\"} 0\n",
	     "h_bucket{s=\"b\",le=\"+Inf\"} 4\nh_bucket{s=\"b\",le=\"1\"} 4\n"
	     "h_bucket{s=\"a\",le=\"1\"} 0\nh_bucket{s=\"a\",le=\"+Inf\"} 4\n",
	     1, SVC_OK},
	    {NULL, "h", "0.5", "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\n",
	     "h_bucket{le=\"1\"} 0\nh_bucket{le=\"+Inf\"} 0\n", NAN, SVC_NO_WORK},
	    {NULL, "h", "0.5", "h_bucket{le=\"1\"} 5\nh_bucket{le=\"+Inf\"} 5\n",
	     "h_bucket{le=\"1\"} 1\nh_bucket{le=\"+Inf\"} 9\n", NAN, SVC_RESET},
	    {NULL, "h", "0.5", "h_bucket{le=\"1\"} 0\n", "h_bucket{le=\"1\"} 3\n", NAN,
	     SVC_MISSING},
	    {NULL, "h", "0.5", "h_bucket{le=\"+Inf\"} 0\n", "h_bucket{le=\"+Inf\"} 3\n", NAN,
	     SVC_MISSING},
	    {NULL, "h", "0.5", "-", "h_bucket{le=\"1\"} 3\nh_bucket{le=\"+Inf\"} 3\n", NAN,
	     SVC_NO_BASELINE},
	    /* summary quantiles: as the service reports them, one series only */
	    {NULL, "s", "0.99", "-", "s{quantile=\"0.5\"} 1\ns{quantile=\"0.99\"} 7\n", 7, SVC_OK},
	    {NULL, "s", "0.99", "-", "s{quantile=\"0.99\"} NaN\n", NAN, SVC_NO_WORK},
	    {NULL, "s", "0.99", "-",
	     "s{quantile=\"0.99\",x=\"1\"} 2\ns{quantile=\"0.99\",x=\"2\"} 3\n", NAN,
	     SVC_AMBIGUOUS},
	    {NULL, "s{x=\"2\"}", "0.99", "-",
	     "s{quantile=\"0.99\",x=\"1\"} 2\ns{quantile=\"0.99\",x=\"2\"} 3\n", 3, SVC_OK},
	    {NULL, "s", "0.9", "-", "s{quantile=\"0.99\"} 7\n", NAN, SVC_MISSING},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int reason;
		double got = latency_of(cases[i].work, cases[i].lat, cases[i].q, cases[i].a,
					cases[i].b, &reason);

		CHECK(reason == cases[i].reason, "case %zu: reason %s, want %s", i,
		      svc_reason_name(reason), svc_reason_name(cases[i].reason));
		CHECK(isnan(cases[i].want)
			  ? isnan(got)
			  : fabs(got - cases[i].want) <= 1e-12 * fabs(cases[i].want),
		      "case %zu: %.17g, want %.17g", i, got, cases[i].want);
	}
	/* more selected series than a scrape may give */
	size_t n = (SVC_MAX_ENTRIES + 1) * 16;
	char *many = malloc(n), *w = many;

	for (int i = 0; i <= SVC_MAX_ENTRIES; i++)
		w += sprintf(w, "w{i=\"%d\"} 1\n", i);
	struct svc_conf c;
	struct svc_point p = {0};
	char err[256];

	CHECK(svc_conf_parse(&c, "http://127.0.0.1/", "w", NULL, NULL, err, sizeof(err)) == 0);
	svc_point_parse(&c, many, (size_t)(w - many), &p, err, sizeof(err));
	CHECK(!p.ok && p.reason == SVC_TOO_LARGE, "%s", err);
	svc_conf_free(&c);
	svc_point_free(&p);
	free(many);
}

/* a server: GET /ok, /chunked (in pieces, 50 ms apart), /close (no length), /slow (never
 * answers), /big (more than allowed), /drip (a byte every 20 ms), anything else 404 */
static int listen_fd;

static void *answer(void *arg)
{
	int fd = (int)(intptr_t)arg;
	char req[1024];
	ssize_t n = recv(fd, req, sizeof(req) - 1, 0);

	req[n > 0 ? n : 0] = '\0';
	if (strstr(req, "GET /ok ")) {
		const char *r = "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
				"Content-Length: 12\r\n\r\nw 5\nh_sum 1\n";
		send(fd, r, strlen(r), MSG_NOSIGNAL);
	} else if (strstr(req, "GET /chunked ")) {
		const char *parts[] = {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
				       "4\r\nw 7\n\r\n", "0\r\n\r\n"};
		for (int i = 0; i < 3; i++) {
			send(fd, parts[i], strlen(parts[i]), MSG_NOSIGNAL);
			usleep(50000);
		}
	} else if (strstr(req, "GET /close ")) {
		const char *r = "HTTP/1.0 200 OK\r\n\r\nw 9\n";
		send(fd, r, strlen(r), MSG_NOSIGNAL);
	} else if (strstr(req, "GET /slow ")) {
		usleep(1500000);
	} else if (strstr(req, "GET /drip ")) {
		const char *r = "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n";
		send(fd, r, strlen(r), MSG_NOSIGNAL);
		for (int i = 0; i < 100 && send(fd, "#", 1, MSG_NOSIGNAL) == 1; i++)
			usleep(20000);
	} else if (strstr(req, "GET /big ")) {
		char chunk[4096];

		memset(chunk, '#', sizeof(chunk));
		send(fd, "HTTP/1.0 200 OK\r\n\r\n", 19, MSG_NOSIGNAL);
		for (int i = 0; i < 64; i++)
			if (send(fd, chunk, sizeof(chunk), MSG_NOSIGNAL) < 0)
				break;
	} else {
		send(fd, "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", 45, MSG_NOSIGNAL);
	}
	close(fd);
	return NULL;
}

/* a server: each connection answered in a thread of its own */
static void *serve(void *arg)
{
	(void)arg;
	for (;;) {
		int fd = accept(listen_fd, NULL, NULL);
		pthread_t th;

		if (fd < 0)
			return NULL;
		if (pthread_create(&th, NULL, answer, (void *)(intptr_t)fd) == 0)
			pthread_detach(th);
		else
			close(fd);
	}
}

/* run scrapes of paths at once, as the collector's loop does; their reasons and when each
 * ended (ms after the start) */
static void run(int port, const char *const *paths, int n, int64_t deadline_ms, int *reasons,
		double *ended_ms, char bodies[][64])
{
	struct scrape s[8];
	struct svc_conf c[8];
	char url[128], err[256];
	int64_t t0 = cpi2_clock_us(CLOCK_MONOTONIC);

	for (int i = 0; i < n; i++) {
		memset(&s[i], 0, sizeof(s[i]));
		s[i].fd = -1;
		snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, paths[i]);
		CHECK(svc_conf_parse(&c[i], url, "w", NULL, NULL, err, sizeof(err)) == 0, "%s",
		      err);
		scrape_start(&s[i], &c[i], 64 * 1024, t0 + deadline_ms * 1000);
		reasons[i] = -1;
	}
	for (;;) {
		struct pollfd fds[8];
		int k = 0, map[8];
		int64_t now = cpi2_clock_us(CLOCK_MONOTONIC);

		for (int i = 0; i < n; i++) {
			scrape_step(&s[i], 0, now);
			if (s[i].state == SCRAPE_DONE && reasons[i] < 0) {
				reasons[i] = s[i].reason;
				ended_ms[i] = (double)(now - t0) / 1e3;
				snprintf(bodies[i], 64, "%.*s", (int)s[i].body_len,
					 s[i].body ? s[i].body : "");
			}
			if (scrape_events(&s[i])) {
				fds[k] = (struct pollfd){s[i].fd, scrape_events(&s[i]), 0};
				map[k++] = i;
			}
		}
		if (!k)
			break;
		int rc = poll(fds, (nfds_t)k, 10);

		now = cpi2_clock_us(CLOCK_MONOTONIC);
		for (int j = 0; j < k; j++)
			scrape_step(&s[map[j]], rc > 0 ? fds[j].revents : 0, now);
	}
	for (int i = 0; i < n; i++) {
		scrape_free(&s[i]);
		svc_conf_free(&c[i]);
	}
}

static void sockets(void)
{
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(a);
	pthread_t th;
	int closed, port;

	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(listen_fd >= 0 && bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	      listen(listen_fd, 16) == 0 &&
	      getsockname(listen_fd, (struct sockaddr *)&a, &len) == 0);
	port = ntohs(a.sin_port);
	/* a port nobody listens on: bound, never listening */
	struct sockaddr_in b = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	closed = socket(AF_INET, SOCK_STREAM, 0);
	len = sizeof(b);
	CHECK(bind(closed, (struct sockaddr *)&b, sizeof(b)) == 0 &&
	      getsockname(closed, (struct sockaddr *)&b, &len) == 0);
	CHECK(pthread_create(&th, NULL, serve, NULL) == 0);

	static const char *const paths[] = {"/ok",  "/chunked", "/close", "/slow",
					    "/big", "/drip",	"/404"};
	static const int want[] = {SVC_OK,	  SVC_OK,      SVC_OK,	SVC_TIMEOUT,
				   SVC_TOO_LARGE, SVC_TIMEOUT, SVC_HTTP};
	static const char *const bodies_want[] = {"w 5\nh_sum 1\n", "w 7\n", "w 9\n"};
	int reasons[8];
	double ended[8];
	char bodies[8][64];

	/* all at once, deadline 400 ms */
	run(port, paths, 7, 400, reasons, ended, bodies);
	for (int i = 0; i < 7; i++) {
		CHECK(reasons[i] == want[i], "%s: %s, want %s", paths[i],
		      svc_reason_name(reasons[i]), svc_reason_name(want[i]));
		CHECK(ended[i] <= 400 + 100, "%s ended after %.0f ms (deadline 400)", paths[i],
		      ended[i]);
		if (i < 3)
			CHECK(!strcmp(bodies[i], bodies_want[i]), "%s: '%s'", paths[i], bodies[i]);
		printf("test-scrape: %-9s %-9s after %4.0f ms\n", paths[i],
		       svc_reason_name(reasons[i]), ended[i]);
	}
	/* a timeout ends at its deadline, not before */
	CHECK(ended[3] >= 400 - 1, "%.0f", ended[3]);
	/* a port that refuses */
	{
		struct scrape s = {.fd = -1};
		struct svc_conf c;
		char err[256], u[96];

		snprintf(u, sizeof(u), "http://127.0.0.1:%d/metrics", ntohs(b.sin_port));
		CHECK(svc_conf_parse(&c, u, "w", NULL, NULL, err, sizeof(err)) == 0);
		scrape_start(&s, &c, 1024, cpi2_clock_us(CLOCK_MONOTONIC) + 1000000);
		for (int i = 0; i < 100 && s.state != SCRAPE_DONE; i++) {
			struct pollfd p = {s.fd, scrape_events(&s), 0};

			poll(&p, 1, 10);
			scrape_step(&s, p.revents, cpi2_clock_us(CLOCK_MONOTONIC));
		}
		CHECK(s.state == SCRAPE_DONE && s.reason == SVC_CONNECT, "%s %s",
		      svc_reason_name(s.reason), s.detail);
		CHECK(strstr(s.detail, "refused"), "%s", s.detail);
		scrape_free(&s);
		svc_conf_free(&c);
	}
	close(closed);
	shutdown(listen_fd, SHUT_RDWR);
	close(listen_fd);
	pthread_join(th, NULL);
}

int main(void)
{
	conf_cases();
	http_cases();
	values_of_real_exporters();
	value_tables();
	sockets();
	printf("test-scrape: ok\n");
	return 0;
}
