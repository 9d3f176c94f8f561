/* promtext: see cpi2/promtext.h. The grammar is the text exposition format's
 * (prometheus.io/docs/instrumenting/exposition_formats): per line, optional blanks, then a
 * comment ("# HELP name text", "# TYPE name type", or "#" anything) or a sample: a metric name,
 * optional labels in braces, blanks, a value, optionally blanks and a timestamp in milliseconds,
 * optional blanks. Blanks are spaces and tabs; a line ends with a line feed (a carriage return
 * before it is let through). */
#include <cpi2/promtext.h>
#include <cpi2/wire.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const char *cpi2_prom_type_name(enum cpi2_prom_type t)
{
	static const char *const names[] = {"untyped", "counter", "gauge", "histogram", "summary"};

	return (unsigned)t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static bool blank(char c)
{
	return c == ' ' || c == '\t';
}

static bool name_start(char c, bool colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}

static bool name_char(char c, bool colon)
{
	return name_start(c, colon) || (c >= '0' && c <= '9');
}

static char *skip_blanks(char *p, const char *e)
{
	while (p < e && blank(*p))
		p++;
	return p;
}

/* the end of a name ([a-zA-Z_:][a-zA-Z0-9_:]*, no ':' in label names) at p; p when none */
static char *scan_name(char *p, const char *e, bool colon)
{
	if (p >= e || !name_start(*p, colon))
		return p;
	while (p < e && name_char(*p, colon))
		p++;
	return p;
}

/* A quoted string at *pp (which is '"'): escapes \\, \" and \n undone in place; the value is
 * NUL-terminated where it now ends. Returns the value or NULL with a reason (why). */
static char *scan_quoted(char **pp, const char *e, size_t *len, const char **why)
{
	char *r = *pp + 1, *w = r, *start = r;

	for (;;) {
		if (r >= e) {
			*why = "a quoted string does not end on its line";
			return NULL;
		}
		if (*r == '"')
			break;
		if (*r == '\\') {
			if (r + 1 >= e) {
				*why = "a quoted string does not end on its line";
				return NULL;
			}
			switch (r[1]) {
			case '\\':
				*w++ = '\\';
				break;
			case '"':
				*w++ = '"';
				break;
			case 'n':
				*w++ = '\n';
				break;
			default:
				*why = "an escape other than \\\\, \\\" or \\n in a quoted string";
				return NULL;
			}
			r += 2;
			continue;
		}
		*w++ = *r++;
	}
	*pp = r + 1; /* past the closing quote, which is consumed: the NUL may go at or before it */
	*w = '\0';
	*len = (size_t)(w - start);
	if (!cpi2_utf8_valid(start, *len)) {
		*why = "a quoted string is not valid UTF-8";
		return NULL;
	}
	return start;
}

int cpi2_prom_parse_value(const char *s, size_t len, double *out)
{
	char buf[64], *end;
	const char *q;
	size_t i = 0;
	bool digits = false;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	q = buf + (buf[0] == '+' || buf[0] == '-');
	if (!strcasecmp(q, "inf") || !strcasecmp(q, "infinity")) {
		*out = buf[0] == '-' ? -INFINITY : INFINITY;
		return 0;
	}
	if (!strcasecmp(buf, "nan")) { /* Go's ParseFloat takes no sign before NaN */
		*out = NAN;
		return 0;
	}
	/* [+-]? (d+ (. d*)? | . d+) ([eE] [+-]? d+)? */
	if (buf[i] == '+' || buf[i] == '-')
		i++;
	while (buf[i] >= '0' && buf[i] <= '9')
		i++, digits = true;
	if (buf[i] == '.') {
		i++;
		while (buf[i] >= '0' && buf[i] <= '9')
			i++, digits = true;
	}
	if (!digits)
		return -EINVAL;
	if (buf[i] == 'e' || buf[i] == 'E') {
		bool exp = false;

		i++;
		if (buf[i] == '+' || buf[i] == '-')
			i++;
		while (buf[i] >= '0' && buf[i] <= '9')
			i++, exp = true;
		if (!exp)
			return -EINVAL;
	}
	if (i != len)
		return -EINVAL;
	errno = 0;
	*out = strtod(buf, &end);
	if (end != buf + len)
		return -EINVAL;
	/* an overflow is +-Inf, as in Go's ParseFloat (which reports it but returns it); an
	 * underflow is the 0 or denormal strtod gives */
	return 0;
}

static int parse_timestamp(const char *s, size_t len, int64_t *out)
{
	char buf[32], *end;
	long long v;
	size_t i = 0;

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[0] == '+' || buf[0] == '-')
		i++;
	if (i == len)
		return -EINVAL;
	for (; i < len; i++)
		if (buf[i] < '0' || buf[i] > '9')
			return -EINVAL;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno == ERANGE || end != buf + len)
		return -EINVAL;
	*out = (int64_t)v;
	return 0;
}

