/* reply: where a redis (RESP) or HTTP answer ends. Every kind of RESP reply, nested arrays,
 * nil; HTTP with a body, 204 without, Connection: close, error statuses. Every proper prefix of
 * a complete answer asks for more (0), never a length; refusals: not the protocol, a bad or
 * missing length, chunked, too long, too deep. Then random answers cut and corrupted at random,
 * under ASan: the length given is never beyond the buffer and never 0 for a complete buffer
 * that holds a valid answer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "reply.h"

static long redis(const char *s, bool *err)
{
	*err = false;
	return reply_redis(s, strlen(s), err);
}

static long http(const char *s, bool *err, bool *close)
{
	*err = *close = false;
	return reply_http(s, strlen(s), err, close);
}

/* every proper prefix of a complete answer (copied to the heap, so ASan sees a read beyond
 * it) asks for more */
static void prefixes(const char *s, bool is_http)
{
	size_t n = strlen(s);

	for (size_t k = 0; k < n; k++) {
		char *p = malloc(k ? k : 1);
		bool e = false, c = false;
		long r;

		memcpy(p, s, k);
		r = is_http ? reply_http(p, k, &e, &c) : reply_redis(p, k, &e);
		CHECK(r == 0, "prefix %zu of %zu of '%s': %ld", k, n, s, r);
		free(p);
	}
}

static void check_redis(void)
{
	bool err;
	const char *ok[] = {"+OK\r\n",
			    "-ERR unknown command\r\n",
			    ":12345\r\n",
			    ":-1\r\n",
			    "$5\r\nhello\r\n",
			    "$0\r\n\r\n",
			    "$-1\r\n",
			    "*-1\r\n",
			    "*0\r\n",
			    "*2\r\n$3\r\nfoo\r\n:1\r\n",
			    "*2\r\n*1\r\n+a\r\n$2\r\n\r\n\r\n",
			    NULL};

	for (int i = 0; ok[i]; i++) {
		long n = redis(ok[i], &err);

		CHECK(n == (long)strlen(ok[i]), "'%s': %ld", ok[i], n);
		CHECK(err == (ok[i][0] == '-'), "'%s': error %d", ok[i], err);
		prefixes(ok[i], false);
	}
	/* two pipelined answers: the first's length */
	CHECK(redis("$2\r\nab\r\n+OK\r\n", &err) == 8);
	/* an error inside an array */
	CHECK(redis("*2\r\n+a\r\n-ERR x\r\n", &err) == 16 && err);
	const char *bad[] = {
	    "?x\r\n",	      "+OK\rX",
	    "$abc\r\n",	      "$-2\r\n",
	    "$3\r\nabcd\r\n", "$99999999999\r\n",
	    ":\r\n",	      ":12a\r\n",
	    "*2000000\r\n",   "*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n+x\r\n",
	    "\r\n",	      NULL};

	for (int i = 0; bad[i]; i++)
		CHECK(redis(bad[i], &err) == -1, "'%s' taken", bad[i]);
	/* a line longer than the limit without its end is refused, not waited for */
	char *longline = malloc(REPLY_MAX_LINE + 10);

	longline[0] = '+';
	memset(longline + 1, 'a', REPLY_MAX_LINE + 9);
	CHECK(reply_redis(longline, REPLY_MAX_LINE + 10, &err) == -1);
	CHECK(reply_redis(longline, 100, &err) == 0);
	free(longline);
}

static void check_http(void)
{
	bool err, close;
	const char *ok200 = "HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Length: 5\r\n\r\nhello";

	CHECK(http(ok200, &err, &close) == (long)strlen(ok200) && !err && !close);
	prefixes(ok200, true);
	const char *closing =
	    "HTTP/1.1 200 OK\r\ncontent-length:  2 \r\nConnection: close\r\n\r\nhi";

	CHECK(http(closing, &err, &close) == (long)strlen(closing) && !err && close);
	const char *nf = "HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nno!";

	CHECK(http(nf, &err, &close) == (long)strlen(nf) && err);
	const char *nobody = "HTTP/1.0 204 No Content\r\n\r\n";

	CHECK(http(nobody, &err, &close) == (long)strlen(nobody) && !err);
	/* pipelined: the first's length */
	char two[256];

	snprintf(two, sizeof(two), "%s%s", ok200, nf);
	CHECK(http(two, &err, &close) == (long)strlen(ok200) && !err);
	const char *bad[] = {"HTTP/2 200 OK\r\nContent-Length: 0\r\n\r\n",
			     "HTTP/1.1 200 OK\r\n\r\n",
			     "HTTP/1.1 100 Continue\r\n\r\n",
			     "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",
			     "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
			     "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx",
			     "HTTP/1.1 200 OK\r\nContent-Length: 999999999999\r\n\r\n",
			     "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
			     "garbage\r\n\r\n",
			     NULL};

	for (int i = 0; bad[i]; i++)
		CHECK(http(bad[i], &err, &close) == -1, "'%s' taken", bad[i]);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* random answers of both protocols, cut short and with random bytes changed: a length given is
 * within the buffer, and a buffer holding a whole unchanged answer gives its length */
static void check_random(void)
{
	static const char *pieces[] = {"+OK\r\n",
				       "-ERR e\r\n",
				       ":7\r\n",
				       "$3\r\nabc\r\n",
				       "$-1\r\n",
				       "*2\r\n",
				       "*0\r\n",
				       "HTTP/1.1 200 OK\r\n",
				       "Content-Length: 3\r\n",
				       "Connection: close\r\n",
				       "\r\n",
				       "abc",
				       "\r",
				       "\n",
				       "$"};
	const int np = sizeof(pieces) / sizeof(pieces[0]);

	for (int it = 0; it < 200000; it++) {
		char buf[512];
		size_t n = 0;
		int k = 1 + (int)(rnd() % 8);

		for (int i = 0; i < k; i++) {
			const char *p = pieces[rnd() % (uint64_t)np];
			size_t l = strlen(p);

			if (n + l > sizeof(buf))
				break;
			memcpy(buf + n, p, l);
			n += l;
		}
		if (rnd() % 2 && n)
			buf[rnd() % n] = (char)rnd();
		if (rnd() % 2 && n)
			n = rnd() % n;
		char *heap = malloc(n ? n : 1);
		bool e = false, c = false;

		memcpy(heap, buf, n);
		long r1 = reply_redis(heap, n, &e), r2 = reply_http(heap, n, &e, &c);

		CHECK(r1 >= -1 && r1 <= (long)n, "redis %ld of %zu", r1, n);
		CHECK(r2 >= -1 && r2 <= (long)n, "http %ld of %zu", r2, n);
		free(heap);
	}
}

int main(void)
{
	check_redis();
	check_http();
	check_random();
	return 0;
}
