/* scrape: see scrape.h. */
#include "scrape.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define HEAD_MAX 16384 /* an answer's status line and headers */

static void finish(struct scrape *s, int reason, const char *detail)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	s->state = SCRAPE_DONE;
	s->reason = reason;
	snprintf(s->detail, sizeof(s->detail), "%s", detail ? detail : "");
	if (reason != SVC_OK) {
		s->body = NULL;
		s->body_len = 0;
	}
}

void scrape_start(struct scrape *s, const struct svc_conf *conf, size_t max_bytes,
		  int64_t deadline_us)
{
	int n;

	if (s->state != SCRAPE_IDLE && s->state != SCRAPE_DONE)
		scrape_abort(s, SVC_TIMEOUT, "a new scrape began before it ended");
	s->state = SCRAPE_CONNECTING;
	s->deadline_us = deadline_us;
	s->max_bytes = max_bytes;
	s->len = s->req_sent = 0;
	s->body = NULL;
	s->body_len = 0;
	s->reason = SVC_OK;
	s->detail[0] = '\0';
	n = snprintf(s->req, sizeof(s->req),
		     "GET %s HTTP/1.1\r\nHost: %s\r\nUser-Agent: cpi2-collector\r\n"
		     "Accept: text/plain;version=0.0.4\r\nAccept-Encoding: identity\r\n"
		     "Connection: close\r\n\r\n",
		     conf->path, conf->host);
	s->req_len = n > 0 && (size_t)n < sizeof(s->req) ? (size_t)n : 0;
	s->fd = socket(conf->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->fd < 0 || !s->req_len) {
		finish(s, SVC_CONNECT, s->fd < 0 ? strerror(errno) : "request too long");
		return;
	}
	if (connect(s->fd, (const struct sockaddr *)&conf->addr, conf->addrlen) &&
	    errno != EINPROGRESS)
		finish(s, SVC_CONNECT, strerror(errno));
}

short scrape_events(const struct scrape *s)
{
	switch (s->state) {
	case SCRAPE_CONNECTING:
	case SCRAPE_SENDING:
		return POLLOUT;
	case SCRAPE_READING:
		return POLLIN;
	default:
		return 0;
	}
}

/* a header's value, trimmed: whether line [p, e) is "name: value" */
static bool header(const char *p, const char *e, const char *name, const char **v, const char **ve)
{
	size_t n = strlen(name);

	if ((size_t)(e - p) <= n || strncasecmp(p, name, n) || p[n] != ':')
		return false;
	p += n + 1;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*v = p;
	*ve = e;
	return true;
}

static bool token_is(const char *v, const char *ve, const char *want)
{
	return (size_t)(ve - v) == strlen(want) && !strncasecmp(v, want, (size_t)(ve - v));
}

static enum http_parse fail(int *reason, int r, char *detail, size_t dsz, const char *why)
{
	*reason = r;
	snprintf(detail, dsz, "%s", why);
	return HTTP_ERROR;
}

/* chunked body at [p, end): HTTP_DONE with the chunks joined at p (*n bytes) */
static enum http_parse chunks(char *p, char *end, bool eof, size_t max_body, size_t *n, int *reason,
			      char *detail, size_t dsz)
{
	char *r = p, *w = p;
	size_t total = 0;

	for (;;) {
		char *eol = memmem(r, (size_t)(end - r), "\r\n", 2);
		size_t size = 0;
		int digits = 0;
		char *q = r;

		if (!eol)
			break;
		for (; q < eol; q++, digits++) {
			int d = *q >= '0' && *q <= '9'	 ? *q - '0'
				: *q >= 'a' && *q <= 'f' ? *q - 'a' + 10
				: *q >= 'A' && *q <= 'F' ? *q - 'A' + 10
							 : -1;
			if (d < 0)
				break;
			if (digits == 15)
				return fail(reason, SVC_TOO_LARGE, detail, dsz,
					    "a chunk size too large");
			size = size * 16 + (size_t)d;
		}
		if (!digits || (q < eol && *q != ';' && *q != ' ' && *q != '\t'))
			return fail(reason, SVC_HTTP, detail, dsz, "a malformed chunk size");
		if (size > max_body || total + size > max_body)
			return fail(reason, SVC_TOO_LARGE, detail, dsz,
				    "a body larger than allowed");
		r = eol + 2;
		if (size == 0) {
			/* trailers, then an empty line */
			for (;;) {
				char *t = memmem(r, (size_t)(end - r), "\r\n", 2);

				if (!t)
					goto more;
				if (t == r) {
					*n = total;
					return HTTP_DONE;
				}
				r = t + 2;
			}
		}
		if ((size_t)(end - r) < size + 2)
			break;
		if (r[size] != '\r' || r[size + 1] != '\n')
			return fail(reason, SVC_HTTP, detail, dsz, "a chunk not followed by CRLF");
		memmove(w, r, size);
		w += size;
		total += size;
		r += size + 2;
	}
more:
	if (eof)
		return fail(reason, SVC_HTTP, detail, dsz, "the answer was cut short");
	return HTTP_MORE;
}

