/* httpd: see cpi2/httpd.h. */
#include <cpi2/httpd.h>

#include <cpi2/clock.h>
#include <cpi2/config.h>
#include <cpi2/log.h>
#include <cpi2/metrics.h>

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

/* --- the request parser ---------------------------------------------------------------------- */

static bool tchar(char c) /* a token's characters (RFC 9110 5.6.2) */
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* One header line (without its end): "name: value". Returns 0 or -400. */
static int header(const char *s, size_t n)
{
	size_t i = 0, v;

	while (i < n && tchar(s[i]))
		i++;
	if (i == 0 || i >= n || s[i] != ':')
		return -400; /* no name, a space before the colon, or a folded line */
	for (v = i + 1; v < n; v++)
		if (((unsigned char)s[v] < 0x20 && s[v] != '\t') || s[v] == 0x7f)
			return -400;
	if (i == 17 && !strncasecmp(s, "transfer-encoding", 17))
		return -400; /* a body: none is read */
	if (i == 14 && !strncasecmp(s, "content-length", 14)) {
		for (v = i + 1; v < n; v++)
			if (s[v] != ' ' && s[v] != '\t' && s[v] != '0')
				return -400;
	}
	return 0;
}

static int request_line(const char *s, size_t n, struct cpi2_http_request *req)
{
	const char *sp1 = memchr(s, ' ', n), *sp2, *target, *version, *end;
	size_t mlen, tlen, vlen, plen;

	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return -400;
	if (!sp1)
		return -400;
	mlen = (size_t)(sp1 - s);
	target = sp1 + 1;
	sp2 = memchr(target, ' ', n - mlen - 1);
	if (!sp2)
		return -400;
	tlen = (size_t)(sp2 - target);
	version = sp2 + 1;
	vlen = n - (size_t)(version - s);
	if (mlen == 0 || tlen == 0 || vlen == 0 || memchr(version, ' ', vlen))
		return -400;
	for (size_t i = 0; i < mlen; i++)
		if (!tchar(s[i]))
			return -400;
	if (!(vlen == 8 && (!memcmp(version, "HTTP/1.1", 8) || !memcmp(version, "HTTP/1.0", 8))))
		return vlen > 5 && !memcmp(version, "HTTP/", 5) ? -505 : -400;
	if (target[0] != '/')
		return -400; /* origin form only */
	if (mlen == 3 && !memcmp(s, "GET", 3))
		req->method = CPI2_HTTP_GET;
	else if (mlen == 4 && !memcmp(s, "HEAD", 4))
		req->method = CPI2_HTTP_HEAD;
	else
		return -405;
	end = target;
	while (end < sp2 && *end != '?' && *end != '#')
		end++;
	plen = (size_t)(end - target);
	if (plen >= sizeof(req->path))
		return -414;
	memcpy(req->path, target, plen);
	req->path[plen] = '\0';
	return 0;
}

int cpi2_http_parse_request(const char *buf, size_t len, struct cpi2_http_request *req)
{
	size_t start = 0, lines = 0;
	int rc;

	memset(req, 0, sizeof(*req));
	for (size_t i = 0; i < len && i < CPI2_HTTPD_MAX_REQUEST; i++) {
		if (buf[i] == '\0')
			return -400;
		if (buf[i] != '\n')
			continue;
		size_t n = i - start;

		if (n && buf[i - 1] == '\r')
			n--;
		if (memchr(buf + start, '\r', n))
			return -400; /* a CR alone */
		if (n == 0 && lines == 0)
			return -400; /* no request line */
		if (n == 0)
			return (int)(i + 1); /* the empty line: whole */
		rc = lines == 0 ? request_line(buf, n, req) : header(buf + start, n);
		if (rc)
			return rc;
		lines++;
		start = i + 1;
	}
	return len >= CPI2_HTTPD_MAX_REQUEST ? -431 : 0;
}

/* --- the server ---------------------------------------------------------------------------- */

struct client {
	int fd; /* -1: a free slot */
	int64_t deadline_us;
	size_t in_len;
	char in[CPI2_HTTPD_MAX_REQUEST];
	char *out;
	size_t out_len, out_off;
};

struct cpi2_httpd {
	int listen_fd, stop_pipe[2], port;
	pthread_t thread;
	char program[64];
	int64_t bound_us;
	_Atomic int64_t alive_us; /* CLOCK_MONOTONIC */
	pthread_mutex_t lock;	  /* text */
	char *text;
	size_t text_len;
	struct client clients[CPI2_HTTPD_MAX_CLIENTS];
	struct cpi2_metrics body; /* the thread's */
};

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 503:
		return "Service Unavailable";
	case 505:
		return "HTTP Version Not Supported";
	default:
		return "Internal Server Error";
	}
}