const char *cpi2_prom_label(const struct cpi2_prom_sample *s, const char *name)
{
	for (int i = 0; i < s->n_labels; i++)
		if (!strcmp(s->labels[i].name, name))
			return s->labels[i].value;
	return NULL;
}

struct parser {
	const char *family; /* the last "# TYPE" name (in the text), or NULL */
	enum cpi2_prom_type type;
	const char *last; /* the family of the last sample, or NULL */
	char *why_buf;
	size_t why_size;
};

/* "# TYPE name type" and "# HELP name text": the type is remembered, the help only checked */
static const char *comment(struct parser *ps, char *p, char *e)
{
	static const char *const types[] = {"untyped", "counter", "gauge", "histogram", "summary"};
	char *kw, *name, *ne, *t;
	bool is_type;

	p = skip_blanks(p + 1, e);
	kw = p;
	while (p < e && !blank(*p))
		p++;
	is_type = p - kw == 4 && !memcmp(kw, "TYPE", 4);
	if (!is_type && !(p - kw == 4 && !memcmp(kw, "HELP", 4)))
		return NULL; /* a plain comment */
	name = skip_blanks(p, e);
	ne = name == p ? name : scan_name(name, e, true);
	if (ne == name || (ne < e && !blank(*ne)))
		return is_type ? "# TYPE names no valid metric name"
			       : "# HELP names no valid metric name";
	if (!is_type)
		return NULL; /* the docstring may hold anything but a line feed */
	t = skip_blanks(ne, e);
	if (t == ne)
		return "# TYPE without a type";
	char *te = t;

	while (te < e && !blank(*te))
		te++;
	if (skip_blanks(te, e) != e)
		return "# TYPE followed by more than a type";
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if ((size_t)(te - t) != strlen(types[i]) || memcmp(t, types[i], (size_t)(te - t)))
			continue;
		*ne = '\0'; /* the name's end is consumed: the family name lives in the text */
		if (ps->family && !strcmp(ps->family, name))
			return "a second # TYPE line for the same metric";
		if (ps->last && !strcmp(ps->last, name))
			return "# TYPE after samples of its metric";
		ps->family = name;
		ps->type = (enum cpi2_prom_type)i;
		return NULL;
	}
	return "# TYPE of an unknown type (counter, gauge, histogram, summary, untyped)";
}

/* whether name is family followed by one of the suffixes (NULL-terminated list) */
static bool suffixed(const char *name, const char *family, const char *const *suffixes)
{
	size_t n = strlen(family);

	if (strncmp(name, family, n))
		return false;
	for (; *suffixes; suffixes++)
		if (!strcmp(name + n, *suffixes))
			return true;
	return false;
}