enum http_parse http_parse(char *buf, size_t len, bool eof, size_t max_body, char **body,
			   size_t *body_len, int *reason, char *detail, size_t dsz)
{
	char *end = buf + len, *head_end = memmem(buf, len, "\r\n\r\n", 4), *p, *line;
	const char *v, *ve;
	bool chunked = false, has_length = false;
	size_t length = 0;

	if (!head_end) {
		if (len > HEAD_MAX)
			return fail(reason, SVC_HTTP, detail, dsz, "an answer's head too long");
		if (eof)
			return fail(reason, SVC_HTTP, detail, dsz,
				    len ? "the answer was cut short"
					: "no answer (connection closed)");
		return HTTP_MORE;
	}
	if (head_end - buf > HEAD_MAX)
		return fail(reason, SVC_HTTP, detail, dsz, "an answer's head too long");
	if (head_end - buf < 12 || (strncmp(buf, "HTTP/1.1 ", 9) && strncmp(buf, "HTTP/1.0 ", 9)))
		return fail(reason, SVC_HTTP, detail, dsz, "not an HTTP/1 answer");
	if (strncmp(buf + 9, "200", 3) || (buf[12] != ' ' && buf[12] != '\r')) {
		char why[64];
		int n = 0;

		while (n < 3 && buf[9 + n] >= '0' && buf[9 + n] <= '9')
			n++;
		snprintf(why, sizeof(why), "status %.*s", n == 3 ? 3 : 0, buf + 9);
		return fail(reason, SVC_HTTP, detail, dsz,
			    n == 3 ? why : "a malformed status line");
	}
	line = memmem(buf, (size_t)(head_end - buf), "\r\n", 2);
	for (p = line ? line + 2 : head_end; p < head_end;) {
		char *e = memmem(p, (size_t)(head_end + 2 - p), "\r\n", 2);

		if (!e)
			e = head_end;
		if (*p == ' ' || *p == '\t' || !memchr(p, ':', (size_t)(e - p)) ||
		    memchr(p, '\0', (size_t)(e - p)))
			return fail(reason, SVC_HTTP, detail, dsz, "a malformed header line");
		if (header(p, e, "Content-Length", &v, &ve)) {
			size_t l = 0;

			if (v == ve || ve - v > 18)
				return fail(reason, SVC_HTTP, detail, dsz,
					    "a malformed Content-Length");
			for (const char *q = v; q < ve; q++) {
				if (*q < '0' || *q > '9')
					return fail(reason, SVC_HTTP, detail, dsz,
						    "a malformed Content-Length");
				l = l * 10 + (size_t)(*q - '0');
			}
			if (has_length && l != length)
				return fail(reason, SVC_HTTP, detail, dsz, "two Content-Lengths");
			has_length = true;
			length = l;
		} else if (header(p, e, "Transfer-Encoding", &v, &ve)) {
			if (!token_is(v, ve, "chunked"))
				return fail(reason, SVC_HTTP, detail, dsz,
					    "a transfer encoding other than chunked");
			chunked = true;
		} else if (header(p, e, "Content-Encoding", &v, &ve)) {
			if (!token_is(v, ve, "identity"))
				return fail(reason, SVC_HTTP, detail, dsz,
					    "a content encoding (none was asked for)");
		} else if (header(p, e, "Content-Type", &v, &ve)) {
			if (ve - v < 10 || strncasecmp(v, "text/plain", 10) ||
			    (ve - v > 10 && v[10] != ';' && v[10] != ' '))
				return fail(reason, SVC_HTTP, detail, dsz,
					    "a content type other than text/plain");
		}
		p = e + 2;
	}
	if (chunked && has_length)
		return fail(reason, SVC_HTTP, detail, dsz, "both Content-Length and chunked");
	p = head_end + 4;
	if (chunked) {
		/* join the chunks in a copy first: in place only once whole, so that a partial
		 * answer read again from its start is still the bytes received */
		size_t n = 0;
		char *copy = malloc((size_t)(end - p) + 1);
		enum http_parse rc;

		if (!copy)
			return fail(reason, SVC_TOO_LARGE, detail, dsz, "out of memory");
		memcpy(copy, p, (size_t)(end - p));
		rc = chunks(copy, copy + (end - p), eof, max_body, &n, reason, detail, dsz);
		if (rc == HTTP_DONE) {
			memcpy(p, copy, n);
			*body = p;
			*body_len = n;
		}
		free(copy);
		return rc;
	}
	if (has_length) {
		if (length > max_body)
			return fail(reason, SVC_TOO_LARGE, detail, dsz,
				    "a body larger than allowed");
		if ((size_t)(end - p) >= length) {
			*body = p;
			*body_len = length;
			return HTTP_DONE;
		}
		if (eof)
			return fail(reason, SVC_HTTP, detail, dsz, "the answer was cut short");
		return HTTP_MORE;
	}
	if ((size_t)(end - p) > max_body)
		return fail(reason, SVC_TOO_LARGE, detail, dsz, "a body larger than allowed");
	if (!eof)
		return HTTP_MORE;
	*body = p;
	*body_len = (size_t)(end - p);
	return HTTP_DONE;
}