static double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static double resident_bytes(void)
{
	long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%*d %ld", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return (double)pages * (double)sysconf(_SC_PAGESIZE);
}

/* The metrics the server adds to the agent's: the process's and the health it judges. */
static void process_metrics(struct cpi2_httpd *h, double age_s)
{
	struct cpi2_metrics *m = &h->body;
	char name[128];

	cpi2_metrics_family(m, "process_cpu_seconds_total", "counter",
			    "User and system CPU time of the process, in seconds");
	cpi2_metrics_value(m, "process_cpu_seconds_total", NULL, cpu_seconds());
	cpi2_metrics_family(m, "process_resident_memory_bytes", "gauge",
			    "Resident memory of the process, in bytes");
	cpi2_metrics_value(m, "process_resident_memory_bytes", NULL, resident_bytes());
	cpi2_metrics_family(m, "cpi2_build_info", "gauge", "The program and its version, always 1");
	cpi2_metrics_value(
	    m, "cpi2_build_info",
	    (const char *const[]){"program", h->program, "version", cpi2_version, NULL}, 1);
	snprintf(name, sizeof(name), "cpi2_%s_progress_age_seconds", h->program);
	cpi2_metrics_family(m, name, "gauge",
			    "Seconds since the last completed window or poll (since the start "
			    "before the first); /healthz fails above the bound");
	cpi2_metrics_value(m, name, NULL, age_s);
	snprintf(name, sizeof(name), "cpi2_%s_progress_bound_seconds", h->program);
	cpi2_metrics_family(m, name, "gauge", "The bound of /healthz on the progress age");
	cpi2_metrics_value(m, name, NULL, (double)h->bound_us / 1e6);
}

/* The answer to a request (rc: the parser's), into c->out. */
static void answer(struct cpi2_httpd *h, struct client *c, int rc,
		   const struct cpi2_http_request *req)
{
	struct cpi2_metrics *m = &h->body;
	const char *type = "text/plain; charset=utf-8", *extra = "";
	int status = rc < 0 ? -rc : 200;
	bool head = rc > 0 && req->method == CPI2_HTTP_HEAD;
	double age_s = (double)(cpi2_clock_us(CLOCK_MONOTONIC) - atomic_load(&h->alive_us)) / 1e6,
	       bound_s = (double)h->bound_us / 1e6;
	char line[256];

	cpi2_metrics_reset(m);
	if (rc > 0 && !strcmp(req->path, "/metrics")) {
		type = "text/plain; version=0.0.4; charset=utf-8";
		pthread_mutex_lock(&h->lock);
		cpi2_metrics_append(m, h->text, h->text_len);
		pthread_mutex_unlock(&h->lock);
		process_metrics(h, age_s);
	} else if (rc > 0 && !strcmp(req->path, "/healthz")) {
		if (age_s <= bound_s) {
			snprintf(line, sizeof(line), "ok: last progress %.1f s ago (bound %g s)\n",
				 age_s, bound_s);
		} else {
			status = 503;
			snprintf(line, sizeof(line),
				 "unhealthy: no window or poll completed for %.1f s (bound %g s)\n",
				 age_s, bound_s);
		}
		cpi2_metrics_append(m, line, strlen(line));
	} else if (rc > 0) {
		status = 404;
	}
	if (status == 405)
		extra = "Allow: GET, HEAD\r\n";
	if (status != 200 && status != 503) {
		snprintf(line, sizeof(line), "%d %s\n", status, reason(status));
		cpi2_metrics_reset(m);
		cpi2_metrics_append(m, line, strlen(line));
	}
	if (m->failed) {
		status = 500;
		m->len = 0;
	}
	snprintf(line, sizeof(line),
		 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: "
		 "close\r\n\r\n",
		 status, reason(status), type, m->len, extra);
	size_t hl = strlen(line), bl = head ? 0 : m->len;

	c->out_off = c->out_len = 0;
	c->out = malloc(hl + bl);
	if (!c->out)
		return; /* closed without an answer */
	memcpy(c->out, line, hl);
	if (bl)
		memcpy(c->out + hl, m->text, bl);
	c->out_len = hl + bl;
}

static void drop(struct client *c)
{
	if (c->fd >= 0)
		close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->in_len = c->out_len = c->out_off = 0;
}

