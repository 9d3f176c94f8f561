/* httpd, metrics and the JSON log: the request parser on a table of good and hostile requests;
 * the metrics text (families, escapes, a histogram); a real server on 127.0.0.1 answering
 * /metrics, /healthz (good, then failing past its bound, good again after progress), HEAD, 404,
 * 405 and 431, with a client that never sends holding no one up; bad addresses refused; JSON
 * log lines parsed back with jansson. */
#include <cpi2/httpd.h>
#include <cpi2/log.h>
#include <cpi2/metrics.h>

#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "check.h"

static void parser(void)
{
	static const struct {
		const char *in;
		int want; /* > 0: whole (its length is strlen(in) unless rest), else the result */
		int method;
		const char *path;
	} cases[] = {
	    {"GET /metrics HTTP/1.1\r\nHost: x\r\nAccept: */*\r\n\r\n", 1, CPI2_HTTP_GET,
	     "/metrics"},
	    {"HEAD /healthz?verbose=1 HTTP/1.0\r\n\r\n", 1, CPI2_HTTP_HEAD, "/healthz"},
	    {"GET /metrics HTTP/1.1\nUser-Agent: Prometheus/2.42.0\n\n", 1, CPI2_HTTP_GET,
	     "/metrics"},
	    {"GET /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n", 1, CPI2_HTTP_GET, "/metrics"},
	    {"GET /metrics HTTP/1.1\r\nHost: x\r\n", 0, 0, NULL},
	    {"GET /metr", 0, 0, NULL},
	    {"", 0, 0, NULL},
	    {"POST /metrics HTTP/1.1\r\n\r\n", -405, 0, NULL},
	    {"GET /metrics HTTP/2.0\r\n\r\n", -505, 0, NULL},
	    {"GET /metrics SPDY/3\r\n\r\n", -400, 0, NULL},
	    {"GET metrics HTTP/1.1\r\n\r\n", -400, 0, NULL},
	    {"GET http://x/metrics HTTP/1.1\r\n\r\n", -400, 0, NULL},
	    {"GET  /metrics HTTP/1.1\r\n\r\n", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1 x\r\n\r\n", -400, 0, NULL},
	    {"GET /met\rrics HTTP/1.1\r\n\r\n", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1\r\nHost : x\r\n\r\n", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1\r\nA: b\x01\r\n\r\n", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", -400, 0, NULL},
	    {"GET /metrics HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n", -400, 0, NULL},
	    {"\r\nGET /metrics HTTP/1.1\r\n\r\n", -400, 0, NULL},
	    {"G(T /metrics HTTP/1.1\r\n\r\n", -400, 0, NULL},
	};
	struct cpi2_http_request req;
	char big[CPI2_HTTPD_MAX_REQUEST + 16];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = cpi2_http_parse_request(cases[i].in, strlen(cases[i].in), &req);

		if (cases[i].want > 0) {
			CHECK(rc == (int)strlen(cases[i].in), "case %zu: %d", i, rc);
			CHECK(req.method == cases[i].method && !strcmp(req.path, cases[i].path),
			      "case %zu: %d %s", i, req.method, req.path);
		} else {
			CHECK(rc == cases[i].want, "case %zu: %d, want %d", i, rc, cases[i].want);
		}
	}
	/* a NUL, whatever follows */
	CHECK(cpi2_http_parse_request("GET /\0 HTTP/1.1\r\n\r\n", 19, &req) == -400);
	/* a path of 255 bytes fits; 256 is too long */
	snprintf(big, sizeof(big), "GET /%0254d HTTP/1.1\r\n\r\n", 0);
	CHECK(cpi2_http_parse_request(big, strlen(big), &req) == (int)strlen(big));
	CHECK(strlen(req.path) == 255);
	snprintf(big, sizeof(big), "GET /%0255d HTTP/1.1\r\n\r\n", 0);
	CHECK(cpi2_http_parse_request(big, strlen(big), &req) == -414);
	/* headers that never end: more bytes are asked for until the bound, then 431 */
	memset(big, 'a', sizeof(big));
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	CHECK(cpi2_http_parse_request(big, CPI2_HTTPD_MAX_REQUEST - 1, &req) == 0);
	CHECK(cpi2_http_parse_request(big, CPI2_HTTPD_MAX_REQUEST, &req) == -431);
	CHECK(cpi2_http_parse_request(big, sizeof(big), &req) == -431);
	/* the end of the headers just past the bound is past it */
	memcpy(big + CPI2_HTTPD_MAX_REQUEST - 2, "\r\n\r\n", 4);
	CHECK(cpi2_http_parse_request(big, CPI2_HTTPD_MAX_REQUEST + 2, &req) == -431);
}

static void metrics_text(void)
{
	static const double bounds[] = {0.01, 0.1, 1};
	struct cpi2_metrics m = {0};
	struct cpi2_histogram h = {.bounds = bounds, .n_bounds = 3};

	cpi2_metrics_family(&m, "cpi2_x_total", "counter", "What \\ counts\nhere");
	cpi2_metrics_value(&m, "cpi2_x_total", (const char *const[]){"kind", "a\"b\\c\nd", NULL},
			   3);
	cpi2_metrics_value(&m, "cpi2_x_total", NULL, 0.25);
	cpi2_histogram_observe(&h, 0.005);
	cpi2_histogram_observe(&h, 0.1);
	cpi2_histogram_observe(&h, 0.5);
	cpi2_histogram_observe(&h, 7);
	cpi2_metrics_histogram(&m, "cpi2_x_seconds", "Latency", &h);
	CHECK(!m.failed);
	CHECK(!strcmp(m.text, "# HELP cpi2_x_total What \\\\ counts\\nhere\n"
			      "# TYPE cpi2_x_total counter\n"
			      "cpi2_x_total{kind=\"a\\\"b\\\\c\\nd\"} 3\n"
			      "cpi2_x_total 0.25\n"
			      "# HELP cpi2_x_seconds Latency\n"
			      "# TYPE cpi2_x_seconds histogram\n"
			      "cpi2_x_seconds_bucket{le=\"0.01\"} 1\n"
			      "cpi2_x_seconds_bucket{le=\"0.1\"} 2\n"
			      "cpi2_x_seconds_bucket{le=\"1\"} 3\n"
			      "cpi2_x_seconds_bucket{le=\"+Inf\"} 4\n"
			      "cpi2_x_seconds_sum 7.605\n"
			      "cpi2_x_seconds_count 4\n"),
	      "%s", m.text);
	/* a text longer than the first allocation grows */
	cpi2_metrics_reset(&m);
	for (int i = 0; i < 2000; i++)
		cpi2_metrics_value(&m, "cpi2_x_total", NULL, i);
	CHECK(!m.failed && m.len > 20000 && strstr(m.text, "cpi2_x_total 1999\n"));
	cpi2_metrics_free(&m);
}

/* One request on a new connection; the whole answer (the server closes). */
static int get(int port, const char *request, char *out, size_t size)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	size_t n = 0;
	ssize_t k;

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "%s",
	      strerror(errno));
	CHECK(send(fd, request, strlen(request), MSG_NOSIGNAL) == (ssize_t)strlen(request));
	while (n + 1 < size && (k = recv(fd, out + n, size - 1 - n, 0)) > 0)
		n += (size_t)k;
	out[n] = '\0';
	close(fd);
	return atoi(out + 9 * (n > 9));
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

