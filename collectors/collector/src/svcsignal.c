/* svcsignal: see svcsignal.h. */
#include "svcsignal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *svc_reason_name(int reason)
{
	static const char *const names[SVC_REASONS] = {
	    "ok",      "connect",   "timeout", "http",	  "too large",	 "garbage",
	    "missing", "ambiguous", "reset",   "no work", "no baseline", "no cpu"};

	return reason >= 0 && reason < SVC_REASONS ? names[reason] : "?";
}

static int conf_error(struct svc_conf *c, char *err, size_t errsz, const char *fmt,
		      const char *what)
{
	snprintf(err, errsz, fmt, what);
	svc_conf_free(c);
	return -EINVAL;
}

/* http://ADDRESS[:PORT][/PATH] */
static int parse_url(struct svc_conf *c, const char *url, char *err, size_t errsz)
{
	const char *p, *addr_end, *port_at = NULL;
	char addr[64];
	bool v6;
	long port = 80;
	size_t n;

	if (strncmp(url, "http://", 7))
		return conf_error(c, err, errsz,
				  "scrape URL '%.200s': only http://ADDRESS:PORT/PATH", url);
	p = url + 7;
	v6 = *p == '[';
	if (v6) {
		addr_end = strchr(p, ']');
		if (!addr_end)
			return conf_error(c, err, errsz,
					  "scrape URL '%.200s': IPv6 address without ']'", url);
		n = (size_t)(addr_end - p - 1);
		if (n >= sizeof(addr))
			return conf_error(c, err, errsz, "scrape URL '%.200s': address too long",
					  url);
		memcpy(addr, p + 1, n);
		addr[n] = '\0';
		p = addr_end + 1;
	} else {
		n = strcspn(p, ":/?#");
		if (n >= sizeof(addr))
			return conf_error(c, err, errsz, "scrape URL '%.200s': address too long",
					  url);
		memcpy(addr, p, n);
		addr[n] = '\0';
		p += n;
	}
	if (*p == ':') {
		char *end;

		port_at = p + 1;
		errno = 0;
		port = strtol(port_at, &end, 10);
		if (end == port_at || errno || port < 1 || port > 65535 || (*end && *end != '/') ||
		    *port_at == '+' || *port_at == '-' || *port_at == ' ')
			return conf_error(c, err, errsz, "scrape URL '%.200s': port is not 1-65535",
					  url);
		p = end;
	}
	if (*p && *p != '/')
		return conf_error(c, err, errsz,
				  "scrape URL '%.200s': '/' expected after the address", url);
	snprintf(c->path, sizeof(c->path), "%s", *p ? p : "/metrics");
	if (strlen(p) >= sizeof(c->path))
		return conf_error(c, err, errsz, "scrape URL '%.200s': path too long", url);
	for (const char *q = c->path; *q; q++)
		if ((unsigned char)*q <= 0x20 || (unsigned char)*q >= 0x7f || *q == '#')
			return conf_error(c, err, errsz,
					  "scrape URL '%.200s': path holds a blank, a control "
					  "character, '#' or a byte above ASCII",
					  url);
	/* the address and port as an IPv6 or IPv4 socket address */
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&c->addr;
	struct sockaddr_in *a4 = (struct sockaddr_in *)&c->addr;
	int family = v6 ? AF_INET6 : AF_INET;

	memset(&c->addr, 0, sizeof(c->addr));
	c->addr.ss_family = (sa_family_t)family;
	*(v6 ? &a6->sin6_port : &a4->sin_port) = htons((uint16_t)port);
	c->addrlen = v6 ? sizeof(*a6) : sizeof(*a4);
	if (inet_pton(family, addr, v6 ? (void *)&a6->sin6_addr : (void *)&a4->sin_addr) != 1)
		return conf_error(c, err, errsz,
				  v6 ? "scrape URL '%.200s': not an IPv6 address (names are not "
				       "looked up)"
				     : "scrape URL '%.200s': not an IPv4 address (names are not "
				       "looked up)",
				  url);
	snprintf(c->host, sizeof(c->host), v6 ? "[%s]:%ld" : "%s:%ld", addr, port);
	return 0;
}