/* the sample's family and type, and the labels its type requires */
static const char *resolve(struct parser *ps, struct cpi2_prom_sample *s)
{
	static const char *const hist[] = {"_bucket", "_sum", "_count", "_created", NULL};
	static const char *const summ[] = {"_sum", "_count", "_created", NULL};
	static const char *const ctr[] = {"_total", "_created", NULL};
	const char *f = ps->family;
	double v;

	s->family = s->name;
	s->type = CPI2_PROM_UNTYPED;
	if (f && (!strcmp(s->name, f) ||
		  (ps->type == CPI2_PROM_HISTOGRAM && suffixed(s->name, f, hist)) ||
		  (ps->type == CPI2_PROM_SUMMARY && suffixed(s->name, f, summ)) ||
		  (ps->type == CPI2_PROM_COUNTER && suffixed(s->name, f, ctr)))) {
		s->family = f;
		s->type = ps->type;
	}
	ps->last = s->family;
	if (s->type == CPI2_PROM_HISTOGRAM) {
		const char *le = cpi2_prom_label(s, "le");

		if (!strcmp(s->name, f))
			return "a histogram's sample without _bucket, _sum or _count";
		if (!strcmp(s->name + strlen(f), "_bucket") &&
		    (!le || cpi2_prom_parse_value(le, strlen(le), &v) || isnan(v)))
			return "a histogram bucket without a numeric le label";
	}
	if (s->type == CPI2_PROM_SUMMARY && !strcmp(s->name, f)) {
		const char *q = cpi2_prom_label(s, "quantile");

		if (!q || cpi2_prom_parse_value(q, strlen(q), &v) || isnan(v))
			return "a summary's quantile without a numeric quantile label";
	}
	return NULL;
}

/* the labels in braces at *pp ('{'); a quoted entry without '=' is the metric name (format
 * 1.0.0), returned in *qname */
static const char *labels(char **pp, char *e, struct cpi2_prom_sample *s, char **qname)
{
	char *p = *pp + 1;
	const char *why = NULL;

	for (;;) {
		char *name, *ne;
		size_t vlen;

		p = skip_blanks(p, e);
		if (p < e && *p == '}')
			break;
		if (p < e && *p == '"') {
			name = scan_quoted(&p, e, &vlen, &why);
			if (!name)
				return why;
			if (vlen == 0)
				return "an empty quoted name";
			ne = NULL;
		} else {
			name = p;
			ne = scan_name(p, e, false);
			if (ne == p)
				return "a label name is expected";
			p = ne;
		}
		p = skip_blanks(p, e);
		if (ne == NULL && (p >= e || *p != '=')) {
			/* a quoted metric name */
			if (*qname || s->n_labels)
				return "a quoted metric name that is not the first entry in braces";
			*qname = name;
		} else {
			if (p >= e || *p != '=')
				return "'=' is expected after a label name";
			if (ne)
				*ne = '\0'; /* consumed: the name's end, a blank or the '=' */
			p = skip_blanks(p + 1, e);
			if (p >= e || *p != '"')
				return "a label value must be quoted";
			char *value = scan_quoted(&p, e, &vlen, &why);

			if (!value)
				return why;
			if (s->n_labels == CPI2_PROM_MAX_LABELS)
				return "more labels than a sample may have";
			for (int i = 0; i < s->n_labels; i++)
				if (!strcmp(s->labels[i].name, name))
					return "a label name twice in one sample";
			s->labels[s->n_labels++] = (struct cpi2_prom_label){name, value, vlen};
		}
		p = skip_blanks(p, e);
		if (p < e && *p == ',') {
			p++;
			continue;
		}
		if (p < e && *p == '}')
			break;
		return "',' or '}' is expected after a label";
	}
	*pp = p + 1;
	return NULL;
}

/* one sample line [p, e) */
static const char *sample_line(struct parser *ps, char *p, char *e, struct cpi2_prom_sample *s)
{
	char *name = NULL, *ne = NULL, *v, *ve, *qname = NULL;
	const char *why;

	s->n_labels = 0;
	s->has_timestamp = false;
	if (*p != '{') {
		name = p;
		ne = scan_name(p, e, true);
		if (ne == p)
			return "a metric name is expected";
		p = ne;
	}
	char *brace = skip_blanks(p, e);

	if (brace < e && *brace == '{') {
		p = brace;
		if ((why = labels(&p, e, s, &qname)))
			return why;
		if (name && qname)
			return "a metric name both before and inside braces";
		if (!name && !qname)
			return "no metric name";
		if (qname)
			name = qname;
	}
	v = skip_blanks(p, e);
	if (v == p)
		return "a blank is expected before the value";
	for (ve = v; ve < e && !blank(*ve); ve++)
		;
	if (cpi2_prom_parse_value(v, (size_t)(ve - v), &s->value))
		return "the value is not a number";
	p = skip_blanks(ve, e);
	if (p < e) {
		char *te;

		if (p == ve)
			return "a blank is expected before the timestamp";
		for (te = p; te < e && !blank(*te); te++)
			;
		if (parse_timestamp(p, (size_t)(te - p), &s->timestamp_ms))
			return "the timestamp is not an integer (milliseconds)";
		s->has_timestamp = true;
		if (skip_blanks(te, e) != e)
			return "more after the timestamp";
	}
	if (ne)
		*ne = '\0'; /* consumed (a blank or '{'): the name ends here */
	s->name = name;
	return resolve(ps, s);
}