/* With no descriptor left for accept (EMFILE), the server pauses rather than polling the
 * queued connection again at once (it spun on a whole CPU before); the connection is answered
 * once descriptors are free again. */
static void no_descriptor_left(struct cpi2_httpd *h, int port)
{
	static char out[1 << 16];
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	int fd = socket(AF_INET, SOCK_STREAM, 0), held[4096], n = 0;
	const char req[] = "GET /healthz HTTP/1.0\r\n\r\n";
	struct rlimit old, low;
	double cpu0;
	ssize_t k;
	size_t got = 0;

	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	CHECK(fd >= 0);
	/* a soft limit the test can reach */
	CHECK(getrlimit(RLIMIT_NOFILE, &old) == 0);
	low = old;
	low.rlim_cur = 256;
	CHECK(setrlimit(RLIMIT_NOFILE, &low) == 0, "%s", strerror(errno));
	/* every descriptor taken, those the server lets go of meanwhile too (a closed client's) */
	for (int round = 0; round < 3; round++) {
		while (n < 4096 && (held[n] = dup(0)) >= 0)
			n++;
		CHECK(n < 4096 && errno == EMFILE, "%d descriptors, %s", n, strerror(errno));
		usleep(100000);
	}
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0, "%s", strerror(errno));
	CHECK(send(fd, req, strlen(req), MSG_NOSIGNAL) == (ssize_t)strlen(req));
	cpu0 = cpu_s();
	usleep(500000);
	CHECK(cpu_s() - cpu0 < 0.1, "%.3f s of CPU in 0.5 s with no descriptor left",
	      cpu_s() - cpu0);
	cpi2_httpd_alive(h); /* the answer is then 200 */
	while (n > 0)
		close(held[--n]);
	CHECK(setrlimit(RLIMIT_NOFILE, &old) == 0);
	while ((k = recv(fd, out + got, sizeof(out) - 1 - got, 0)) > 0)
		got += (size_t)k;
	out[got] = '\0';
	close(fd);
	CHECK(strstr(out, "HTTP/1.1 200 OK"), "%s", out);
}

