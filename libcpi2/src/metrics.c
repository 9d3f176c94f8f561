/* metrics: see cpi2/metrics.h. */
#include <cpi2/metrics.h>

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void put(struct cpi2_metrics *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct cpi2_metrics *m, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (m->failed)
		return;
	for (;;) {
		size_t left = m->cap - m->len;

		va_start(ap, fmt);
		n = vsnprintf(m->text ? m->text + m->len : NULL, left, fmt, ap);
		va_end(ap);
		if (n < 0) {
			m->failed = 1;
			return;
		}
		if ((size_t)n < left) {
			m->len += (size_t)n;
			return;
		}
		size_t cap = m->cap ? m->cap * 2 : 4096;
		while (cap - m->len <= (size_t)n)
			cap *= 2;
		char *t = realloc(m->text, cap);

		if (!t) {
			m->failed = 1;
			return;
		}
		m->text = t;
		m->cap = cap;
	}
}

void cpi2_metrics_reset(struct cpi2_metrics *m)
{
	m->len = 0;
	m->failed = 0;
	if (m->text)
		m->text[0] = '\0';
}

void cpi2_metrics_free(struct cpi2_metrics *m)
{
	free(m->text);
	memset(m, 0, sizeof(*m));
}

void cpi2_metrics_append(struct cpi2_metrics *m, const char *text, size_t len)
{
	put(m, "%.*s", (int)len, text ? text : "");
}

void cpi2_metrics_family(struct cpi2_metrics *m, const char *name, const char *type,
			 const char *help)
{
	put(m, "# HELP %s ", name);
	for (const char *c = help; *c; c++) /* the format's escapes of a HELP text */
		put(m, "%s", *c == '\\' ? "\\\\" : *c == '\n' ? "\\n" : (char[]){*c, 0});
	put(m, "\n# TYPE %s %s\n", name, type);
}

static void value(struct cpi2_metrics *m, double v)
{
	if (isnan(v))
		put(m, " NaN\n");
	else if (isinf(v))
		put(m, " %s\n", v > 0 ? "+Inf" : "-Inf");
	else if (v == (double)(int64_t)v && fabs(v) < 9e15)
		put(m, " %lld\n", (long long)v);
	else {
		char t[32];

		/* the shortest of 15 and 17 digits that reads back as v */
		snprintf(t, sizeof(t), "%.15g", v);
		if (strtod(t, NULL) != v)
			snprintf(t, sizeof(t), "%.17g", v);
		put(m, " %s\n", t);
	}
}

static void label_value(struct cpi2_metrics *m, const char *v)
{
	for (; *v; v++)
		put(m, "%s",
		    *v == '\\'	 ? "\\\\"
		    : *v == '"'	 ? "\\\""
		    : *v == '\n' ? "\\n"
				 : (char[]){*v, 0});
}

void cpi2_metrics_value(struct cpi2_metrics *m, const char *name, const char *const *labels,
			double v)
{
	put(m, "%s", name);
	if (labels && labels[0]) {
		for (int i = 0; labels[i] && labels[i + 1]; i += 2) {
			put(m, "%s%s=\"", i ? "," : "{", labels[i]);
			label_value(m, labels[i + 1]);
			put(m, "\"");
		}
		put(m, "}");
	}
	value(m, v);
}

void cpi2_histogram_observe(struct cpi2_histogram *h, double v)
{
	int i = 0;

	while (i < h->n_bounds && v > h->bounds[i])
		i++;
	h->counts[i]++;
	h->count++;
	h->sum += v;
}

void cpi2_metrics_histogram(struct cpi2_metrics *m, const char *name, const char *help,
			    const struct cpi2_histogram *h)
{
	char series[256], le[32];
	uint64_t cum = 0;

	cpi2_metrics_family(m, name, "histogram", help);
	snprintf(series, sizeof(series), "%s_bucket", name);
	for (int i = 0; i <= h->n_bounds; i++) {
		cum += h->counts[i];
		if (i < h->n_bounds)
			snprintf(le, sizeof(le), "%g", h->bounds[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		cpi2_metrics_value(m, series, (const char *const[]){"le", le, NULL}, (double)cum);
	}
	snprintf(series, sizeof(series), "%s_sum", name);
	cpi2_metrics_value(m, series, NULL, h->sum);
	snprintf(series, sizeof(series), "%s_count", name);
	cpi2_metrics_value(m, series, NULL, (double)h->count);
}