/* Read what came; answer once the request is whole or refused. */
static void on_readable(struct cpi2_httpd *h, struct client *c)
{
	struct cpi2_http_request req;
	ssize_t n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len, MSG_DONTWAIT);
	int rc;

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c); /* gone before a whole request */
		return;
	}
	c->in_len += (size_t)n;
	rc = cpi2_http_parse_request(c->in, c->in_len, &req);
	if (rc == 0)
		return;
	answer(h, c, rc, &req);
	if (!c->out)
		drop(c);
}

static void on_writable(struct client *c)
{
	ssize_t n =
	    send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		drop(c);
		return;
	}
	c->out_off += (size_t)n;
	if (c->out_off == c->out_len) {
		shutdown(c->fd, SHUT_WR);
		drop(c);
	}
}

static void *serve(void *arg)
{
	struct cpi2_httpd *h = arg;
	struct pollfd fds[CPI2_HTTPD_MAX_CLIENTS + 2];
	struct client *who[CPI2_HTTPD_MAX_CLIENTS + 2];
	int64_t accept_after_us = 0; /* after a failed accept (no descriptor left): a pause */
	bool said = false;

	for (;;) {
		int64_t now = cpi2_clock_us(CLOCK_MONOTONIC), wait_us = 1000000;
		struct client *free_slot = NULL;
		int n = 0;

		fds[n++] = (struct pollfd){.fd = h->stop_pipe[0], .events = POLLIN};
		for (int i = 0; i < CPI2_HTTPD_MAX_CLIENTS; i++) {
			struct client *c = &h->clients[i];

			if (c->fd < 0) {
				free_slot = free_slot ? free_slot : c;
				continue;
			}
			if (now >= c->deadline_us) {
				drop(c); /* too slow: the slot goes to the next */
				free_slot = free_slot ? free_slot : c;
				continue;
			}
			if (c->deadline_us - now < wait_us)
				wait_us = c->deadline_us - now;
			who[n] = c;
			fds[n++] =
			    (struct pollfd){.fd = c->fd, .events = c->out ? POLLOUT : POLLIN};
		}
		if (free_slot && now >= accept_after_us) {
			who[n] = NULL;
			fds[n++] = (struct pollfd){.fd = h->listen_fd, .events = POLLIN};
		} else if (free_slot && accept_after_us - now < wait_us) {
			wait_us = accept_after_us - now;
		}
		if (poll(fds, (nfds_t)n, (int)((wait_us + 999) / 1000)) < 0) {
			if (errno == EINTR)
				continue;
			cpi2_log(CPI2_LOG_ERR, h->program, "metrics server: poll: %s",
				 strerror(errno));
			return NULL;
		}
		if (fds[0].revents)
			return NULL; /* cpi2_httpd_stop */
		for (int i = 1; i < n; i++) {
			if (!fds[i].revents)
				continue;
			if (!who[i]) {
				int fd =
				    accept4(h->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

				if (fd >= 0) {
					free_slot->fd = fd;
					free_slot->deadline_us =
					    cpi2_clock_us(CLOCK_MONOTONIC) +
					    (int64_t)CPI2_HTTPD_TIMEOUT_MS * 1000;
				} else if (errno != EAGAIN && errno != EINTR &&
					   errno != ECONNABORTED) {
					/* EMFILE and the like: the connection stays queued, and a
					 * listen socket polled again at once would spin */
					accept_after_us = cpi2_clock_us(CLOCK_MONOTONIC) + 100000;
					if (!said)
						cpi2_log(CPI2_LOG_WARN, h->program,
							 "metrics server: accept: %s (tried again "
							 "every 100 ms)",
							 strerror(errno));
					said = true;
				}
			} else if (who[i]->out) {
				on_writable(who[i]);
			} else {
				on_readable(h, who[i]);
			}
		}
	}
}

/* "host:port", ":port" or "[v6]:port" into host ("" for every address) and port. */
static int split_address(const char *a, char *host, size_t hsz, char *port, size_t psz, char *err,
			 size_t errsz)
{
	const char *h = a, *p;
	size_t hl;

	if (a[0] == '[') {
		const char *close = strchr(a, ']');

		if (!close || close[1] != ':')
			goto bad;
		h = a + 1;
		hl = (size_t)(close - h);
		p = close + 2;
	} else {
		p = strrchr(a, ':');
		if (!p || memchr(a, ':', (size_t)(p - a)))
			goto bad; /* no port, or an IPv6 address without its brackets */
		hl = (size_t)(p - a);
		p++;
	}
	if (hl >= hsz || !*p || strlen(p) > 5 || strspn(p, "0123456789") != strlen(p) ||
	    atoi(p) > 65535 || strlen(p) >= psz)
		goto bad;
	memcpy(host, h, hl);
	host[hl] = '\0';
	strcpy(port, p);
	return 0;
bad:
	snprintf(err, errsz,
		 "metrics_address '%s': want HOST:PORT, :PORT or [IPv6]:PORT (port 0-65535)", a);
	return -EINVAL;
}

int cpi2_httpd_start(struct cpi2_httpd **out, const char *address, const char *program,
		     double health_bound_s, char *err, size_t errsz)
{
	struct addrinfo hints = {.ai_family = AF_UNSPEC,
				 .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV},
			*res = NULL, *ai;
	struct sockaddr_storage sa;
	socklen_t salen = sizeof(sa);
	char host[256], port[8];
	sigset_t all, old;
	struct cpi2_httpd *h;
	int rc, one = 1, saved = 0;

	*out = NULL;
	if (split_address(address, host, sizeof(host), port, sizeof(port), err, errsz))
		return -EINVAL;
	if (!(health_bound_s > 0)) {
		snprintf(err, errsz, "the health bound must be above 0 s");
		return -EINVAL;
	}
	rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(err, errsz, "metrics_address '%s': %s", address, gai_strerror(rc));
		return -EINVAL;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		freeaddrinfo(res);
		snprintf(err, errsz, "metrics server: out of memory");
		return -ENOMEM;
	}
	h->listen_fd = h->stop_pipe[0] = h->stop_pipe[1] = -1;
	for (ai = res; ai && h->listen_fd < 0; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0) {
			saved = errno;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0) {
			h->listen_fd = fd;
			break;
		}
		saved = errno;
		close(fd);
	}
	freeaddrinfo(res);
	if (h->listen_fd < 0) {
		snprintf(err, errsz, "metrics_address '%s': %s", address, strerror(saved));
		free(h);
		return -(saved ? saved : EADDRNOTAVAIL);
	}
	if (getsockname(h->listen_fd, (struct sockaddr *)&sa, &salen) == 0)
		h->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
							 : ((struct sockaddr_in *)&sa)->sin_port);
	snprintf(h->program, sizeof(h->program), "%s", program);
	h->bound_us = (int64_t)(health_bound_s * 1e6);
	atomic_store(&h->alive_us, cpi2_clock_us(CLOCK_MONOTONIC));
	for (int i = 0; i < CPI2_HTTPD_MAX_CLIENTS; i++)
		h->clients[i].fd = -1;
	pthread_mutex_init(&h->lock, NULL);
	if (pipe2(h->stop_pipe, O_CLOEXEC | O_NONBLOCK)) {
		saved = errno;
		goto fail;
	}
	/* the agent's signals stay the agent's: its loop sees SIGTERM at once */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&h->thread, NULL, serve, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		saved = rc;
		goto fail;
	}
	cpi2_log(CPI2_LOG_INFO, program,
		 "serving /metrics and /healthz on %s (port %d), healthy "
		 "while a window or poll completes every %g s",
		 address, h->port, health_bound_s);
	*out = h;
	return 0;