static void server(void)
{
	static char out[1 << 16];
	static const char text[] = "# HELP cpi2_t_windows_total Windows\n"
				   "# TYPE cpi2_t_windows_total counter\n"
				   "cpi2_t_windows_total 7\n";
	struct sockaddr_in sa = {.sin_family = AF_INET};
	struct cpi2_httpd *h;
	char err[256], big[CPI2_HTTPD_MAX_REQUEST + 100];
	int port, idle, rc;
	double t0;

	CHECK(cpi2_httpd_start(&h, "127.0.0.1", "t", 1, err, sizeof(err)) == -EINVAL);
	CHECK(strstr(err, "HOST:PORT"), "%s", err);
	CHECK(cpi2_httpd_start(&h, "::1:80", "t", 1, err, sizeof(err)) == -EINVAL);
	CHECK(cpi2_httpd_start(&h, "127.0.0.1:99999", "t", 1, err, sizeof(err)) == -EINVAL);
	CHECK(cpi2_httpd_start(&h, "127.0.0.1:0", "t", 0, err, sizeof(err)) == -EINVAL);
	rc = cpi2_httpd_start(&h, "127.0.0.1:0", "t", 0.5, err, sizeof(err));
	CHECK(rc == 0, "%s", err);
	port = cpi2_httpd_port(h);
	CHECK(port > 0);

	/* a client that connects and never sends holds no one up */
	idle = socket(AF_INET, SOCK_STREAM, 0);
	sa.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	CHECK(connect(idle, (struct sockaddr *)&sa, sizeof(sa)) == 0);

	t0 = seconds();
	CHECK(get(port, "GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n", out, sizeof(out)) == 200, "%s",
	      out);
	CHECK(seconds() - t0 < 2, "%.2f s", seconds() - t0);
	CHECK(strstr(out, "Content-Type: text/plain; version=0.0.4") &&
		  strstr(out, "\nprocess_cpu_seconds_total ") &&
		  strstr(out, "\nprocess_resident_memory_bytes ") &&
		  strstr(out, "\ncpi2_build_info{program=\"t\",version=\"") &&
		  strstr(out, "\ncpi2_t_progress_bound_seconds 0.5\n") &&
		  !strstr(out, "cpi2_t_windows_total"),
	      "%s", out);
	CHECK(cpi2_httpd_publish(h, text, strlen(text)) == 0);
	CHECK(get(port, "GET /metrics?x=1 HTTP/1.0\r\n\r\n", out, sizeof(out)) == 200);
	CHECK(strstr(out, "\r\n\r\n# HELP cpi2_t_windows_total Windows\n") &&
		  strstr(out, "\ncpi2_t_windows_total 7\n# HELP process_cpu_seconds_total"),
	      "%s", out);
	/* the Content-Length is the body's */
	{
		const char *body = strstr(out, "\r\n\r\n") + 4,
			   *cl = strstr(out, "Content-Length: ");

		CHECK(cl && atol(cl + 16) == (long)strlen(body), "%s", out);
	}
	CHECK(get(port, "HEAD /metrics HTTP/1.1\r\n\r\n", out, sizeof(out)) == 200);
	CHECK(!strcmp(strstr(out, "\r\n\r\n"), "\r\n\r\n"), "%s", out);

	/* healthy until the bound passes without progress; progress makes it healthy again */
	CHECK(get(port, "GET /healthz HTTP/1.1\r\n\r\n", out, sizeof(out)) == 200, "%s", out);
	CHECK(strstr(out, "\r\n\r\nok: last progress "), "%s", out);
	usleep(700000);
	CHECK(get(port, "GET /healthz HTTP/1.1\r\n\r\n", out, sizeof(out)) == 503, "%s", out);
	CHECK(strstr(out, "unhealthy: no window or poll completed for "), "%s", out);
	cpi2_httpd_alive(h);
	CHECK(get(port, "GET /healthz HTTP/1.1\r\n\r\n", out, sizeof(out)) == 200, "%s", out);

	CHECK(get(port, "GET / HTTP/1.1\r\n\r\n", out, sizeof(out)) == 404, "%s", out);
	CHECK(get(port, "DELETE /metrics HTTP/1.1\r\n\r\n", out, sizeof(out)) == 405, "%s", out);
	CHECK(strstr(out, "\r\nAllow: GET, HEAD\r\n"), "%s", out);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
	CHECK(get(port, big, out, sizeof(out)) == 431, "%s", out);
	CHECK(get(port, "GET /metrics HTTP/1.1\r\nX\r\n\r\n", out, sizeof(out)) == 400, "%s", out);
	close(idle);
	no_descriptor_left(h, port);
	cpi2_httpd_stop(h);
	cpi2_httpd_stop(NULL);
}

