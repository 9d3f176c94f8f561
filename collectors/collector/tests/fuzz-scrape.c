/* Fuzz target: what a metrics endpoint answers, from the bytes on the socket to the sample's
 * values. An input is a flags byte, then two answers separated by the bytes FF FE (the scrapes
 * that begin and end a window; one answer: no baseline). Each goes through http_parse (flags
 * bit 0: the peer closed after it) and, when it is a whole answer, svc_point_parse under three
 * settings (a work counter with label matchers and a histogram's mean; a histogram quantile; a
 * summary quantile), then svc_compute. The first line of the input is also parsed as a
 * selector.
 *
 * Invariants (abort on violation): a body lies inside the answer; a point's series are sorted
 * and unique; a value given is finite, a value not given has a reason; and nothing leaks
 * (libFuzzer's leak detection). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cpi2/log.h>
#include <cpi2/promtext.h>

#include "../src/scrape.h"
#include "../src/svcsignal.h"

static struct svc_conf confs[3];

static void setup(void)
{
	char err[256];

	cpi2_log_set_level(CPI2_LOG_ERR);
	if (svc_conf_parse(&confs[0], "http://127.0.0.1:9121/metrics",
			   "w{cmd=~\"get|set\",x!=\"1\"}", "h", NULL, err, sizeof(err)) ||
	    svc_conf_parse(&confs[1], "http://127.0.0.1/", "h_count", "h{a!~\"z.*\"}", "0.9", err,
			   sizeof(err)) ||
	    svc_conf_parse(&confs[2], "http://[::1]:1/m", NULL, "s", "0.99", err, sizeof(err)))
		abort();
}

static void check_point(const struct svc_point *p)
{
	for (size_t i = 1; i < p->n; i++) {
		const struct svc_entry *a = &p->v[i - 1], *b = &p->v[i];

		if (a->role > b->role || (a->role == b->role && a->key > b->key) ||
		    (a->role == b->role && a->key == b->key && !(a->le < b->le)))
			abort();
	}
	if (!p->ok && p->n)
		abort();
}

/* one answer into points under each setting; false when it is no whole answer */
static bool answer(const uint8_t *data, size_t len, bool eof, struct svc_point pts[3])
{
	char *buf = malloc(len + 1), *body = NULL, detail[160];
	size_t body_len = 0;
	int reason;
	bool ok = false;

	memcpy(buf, data, len);
	if (http_parse(buf, len, eof, 1 << 16, &body, &body_len, &reason, detail, sizeof(detail)) ==
	    HTTP_DONE) {
		if (body < buf || body + body_len > buf + len)
			abort();
		for (int k = 0; k < 3; k++) {
			char *copy = malloc(body_len + 1);

			memcpy(copy, body, body_len);
			svc_point_parse(&confs[k], copy, body_len, &pts[k], detail, sizeof(detail));
			pts[k].has_cpu = true;
			pts[k].cpu_ns = body_len * 1000;
			check_point(&pts[k]);
			free(copy);
		}
		ok = true;
	}
	free(buf);
	return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool ready;
	struct svc_point a[3] = {{0}}, b[3] = {{0}};
	struct svc_values v;
	const uint8_t *sep;
	size_t la;
	bool has_a, has_b;

	if (!ready) {
		setup();
		ready = true;
	}
	if (size < 1)
		return 0;
	/* the first line as a selector */
	{
		size_t n = 0;
		char sel_text[256];
		struct cpi2_prom_selector sel;
		char err[256];

		while (n + 1 < size && n < sizeof(sel_text) - 1 && data[n + 1] != '\n' &&
		       data[n + 1])
			n++;
		memcpy(sel_text, data + 1, n);
		sel_text[n] = '\0';
		if (cpi2_prom_selector_parse(sel_text, &sel, err, sizeof(err)) == 0)
			cpi2_prom_selector_free(&sel);
	}
	sep = memmem(data + 1, size - 1, "\xff\xfe", 2);
	la = sep ? (size_t)(sep - data - 1) : size - 1;
	has_a = answer(data + 1, la, data[0] & 1, a);
	has_b = sep && answer(sep + 2, size - (size_t)(sep + 2 - data), data[0] & 2, b);
	for (int k = 0; k < 3; k++) {
		const struct svc_point *pa = has_a ? &a[k] : NULL, *pb = has_b ? &b[k] : &a[k];

		if (!has_b && !has_a)
			break;
		if (!has_b)
			pa = NULL;
		svc_compute(&confs[k], pa, pb, &v);
		if ((v.has_cpu_per_op && !isfinite(v.cpu_per_op)) ||
		    (v.has_latency && !isfinite(v.latency)))
			abort();
		if ((confs[k].has_work && !v.has_cpu_per_op && v.cpu_per_op_reason == SVC_OK) ||
		    (confs[k].has_latency && !v.has_latency && v.latency_reason == SVC_OK))
			abort();
	}
	for (int k = 0; k < 3; k++) {
		svc_point_free(&a[k]);
		svc_point_free(&b[k]);
	}
	return 0;
}
