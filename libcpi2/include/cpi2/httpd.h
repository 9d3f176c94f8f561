/* httpd: an agent's /metrics and /healthz over HTTP/1.x, served by a thread of its own so that
 * no client holds up the agent's loop. The loop hands over its metrics as text when it has new
 * ones (cpi2_httpd_publish) and says when it completed a window or a poll (cpi2_httpd_alive);
 * the thread answers from the last text it was given, adds the process's own (CPU seconds,
 * resident memory, build info) and answers /healthz with 503 when no progress came within the
 * bound (counted from the start until the first).
 *
 * Every request is hostile until checked: it must come whole (request line and headers, no
 * body) within CPI2_HTTPD_TIMEOUT_MS and CPI2_HTTPD_MAX_REQUEST bytes; at most
 * CPI2_HTTPD_MAX_CLIENTS are served at once (others wait in the listen queue); GET and HEAD of
 * /metrics and /healthz only; every answer closes its connection. */
#ifndef CPI2_HTTPD_H
#define CPI2_HTTPD_H

#include <stddef.h>

#define CPI2_HTTPD_MAX_REQUEST 4096
#define CPI2_HTTPD_TIMEOUT_MS 5000
#define CPI2_HTTPD_MAX_CLIENTS 8

/* The help of the agents' metrics_address option (one text for every agent). */
#define CPI2_HTTPD_ADDRESS_HELP                                                                    \
	"serve /metrics and /healthz on HOST:PORT (':PORT' every address, '[::1]:PORT' IPv6; "     \
	"empty: off)"

struct cpi2_httpd;

/* Listen on address ("127.0.0.1:9401", ":9401", "[::1]:9401"; port 0 takes a free one) and
 * start the thread (signals blocked in it: they stay the agent's). program names the agent in
 * the logs and in the metrics the server adds (cpi2_<program>_...). Returns 0 or -errno with
 * a reason. */
int cpi2_httpd_start(struct cpi2_httpd **out, const char *address, const char *program,
		     double health_bound_s, char *err, size_t errsz);

/* The port listened on (the one taken, for port 0). */
int cpi2_httpd_port(const struct cpi2_httpd *h);

/* Replace the agent's metrics text (copied; the thread may be answering meanwhile). Returns 0
 * or -ENOMEM (the last text stays). */
int cpi2_httpd_publish(struct cpi2_httpd *h, const char *text, size_t len);

/* A window or poll completed: /healthz is good for health_bound_s from now. */
void cpi2_httpd_alive(struct cpi2_httpd *h);

/* Stop the thread, close every connection, free. NULL is a no-op. */
void cpi2_httpd_stop(struct cpi2_httpd *h);

/* A request line and headers, parsed (the server's parser, fuzzed on its own). */
enum { CPI2_HTTP_GET = 1, CPI2_HTTP_HEAD = 2 };
struct cpi2_http_request {
	int method;
	char path[256]; /* without the query */
};

/* Parse buf[0..len) as one request. Returns its length (request line and headers, through the
 * empty line) when whole, 0 when more bytes are needed (len < CPI2_HTTPD_MAX_REQUEST), or the
 * negated HTTP status of the refusal: -400 (malformed, NUL, a body), -405 (another method),
 * -414 (a path too long), -431 (no end within CPI2_HTTPD_MAX_REQUEST bytes), -505 (not
 * HTTP/1.0 or 1.1). */
int cpi2_http_parse_request(const char *buf, size_t len, struct cpi2_http_request *req);

#endif