int svc_conf_parse(struct svc_conf *c, const char *url, const char *work, const char *latency,
		   const char *quantile, char *err, size_t errsz)
{
	char why[384];
	int rc;

	memset(c, 0, sizeof(*c));
	c->quantile = -1;
	if (!url || (!work && !latency))
		return conf_error(c, err, errsz, "%s",
				  "a scrape needs a URL and work= or latency=");
	if ((rc = parse_url(c, url, err, errsz)))
		return rc;
	if (work) {
		if (cpi2_prom_selector_parse(work, &c->work, why, sizeof(why)))
			return conf_error(c, err, errsz, "work: %s", why);
		c->has_work = true;
	}
	if (latency) {
		if (cpi2_prom_selector_parse(latency, &c->latency, why, sizeof(why)))
			return conf_error(c, err, errsz, "latency: %s", why);
		c->has_latency = true;
	}
	if (quantile) {
		if (!latency || cpi2_prom_parse_value(quantile, strlen(quantile), &c->quantile) ||
		    !(c->quantile >= 0 && c->quantile <= 1))
			return conf_error(c, err, errsz,
					  "latency_quantile '%.40s': a number in [0, 1], with "
					  "latency=",
					  quantile);
	}
	return 0;
}

void svc_conf_free(struct svc_conf *c)
{
	if (c->has_work)
		cpi2_prom_selector_free(&c->work);
	if (c->has_latency)
		cpi2_prom_selector_free(&c->latency);
	memset(c, 0, sizeof(*c));
	c->quantile = -1;
}

void svc_point_clear(struct svc_point *p)
{
	p->ok = false;
	p->reason = SVC_NO_BASELINE;
	p->has_cpu = false;
	p->n = 0;
}

void svc_point_free(struct svc_point *p)
{
	free(p->v);
	memset(p, 0, sizeof(*p));
}

struct extract {
	const struct svc_conf *c;
	struct svc_point *p;
	int reason;
	const char *why;
};