int cpi2_prom_parse(char *text, size_t len, cpi2_prom_sample_fn fn, void *arg, char *err,
		    size_t errsz)
{
	struct parser ps = {0};
	struct cpi2_prom_sample *s = malloc(sizeof(*s));
	char *p = text, *end = text + len;
	const char *why = NULL;
	int line = 0, rc = 0;

	if (!s)
		return -ENOMEM;
	while (p < end && !rc) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *e;

		line++;
		if (!nl) {
			why = "the text does not end with a line feed (cut short?)";
			break;
		}
		e = nl;
		if (e > p && e[-1] == '\r')
			e--;
		if (memchr(p, '\0', (size_t)(e - p)) || memchr(p, '\r', (size_t)(e - p))) {
			why = "a NUL byte or a carriage return inside a line";
			break;
		}
		char *q = skip_blanks(p, e);

		if (q == e) {
			/* an empty line */
		} else if (*q == '#') {
			why = comment(&ps, q, e);
		} else {
			s->line = line;
			why = sample_line(&ps, q, e, s);
			if (!why)
				rc = fn(arg, s);
		}
		if (why)
			break;
		p = nl + 1;
	}
	free(s);
	if (why) {
		snprintf(err, errsz, "line %d: %s", line, why);
		return -EBADMSG;
	}
	return rc;
}

/* the text of a selector's quoted value at *pp ('"'), escapes \\ \" \n undone, into a new
 * string */
static char *selector_string(const char **pp, const char **why)
{
	const char *p = *pp + 1;
	size_t n = 0, cap = strlen(p) + 1;
	char *out = malloc(cap);

	if (!out) {
		*why = "out of memory";
		return NULL;
	}
	for (;; p++) {
		if (!*p) {
			*why = "a quoted value does not end";
			free(out);
			return NULL;
		}
		if (*p == '"')
			break;
		if (*p == '\\') {
			char c = p[1] == 'n' ? '\n' : p[1] == '\\' ? '\\' : p[1] == '"' ? '"' : 0;

			if (!c) {
				*why = "an escape other than \\\\, \\\" or \\n";
				free(out);
				return NULL;
			}
			out[n++] = c;
			p++;
			continue;
		}
		out[n++] = *p;
	}
	out[n] = '\0';
	*pp = p + 1;
	return out;
}

static int selector_error(struct cpi2_prom_selector *sel, const char *text, const char *why,
			  char *err, size_t errsz)
{
	snprintf(err, errsz, "selector '%.200s': %s", text, why);
	cpi2_prom_selector_free(sel);
	return -EINVAL;
}