fail:
	snprintf(err, errsz, "metrics server: %s", strerror(saved));
	if (h->stop_pipe[0] >= 0) {
		close(h->stop_pipe[0]);
		close(h->stop_pipe[1]);
	}
	close(h->listen_fd);
	pthread_mutex_destroy(&h->lock);
	free(h);
	return -saved;
}

int cpi2_httpd_port(const struct cpi2_httpd *h)
{
	return h->port;
}

int cpi2_httpd_publish(struct cpi2_httpd *h, const char *text, size_t len)
{
	char *copy = malloc(len + 1), *old;

	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&h->lock);
	old = h->text;
	h->text = copy;
	h->text_len = len;
	pthread_mutex_unlock(&h->lock);
	free(old);
	return 0;
}

void cpi2_httpd_alive(struct cpi2_httpd *h)
{
	atomic_store(&h->alive_us, cpi2_clock_us(CLOCK_MONOTONIC));
}

void cpi2_httpd_stop(struct cpi2_httpd *h)
{
	if (!h)
		return;
	if (write(h->stop_pipe[1], "x", 1) != 1)
		cpi2_log(CPI2_LOG_WARN, h->program, "metrics server: cannot ask it to stop");
	else
		pthread_join(h->thread, NULL);
	for (int i = 0; i < CPI2_HTTPD_MAX_CLIENTS; i++)
		drop(&h->clients[i]);
	close(h->stop_pipe[0]);
	close(h->stop_pipe[1]);
	close(h->listen_fd);
	pthread_mutex_destroy(&h->lock);
	free(h->text);
	cpi2_metrics_free(&h->body);
	free(h);
}