static int add(struct extract *x, int role, uint64_t key, double le, double value)
{
	struct svc_point *p = x->p;

	if (p->n == SVC_MAX_ENTRIES) {
		x->reason = SVC_TOO_LARGE;
		x->why = "more selected series than a scrape may give";
		return 1;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct svc_entry *v = realloc(p->v, cap * sizeof(*v));

		if (!v) {
			x->reason = SVC_TOO_LARGE;
			x->why = "out of memory";
			return 1;
		}
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = (struct svc_entry){key, le, value, (uint8_t)role};
	return 0;
}

static int take(void *arg, const struct cpi2_prom_sample *s)
{
	struct extract *x = arg;
	const struct svc_conf *c = x->c;
	const char *v;
	double d;

	if (c->has_work && s->type != CPI2_PROM_GAUGE &&
	    cpi2_prom_selector_match(&c->work, "", s) &&
	    add(x, SVC_WORK, cpi2_prom_labels_hash(s, NULL), 0, s->value))
		return 1;
	if (!c->has_latency)
		return 0;
	if (cpi2_prom_selector_match(&c->latency, "_sum", s))
		return add(x, SVC_SUM, cpi2_prom_labels_hash(s, NULL), 0, s->value);
	if (cpi2_prom_selector_match(&c->latency, "_count", s))
		return add(x, SVC_COUNT, cpi2_prom_labels_hash(s, NULL), 0, s->value);
	if (c->quantile < 0)
		return 0;
	if (cpi2_prom_selector_match(&c->latency, "_bucket", s) && (v = cpi2_prom_label(s, "le")) &&
	    !cpi2_prom_parse_value(v, strlen(v), &d) && !isnan(d))
		return add(x, SVC_BUCKET, cpi2_prom_labels_hash(s, "le"), d, s->value);
	if (cpi2_prom_selector_match(&c->latency, "", s) && (v = cpi2_prom_label(s, "quantile")) &&
	    !cpi2_prom_parse_value(v, strlen(v), &d) &&
	    fabs(d - c->quantile) <= 1e-9 * (fabs(d) + 1))
		return add(x, SVC_QUANTILE, cpi2_prom_labels_hash(s, "quantile"), 0, s->value);
	return 0;
}

static int by_series(const void *pa, const void *pb)
{
	const struct svc_entry *a = pa, *b = pb;

	if (a->role != b->role)
		return a->role < b->role ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	if (a->le != b->le)
		return a->le < b->le ? -1 : 1;
	return 0;
}

void svc_point_parse(const struct svc_conf *c, char *text, size_t len, struct svc_point *p,
		     char *detail, size_t dsz)
{
	struct extract x = {c, p, SVC_OK, NULL};
	char err[256];
	int rc;

	svc_point_clear(p);
	detail[0] = '\0';
	rc = cpi2_prom_parse(text, len, take, &x, err, sizeof(err));
	if (rc == -EBADMSG) {
		p->reason = SVC_GARBAGE;
		snprintf(detail, dsz, "%s", err);
		p->n = 0;
		return;
	}
	if (rc) {
		p->reason = x.reason ? x.reason : SVC_GARBAGE;
		snprintf(detail, dsz, "%s", x.why ? x.why : "cannot be read");
		p->n = 0;
		return;
	}
	if (p->n > 1)
		qsort(p->v, p->n, sizeof(*p->v), by_series);
	for (size_t i = 1; i < p->n; i++)
		if (!by_series(&p->v[i - 1], &p->v[i])) {
			p->reason = SVC_GARBAGE;
			snprintf(detail, dsz, "a selected series given twice");
			p->n = 0;
			return;
		}
	p->ok = true;
	p->reason = SVC_OK;
}

/* The entries of role in p: [*lo, *hi). */
static void role_range(const struct svc_point *p, int role, size_t *lo, size_t *hi)
{
	size_t i = 0;

	while (i < p->n && p->v[i].role < role)
		i++;
	*lo = i;
	while (i < p->n && p->v[i].role == role)
		i++;
	*hi = i;
}

/* the sum of the increases of role's series in both points: SVC_OK, or SVC_MISSING (b has
 * none), SVC_NO_BASELINE (none in both), SVC_RESET, SVC_GARBAGE (not finite) */
static int increase(const struct svc_point *a, const struct svc_point *b, int role, double *sum)
{
	size_t alo, ahi, blo, bhi, i, j;
	bool common = false;

	role_range(a, role, &alo, &ahi);
	role_range(b, role, &blo, &bhi);
	if (blo == bhi)
		return SVC_MISSING;
	*sum = 0;
	for (i = alo, j = blo; i < ahi && j < bhi;) {
		int cmp = by_series(&a->v[i], &b->v[j]);

		if (cmp < 0) {
			i++;
		} else if (cmp > 0) {
			j++;
		} else {
			double d = b->v[j].value - a->v[i].value;

			if (!isfinite(d))
				return SVC_GARBAGE;
			if (d < 0)
				return SVC_RESET;
			*sum += d;
			common = true;
			i++;
			j++;
		}
	}
	return common ? SVC_OK : SVC_NO_BASELINE;
}

/* PromQL's histogram_quantile over the buckets' increases between a and b */
static int histogram_quantile(const struct svc_point *a, const struct svc_point *b, double q,
			      double *out)
{
	size_t alo, ahi, blo, bhi, i, j, n = 0;
	struct {
		double le, count;
	} * bk;
	int rc = SVC_OK;

	role_range(a, SVC_BUCKET, &alo, &ahi);
	role_range(b, SVC_BUCKET, &blo, &bhi);
	if (blo == bhi)
		return SVC_MISSING;
	if (!(bk = malloc((bhi - blo) * sizeof(*bk))))
		return SVC_TOO_LARGE;
	for (i = alo, j = blo; i < ahi && j < bhi;) {
		int cmp = by_series(&a->v[i], &b->v[j]);

		if (cmp < 0) {
			i++;
		} else if (cmp > 0) {
			j++;
		} else {
			double d = b->v[j].value - a->v[i].value;

			if (!isfinite(d)) {
				rc = SVC_GARBAGE;
				goto out;
			}
			if (d < 0) {
				rc = SVC_RESET;
				goto out;
			}
			bk[n].le = b->v[j].le;
			bk[n].count = d;
			n++;
			i++;
			j++;
		}
	}
	if (!n) {
		rc = SVC_NO_BASELINE;
		goto out;
	}
	/* the series' buckets summed by upper bound (sum by (le)), in order of le */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && bk[j - 1].le > bk[j].le; j--) {
			double le = bk[j].le, cnt = bk[j].count;

			bk[j] = bk[j - 1];
			bk[j - 1].le = le;
			bk[j - 1].count = cnt;
		}
	for (i = 1, j = 0; i < n; i++) {
		if (bk[i].le == bk[j].le)
			bk[j].count += bk[i].count;
		else
			bk[++j] = bk[i];
	}
	n = j + 1;
	if (n < 2 || !isinf(bk[n - 1].le) || bk[n - 1].le < 0) {
		rc = SVC_MISSING; /* no +Inf bucket, or nothing to interpolate in */
		goto out;
	}
	for (i = 1; i < n; i++) /* counts are cumulative: a lower one is raised, as PromQL does */
		if (bk[i].count < bk[i - 1].count)
			bk[i].count = bk[i - 1].count;
	double total = bk[n - 1].count, rank = q * total;

	if (total <= 0) {
		rc = SVC_NO_WORK;
		goto out;
	}
	for (i = 0; i < n - 1 && bk[i].count < rank; i++)
		;
	if (i == n - 1) {
		*out = bk[n - 2].le;
	} else if (i == 0 && bk[0].le <= 0) {
		*out = bk[0].le;
	} else {
		double start = i ? bk[i - 1].le : 0, count = bk[i].count;

		if (i) {
			count -= bk[i - 1].count;
			rank -= bk[i - 1].count;
		}
		*out = start + (bk[i].le - start) * (count > 0 ? rank / count : 0);
	}
out:
	free(bk);
	return rc;
}