static void json_log(void)
{
	char path[] = "/tmp/cpi2-test-log-XXXXXX", line[8192], esc[16];
	int fd = mkstemp(path), saved = dup(2);
	json_error_t jerr;
	json_t *j;
	FILE *f;

	CHECK(fd >= 0 && saved >= 0);
	CHECK(cpi2_log_set_format_name("yaml", line, sizeof(line)) == -EINVAL);
	CHECK(strstr(line, "log_format 'yaml'"), "%s", line);
	CHECK(cpi2_log_set_format_name("json", line, sizeof(line)) == 0);
	fflush(stderr);
	dup2(fd, 2);
	cpi2_log(CPI2_LOG_WARN, "t\"x",
		 "a \"quote\", a \\ \n tab\t bell\a, %s, bad \xff\xc0\x80 end", "caf\xc3\xa9");
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	cpi2_log_set_format(CPI2_LOG_TEXT);
	f = fopen(path, "r");
	CHECK(f && fgets(line, sizeof(line), f));
	fclose(f);
	unlink(path);
	close(fd);
	j = json_loads(line, 0, &jerr);
	CHECK(j, "%s: %s", line, jerr.text);
	CHECK(!strcmp(json_string_value(json_object_get(j, "level")), "warn"));
	CHECK(!strcmp(json_string_value(json_object_get(j, "module")), "t\"x"));
	CHECK(strlen(json_string_value(json_object_get(j, "time"))) == 24);
	CHECK(!strcmp(json_string_value(json_object_get(j, "msg")),
		      "a \"quote\", a \\ \n tab\t bell\a, caf\xc3\xa9, bad "
		      "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd end"),
	      "%s", line);
	json_decref(j);
	/* cut at a character's end, never inside an escape */
	CHECK(cpi2_log_json_escape("ab\"", esc, 4) == 2 && !strcmp(esc, "ab"));
	CHECK(cpi2_log_json_escape("\xc3\xa9\xc3\xa9", esc, 4) == 2);
}

int main(void)
{
	parser();
	metrics_text();
	server();
	json_log();
	printf("test-httpd: ok\n");
	return 0;
}