static void send_request(struct scrape *s)
{
	while (s->req_sent < s->req_len) {
		ssize_t n =
		    send(s->fd, s->req + s->req_sent, s->req_len - s->req_sent, MSG_NOSIGNAL);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			finish(s, SVC_CONNECT, strerror(errno));
			return;
		}
		s->req_sent += (size_t)n;
	}
	s->state = SCRAPE_READING;
}

static void read_answer(struct scrape *s)
{
	size_t limit = s->max_bytes + HEAD_MAX;
	bool eof = false;
	char detail[160];
	int reason;

	for (;;) {
		if (s->len == s->cap) {
			size_t cap = s->cap ? s->cap * 2 : 65536;
			char *b;

			if (cap > limit + 1)
				cap = limit + 1;
			if (s->len == cap) {
				finish(s, SVC_TOO_LARGE, "an answer larger than allowed");
				return;
			}
			if (!(b = realloc(s->buf, cap))) {
				finish(s, SVC_TOO_LARGE, "out of memory");
				return;
			}
			s->buf = b;
			s->cap = cap;
		}
		ssize_t n = recv(s->fd, s->buf + s->len, s->cap - s->len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n < 0) {
			finish(s, SVC_CONNECT, strerror(errno));
			return;
		}
		if (n == 0) {
			eof = true;
			break;
		}
		s->len += (size_t)n;
	}
	switch (http_parse(s->buf, s->len, eof, s->max_bytes, &s->body, &s->body_len, &reason,
			   detail, sizeof(detail))) {
	case HTTP_DONE:
		finish(s, SVC_OK, NULL);
		break;
	case HTTP_ERROR:
		finish(s, reason, detail);
		break;
	case HTTP_MORE:
		if (s->len > limit)
			finish(s, SVC_TOO_LARGE, "an answer larger than allowed");
		break;
	}
}

void scrape_step(struct scrape *s, short revents, int64_t now_us)
{
	if (s->state == SCRAPE_CONNECTING && revents) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
			finish(s, SVC_CONNECT, strerror(err ? err : errno));
			return;
		}
		s->state = SCRAPE_SENDING;
	}
	if (s->state == SCRAPE_SENDING && revents)
		send_request(s);
	else if (s->state == SCRAPE_READING && revents)
		read_answer(s);
	if (s->state != SCRAPE_IDLE && s->state != SCRAPE_DONE && now_us >= s->deadline_us)
		finish(s, SVC_TIMEOUT, "no whole answer before the deadline");
}

void scrape_abort(struct scrape *s, int reason, const char *detail)
{
	if (s->state != SCRAPE_IDLE && s->state != SCRAPE_DONE)
		finish(s, reason, detail);
}

void scrape_reset(struct scrape *s)
{
	if (s->state == SCRAPE_DONE)
		s->state = SCRAPE_IDLE;
}

void scrape_free(struct scrape *s)
{
	if (s->state != SCRAPE_IDLE && s->state != SCRAPE_DONE && s->fd >= 0)
		close(s->fd);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}
