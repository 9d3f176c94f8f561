/* reply: see reply.h. */
#include "reply.h"

#include <ctype.h>
#include <string.h>
#include <strings.h>

#define RESP_MAX_DEPTH 8
#define RESP_MAX_ELEMENTS 1000000L

/* The line at buf ending in \r\n: its length without them, -2 incomplete, -1 too long or a
 * bare \r. */
static long line_end(const char *buf, size_t len)
{
	size_t n = len < REPLY_MAX_LINE ? len : REPLY_MAX_LINE;
	const char *cr = memchr(buf, '\r', n);

	if (!cr)
		return len < REPLY_MAX_LINE ? -2 : -1;
	if ((size_t)(cr - buf) + 1 == len)
		return -2;
	return cr[1] == '\n' ? cr - buf : -1;
}

/* A decimal integer filling buf[0..n) (an optional '-' first); -1 when it is not one. */
static int parse_long(const char *buf, long n, long *out)
{
	long v = 0, i = 0;
	bool neg = false;

	if (n > 0 && buf[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == n || n - i > 12)
		return -1;
	for (; i < n; i++) {
		if (!isdigit((unsigned char)buf[i]))
			return -1;
		v = v * 10 + (buf[i] - '0');
	}
	*out = neg ? -v : v;
	return 0;
}

static long resp(const char *buf, size_t len, bool *error, int depth)
{
	long line, n;

	if (!len)
		return 0;
	if ((line = line_end(buf, len)) == -2)
		return 0;
	if (line < 1)
		return -1;
	switch (buf[0]) {
	case '-':
		*error = true;
		/* fall through */
	case '+':
		return line + 2;
	case ':':
		return parse_long(buf + 1, line - 1, &n) ? -1 : line + 2;
	case '$':
		if (parse_long(buf + 1, line - 1, &n) || n < -1 || n > REPLY_MAX_BODY)
			return -1;
		if (n == -1)
			return line + 2;
		if (len < (size_t)(line + 2 + n + 2))
			return 0;
		if (buf[line + 2 + n] != '\r' || buf[line + 2 + n + 1] != '\n')
			return -1;
		return line + 2 + n + 2;
	case '*': {
		long at = line + 2;

		if (parse_long(buf + 1, line - 1, &n) || n < -1 || n > RESP_MAX_ELEMENTS ||
		    depth >= RESP_MAX_DEPTH)
			return -1;
		for (long i = 0; i < n; i++) {
			long el = resp(buf + at, len - (size_t)at, error, depth + 1);

			if (el <= 0)
				return el;
			at += el;
		}
		return at;
	}
	default:
		return -1;
	}
}

long reply_redis(const char *buf, size_t len, bool *error)
{
	return resp(buf, len, error, 0);
}

/* The header block's length (through the blank line), 0 incomplete, -1 too long. */
static long header_end(const char *buf, size_t len)
{
	size_t n = len < REPLY_MAX_LINE ? len : REPLY_MAX_LINE;
	const char *end = memmem(buf, n, "\r\n\r\n", 4);

	if (end)
		return end - buf + 4;
	return len < REPLY_MAX_LINE ? 0 : -1;
}

/* Whether the header line [p, e) names key (case-insensitive) and, if so, its value, trimmed. */
static bool header(const char *p, const char *e, const char *key, const char **v, long *vn)
{
	size_t k = strlen(key);

	if ((size_t)(e - p) <= k || strncasecmp(p, key, k) || p[k] != ':')
		return false;
	p += k + 1;
	while (p < e && (*p == ' ' || *p == '\t'))
		p++;
	while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*v = p;
	*vn = e - p;
	return true;
}

long reply_http(const char *buf, size_t len, bool *error, bool *close)
{
	long head = header_end(buf, len), status, body = -1;
	const char *p, *e, *v;
	long vn;

	if (head <= 0)
		return head;
	/* HTTP/1.x NNN reason */
	if (head < 16 || memcmp(buf, "HTTP/1.", 7) || !isdigit((unsigned char)buf[7]) ||
	    buf[8] != ' ' || parse_long(buf + 9, 3, &status) || (buf[12] != ' ' && buf[12] != '\r'))
		return -1;
	if (status < 200 || status > 599)
		return -1; /* 1xx interim answers are not asked for */
	p = memchr(buf, '\n', (size_t)head) + 1;
	for (; p < buf + head - 2; p = e + 2) {
		e = memmem(p, (size_t)(buf + head - p), "\r\n", 2);
		if (header(p, e, "Content-Length", &v, &vn)) {
			if (body != -1 || parse_long(v, vn, &body) || body < 0 ||
			    body > REPLY_MAX_BODY)
				return -1;
		} else if (header(p, e, "Transfer-Encoding", &v, &vn)) {
			return -1; /* chunked bodies are not taken: the lab asks for static files */
		} else if (header(p, e, "Connection", &v, &vn)) {
			if (vn == 5 && !strncasecmp(v, "close", 5))
				*close = true;
		}
	}
	if (body < 0 && (status == 204 || status == 304))
		body = 0;
	if (body < 0)
		return -1;
	if (len < (size_t)(head + body))
		return 0;
	if (status < 200 || status > 299)
		*error = true;
	return head + body;
}