int cpi2_prom_selector_parse(const char *text, struct cpi2_prom_selector *sel, char *err,
			     size_t errsz)
{
	const char *p = text, *why;
	size_t n;

	memset(sel, 0, sizeof(*sel));
	while (blank(*p))
		p++;
	for (n = 0; name_char(p[n], true) && (n || name_start(p[n], true)); n++)
		;
	if (!n)
		return selector_error(sel, text, "it must start with a metric name", err, errsz);
	sel->text = strdup(text);
	sel->name = strndup(p, n);
	if (!sel->text || !sel->name)
		return selector_error(sel, text, "out of memory", err, errsz);
	p += n;
	while (blank(*p))
		p++;
	if (*p == '{') {
		p++;
		for (;;) {
			struct cpi2_prom_matcher *m;

			while (blank(*p))
				p++;
			if (*p == '}')
				break;
			for (n = 0; name_char(p[n], false) && (n || name_start(p[n], false)); n++)
				;
			if (!n)
				return selector_error(sel, text, "a label name is expected", err,
						      errsz);
			if (sel->n == CPI2_PROM_MAX_MATCHERS)
				return selector_error(sel, text, "too many matchers", err, errsz);
			m = &sel->m[sel->n++];
			if (!(m->name = strndup(p, n)))
				return selector_error(sel, text, "out of memory", err, errsz);
			p += n;
			while (blank(*p))
				p++;
			if (p[0] == '=' && p[1] == '~')
				m->op = CPI2_PROM_RE, p += 2;
			else if (p[0] == '!' && p[1] == '~')
				m->op = CPI2_PROM_NRE, p += 2;
			else if (p[0] == '!' && p[1] == '=')
				m->op = CPI2_PROM_NE, p += 2;
			else if (p[0] == '=')
				m->op = CPI2_PROM_EQ, p += 1;
			else
				return selector_error(sel, text, "=, !=, =~ or !~ is expected", err,
						      errsz);
			while (blank(*p))
				p++;
			if (*p != '"')
				return selector_error(sel, text, "a matcher's value must be quoted",
						      err, errsz);
			if (!(m->value = selector_string(&p, &why)))
				return selector_error(sel, text, why, err, errsz);
			if (m->op == CPI2_PROM_RE || m->op == CPI2_PROM_NRE) {
				size_t len = strlen(m->value) + 5;
				char *anchored = malloc(len);
				int rc;

				if (!anchored)
					return selector_error(sel, text, "out of memory", err,
							      errsz);
				snprintf(anchored, len, "^(%s)$", m->value);
				rc = regcomp(&m->re, anchored, REG_EXTENDED | REG_NOSUB);
				free(anchored);
				if (rc) {
					char msg[128], why2[192];

					regerror(rc, &m->re, msg, sizeof(msg));
					snprintf(why2, sizeof(why2), "regular expression of %s: %s",
						 m->name, msg);
					return selector_error(sel, text, why2, err, errsz);
				}
				m->has_re = true;
			}
			while (blank(*p))
				p++;
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p != '}')
				return selector_error(sel, text, "',' or '}' is expected", err,
						      errsz);
			break;
		}
		p++;
	}
	while (blank(*p))
		p++;
	if (*p)
		return selector_error(sel, text, "text after the selector", err, errsz);
	return 0;
}

bool cpi2_prom_selector_match(const struct cpi2_prom_selector *sel, const char *suffix,
			      const struct cpi2_prom_sample *s)
{
	size_t n = strlen(sel->name);

	if (strncmp(s->name, sel->name, n) || strcmp(s->name + n, suffix))
		return false;
	for (int i = 0; i < sel->n; i++) {
		const struct cpi2_prom_matcher *m = &sel->m[i];
		const char *v = cpi2_prom_label(s, m->name);
		bool hit;

		if (!v)
			v = "";
		if (m->op == CPI2_PROM_EQ || m->op == CPI2_PROM_NE)
			hit = !strcmp(v, m->value);
		else
			hit = regexec(&m->re, v, 0, NULL, 0) == 0;
		if (hit != (m->op == CPI2_PROM_EQ || m->op == CPI2_PROM_RE))
			return false;
	}
	return true;
}

void cpi2_prom_selector_free(struct cpi2_prom_selector *sel)
{
	for (int i = 0; i < sel->n; i++) {
		free(sel->m[i].name);
		free(sel->m[i].value);
		if (sel->m[i].has_re)
			regfree(&sel->m[i].re);
	}
	free(sel->text);
	free(sel->name);
	memset(sel, 0, sizeof(*sel));
}

static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (h ^ 0xff) * 0x100000001b3ULL; /* a separator no string holds */
}

uint64_t cpi2_prom_labels_hash(const struct cpi2_prom_sample *s, const char *skip)
{
	int order[CPI2_PROM_MAX_LABELS], n = 0;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (int i = 0; i < s->n_labels; i++) {
		int j = n;

		if (skip && !strcmp(s->labels[i].name, skip))
			continue;
		while (j > 0 && strcmp(s->labels[order[j - 1]].name, s->labels[i].name) > 0) {
			order[j] = order[j - 1];
			j--;
		}
		order[j] = i;
		n++;
	}
	for (int i = 0; i < n; i++)
		h = fnv(fnv(h, s->labels[order[i]].name), s->labels[order[i]].value);
	return h;
}