static int latency(const struct svc_conf *c, const struct svc_point *a, const struct svc_point *b,
		   double *out)
{
	double sum, count;
	size_t lo, hi;
	int rc;

	if (c->quantile >= 0) {
		role_range(b, SVC_BUCKET, &lo, &hi);
		if (lo < hi) {
			if (!a)
				return SVC_NO_BASELINE;
			return histogram_quantile(a, b, c->quantile, out);
		}
		role_range(b, SVC_QUANTILE, &lo, &hi);
		if (hi - lo > 1)
			return SVC_AMBIGUOUS;
		if (lo == hi)
			return SVC_MISSING;
		if (isnan(b->v[lo].value))
			return SVC_NO_WORK; /* a summary says NaN when nothing was observed */
		if (!isfinite(b->v[lo].value))
			return SVC_GARBAGE;
		*out = b->v[lo].value;
		return SVC_OK;
	}
	if (!a) {
		role_range(b, SVC_COUNT, &lo, &hi);
		return lo == hi ? SVC_MISSING : SVC_NO_BASELINE;
	}
	if ((rc = increase(a, b, SVC_COUNT, &count)) || (rc = increase(a, b, SVC_SUM, &sum)))
		return rc;
	if (count <= 0)
		return SVC_NO_WORK;
	*out = sum / count;
	return isfinite(*out) ? SVC_OK : SVC_GARBAGE;
}

void svc_compute(const struct svc_conf *c, const struct svc_point *a, const struct svc_point *b,
		 struct svc_values *out)
{
	int base = !a || !a->ok ? SVC_NO_BASELINE : SVC_OK;

	memset(out, 0, sizeof(*out));
	if (!a || !a->ok)
		a = NULL;
	if (!b->ok) {
		out->cpu_per_op_reason = out->latency_reason = b->reason;
	} else {
		if (c->has_work) {
			double work;
			int rc = a ? increase(a, b, SVC_WORK, &work) : SVC_OK;

			if (!a) {
				size_t lo, hi;

				role_range(b, SVC_WORK, &lo, &hi);
				rc = lo == hi ? SVC_MISSING : base;
			} else if (rc == SVC_OK && work <= 0) {
				rc = SVC_NO_WORK;
			} else if (rc == SVC_OK && (!a->has_cpu || !b->has_cpu)) {
				rc = SVC_NO_CPU;
			} else if (rc == SVC_OK && b->cpu_ns < a->cpu_ns) {
				rc = SVC_RESET;
			}
			if (rc == SVC_OK) {
				out->cpu_per_op = (double)(b->cpu_ns - a->cpu_ns) / 1e9 / work;
				out->has_cpu_per_op = isfinite(out->cpu_per_op);
				rc = out->has_cpu_per_op ? SVC_OK : SVC_GARBAGE;
			}
			out->cpu_per_op_reason = rc;
		}
		if (c->has_latency) {
			out->latency_reason = latency(c, a, b, &out->latency);
			out->has_latency = out->latency_reason == SVC_OK;
		}
	}
	if (!c->has_work)
		out->cpu_per_op_reason = SVC_OK;
	if (!c->has_latency)
		out->latency_reason = SVC_OK;
}
