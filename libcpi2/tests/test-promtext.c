/* promtext: the Prometheus text format parser on tables of valid and malformed expositions, on
 * the output of real exporters (Debian's prometheus-redis-exporter 1.45 over redis 7.0,
 * prometheus-nginx-exporter 0.11 over nginx 1.22, Prometheus 2.42's own /metrics: tests/data/
 * promtext), selectors, series hashes; then 300,000 random and mutated expositions under ASan. */
#include <cpi2/promtext.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* every sample as "name|family|type|l=v,l=v|value[|ts]" lines */
struct dump {
	char text[1 << 16];
	size_t n;
	int samples;
};

static int dump_sample(void *arg, const struct cpi2_prom_sample *s)
{
	struct dump *d = arg;
	char *o = d->text + d->n;
	size_t left = sizeof(d->text) - d->n;
	int k = snprintf(o, left, "%s|%s|%s|", s->name, s->family, cpi2_prom_type_name(s->type));

	for (int i = 0; i < s->n_labels && k < (int)left; i++) {
		CHECK(strlen(s->labels[i].value) == s->labels[i].value_len);
		k += snprintf(o + k, left - (size_t)k, "%s%s=%s", i ? "," : "", s->labels[i].name,
			      s->labels[i].value);
	}
	if (k < (int)left)
		k += snprintf(o + k, left - (size_t)k, "|%g", s->value);
	if (s->has_timestamp && k < (int)left)
		k += snprintf(o + k, left - (size_t)k, "|%lld", (long long)s->timestamp_ms);
	if (k < (int)left)
		k += snprintf(o + k, left - (size_t)k, "\n");
	CHECK(k < (int)left);
	d->n += (size_t)k;
	d->samples++;
	return 0;
}

/* parse a copy of text (the parser writes into it) */
static int parse(const char *text, struct dump *d, char *err, size_t errsz)
{
	size_t len = strlen(text);
	char *copy = malloc(len + 1);
	int rc;

	memcpy(copy, text, len + 1);
	memset(d, 0, sizeof(*d));
	rc = cpi2_prom_parse(copy, len, dump_sample, d, err, errsz);
	free(copy);
	return rc;
}

static void valid(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
	    {"", ""},
	    {"\n\n  \n", ""},
	    {"a 1\n", "a|a|untyped||1\n"},
	    {"a 1 1700000000000\n", "a|a|untyped||1|1700000000000\n"},
	    {"a\t 1\t-5 \r\n", "a|a|untyped||1|-5\n"},
	    {"  a:b_c 2.5e-3\n", "a:b_c|a:b_c|untyped||0.0025\n"},
	    {"a{} 1\n", "a|a|untyped||1\n"},
	    {"a {x=\"1\"} 1\n", "a|a|untyped|x=1|1\n"},
	    {"a{ x = \"1\" , y=\"\" , } 1\n", "a|a|untyped|x=1,y=|1\n"},
	    {"a{x=\"q\\\"\\\\\\n\"} 1\n", "a|a|untyped|x=q\"\\\n|1\n"},
	    {"a{x=\"caf\xc3\xa9 #}{,\"} +Inf\n", "a|a|untyped|x=caf\xc3\xa9 #}{,|inf\n"},
	    {"a -Inf\nb NaN\nc nan\nd .5\ne 5.\nf -0\ng 1E+3\n",
	     "a|a|untyped||-inf\nb|b|untyped||nan\nc|c|untyped||nan\nd|d|untyped||0.5\n"
	     "e|e|untyped||5\nf|f|untyped||-0\ng|g|untyped||1000\n"},
	    {"# a comment\n#TYPE c counter\nc 3\n", "c|c|counter||3\n"},
	    {"# HELP c some \\\\ help \\n with \"quotes\"\n# TYPE c counter\nc 3\n",
	     "c|c|counter||3\n"},
	    {"# HELP c\n# TYPE c_total counter\nc_total 3\n", "c_total|c_total|counter||3\n"},
	    {"# TYPE c counter\nc_total 3\nc_created 1\nd 1\n",
	     "c_total|c|counter||3\nc_created|c|counter||1\nd|d|untyped||1\n"},
	    {"# TYPE g gauge\ng{a=\"b\"} -2 10\n", "g|g|gauge|a=b|-2|10\n"},
	    {"# TYPE h histogram\nh_bucket{le=\"0.5\"} 1\nh_bucket{le=\"+Inf\"} 2\nh_sum 0.7\n"
	     "h_count 2\n",
	     "h_bucket|h|histogram|le=0.5|1\nh_bucket|h|histogram|le=+Inf|2\nh_sum|h|histogram||0."
	     "7\nh_count|h|histogram||2\n"},
	    {"# TYPE s summary\ns{quantile=\"0.99\",x=\"y\"} 4\ns_sum{x=\"y\"} 9\ns_count{x=\"y\"} "
	     "3\n",
	     "s|s|summary|quantile=0.99,x=y|4\ns_sum|s|summary|x=y|9\ns_count|s|summary|x=y|3\n"},
	    {"# TYPE h histogram\nh_bucket{le=\"1\"} 1\nother 5\n",
	     "h_bucket|h|histogram|le=1|1\nother|other|untyped||5\n"},
	    /* format 1.0.0: quoted names */
	    {"{\"my.metric\", \"a.b\"=\"c\"} 1\n", "my.metric|my.metric|untyped|a.b=c|1\n"},
	    {"{\"m\"} 7\n", "m|m|untyped||7\n"},
	};
	struct dump d;
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(cases[i].in, &d, err, sizeof(err));

		CHECK(rc == 0, "case %zu: %s", i, err);
		CHECK(!strcmp(d.text, cases[i].want), "case %zu:\n%s-- want --\n%s", i, d.text,
		      cases[i].want);
	}
}

static int stop(void *arg, const struct cpi2_prom_sample *s)
{
	(void)s;
	++*(int *)arg;
	return 5;
}

static void malformed(void)
{
	static const struct {
		const char *in, *why;
		int line;
	} cases[] = {
	    {"a 1", "line feed", 1},
	    {"a 1\nb 2", "line feed", 2},
	    {"a\n", "blank is expected before the value", 1},
	    {"a 1x\n", "value", 1},
	    {"a 0x10\n", "value", 1},
	    {"a 1_000\n", "value", 1},
	    {"a +NaN\n", "value", 1},
	    {"a  \n", "value", 1},
	    {"1a 1\n", "metric name", 1},
	    {"a-b 1\n", "blank", 1},
	    {"a 1 2 3\n", "after the timestamp", 1},
	    {"a 1 1.5\n", "timestamp", 1},
	    {"a 1 99999999999999999999\n", "timestamp", 1},
	    {"a{x=1} 1\n", "quoted", 1},
	    {"a{x=\"1} 1\n", "does not end", 1},
	    {"a{x=\"\\t\"} 1\n", "escape", 1},
	    {"a{x=\"\xff\"} 1\n", "UTF-8", 1},
	    {"a{x=\"\xc0\xaf\"} 1\n", "UTF-8", 1},
	    {"a{x=\"\xed\xa0\x80\"} 1\n", "UTF-8", 1},
	    {"a{x=\"1\" y=\"2\"} 1\n", "',' or '}'", 1},
	    {"a{x=\"1\",x=\"2\"} 1\n", "twice", 1},
	    {"a{:x=\"1\"} 1\n", "label name", 1},
	    {"a{x} 1\n", "'='", 1},
	    {"a{x=\"1\"\n", "',' or '}'", 1},
	    {"{\"a\"}{x=\"1\"} 1\n", "blank", 1},
	    {"a{\"b\"} 1\n", "both", 1},
	    {"{x=\"1\"} 1\n", "no metric name", 1},
	    {"{x=\"1\",\"m\"} 1\n", "first entry", 1},
	    {"ok 1\n# TYPE t bogus\n", "unknown type", 2},
	    {"# TYPE t\n", "without a type", 1},
	    {"# TYPE\n", "no valid metric name", 1},
	    {"# HELP 9x y\n", "no valid metric name", 1},
	    {"# TYPE t counter extra\n", "more than a type", 1},
	    {"# TYPE t counter\n# TYPE t counter\n", "second # TYPE", 2},
	    {"t 1\n# TYPE t counter\n", "after samples", 2},
	    {"# TYPE h histogram\nh_bucket 1\n", "le label", 2},
	    {"# TYPE h histogram\nh_bucket{le=\"x\"} 1\n", "le label", 2},
	    {"# TYPE h histogram\nh 1\n", "without _bucket", 2},
	    {"# TYPE s summary\ns 1\n", "quantile", 2},
	    {"# TYPE s summary\ns{quantile=\"NaN\"} 1\n", "quantile", 2},
	    {"a 1\nb\r2\n", "carriage return", 2},
	};
	struct dump d;
	char err[256], want[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = parse(cases[i].in, &d, err, sizeof(err));

		CHECK(rc == -EBADMSG, "case %zu (%s) parsed", i, cases[i].in);
		snprintf(want, sizeof(want), "line %d: ", cases[i].line);
		CHECK(!strncmp(err, want, strlen(want)) && strstr(err, cases[i].why),
		      "case %zu: '%s', want line %d and '%s'", i, err, cases[i].line, cases[i].why);
	}
	/* a NUL byte inside a line */
	char nul[] = "a 1\nb\0 2\n";

	memset(&d, 0, sizeof(d));
	CHECK(cpi2_prom_parse(nul, sizeof(nul) - 1, dump_sample, &d, err, sizeof(err)) == -EBADMSG);
	CHECK(strstr(err, "line 2: ") && d.samples == 1, "%s", err);
	/* the callback stops the parse with its return */
	char two[] = "a 1\nb 2\n";
	int calls = 0;

	CHECK(cpi2_prom_parse(two, strlen(two), stop, &calls, err, sizeof(err)) == 5 && calls == 1);
}

static char *slurp(const char *name, size_t *len)
{
	char path[512];
	FILE *f;
	char *buf;

	snprintf(path, sizeof(path), "%s/libcpi2/tests/data/promtext/%s", CPI2_SOURCE_DIR, name);
	f = fopen(path, "rb");
	CHECK(f != NULL, "%s", path);
	buf = malloc(1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	buf[*len] = '\0';
	fclose(f);
	return buf;
}

/* what a real exposition gives for one series: its value, or NAN */
struct find {
	const char *name, *label, *value;
	double got;
	int samples, histogram_buckets, summaries;
};

static int find_sample(void *arg, const struct cpi2_prom_sample *s)
{
	struct find *f = arg;
	const char *v = f->label ? cpi2_prom_label(s, f->label) : NULL;

	f->samples++;
	f->histogram_buckets += s->type == CPI2_PROM_HISTOGRAM && strstr(s->name, "_bucket");
	f->summaries += s->type == CPI2_PROM_SUMMARY && !strcmp(s->name, s->family);
	if (!strcmp(s->name, f->name) && (!f->label || (v && !strcmp(v, f->value))))
		f->got = s->value;
	return 0;
}

static void real_exporters(void)
{
	static const struct {
		const char *file, *name, *label, *value;
		double want;
		int samples, buckets, summaries;
	} cases[] = {
	    {"redis-exporter-1.45-a.txt", "redis_commands_processed_total", NULL, NULL, 40100, 262,
	     0, 29},
	    {"redis-exporter-1.45-b.txt", "redis_latency_percentiles_usec_sum", "cmd", "get", 2947,
	     262, 0, 29},
	    {"redis-exporter-1.45-b.txt", "redis_latency_percentiles_usec_count", "cmd", "get",
	     25000, 262, 0, 29},
	    {"nginx-exporter-0.11-b.txt", "nginx_http_requests_total", NULL, NULL, 207836, 9, 0, 0},
	    {"prometheus-2.42-b.txt", "prometheus_http_request_duration_seconds_count", "handler",
	     "/api/v1/query", 50, 379, 0, 41},
	    {"prometheus-2.42-b.txt", "prometheus_http_request_duration_seconds_bucket", "le",
	     "+Inf", 0, 0, 0, 0},
	};
	char err[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		char *text = slurp(cases[i].file, &len);
		struct find f = {cases[i].name, cases[i].label, cases[i].value, NAN, 0, 0, 0};
		int rc = cpi2_prom_parse(text, len, find_sample, &f, err, sizeof(err));

		CHECK(rc == 0, "%s: %s", cases[i].file, err);
		if (cases[i].samples)
			CHECK(f.samples == cases[i].samples && f.summaries == cases[i].summaries,
			      "%s: %d samples, %d summary quantiles", cases[i].file, f.samples,
			      f.summaries);
		if (strstr(cases[i].file, "prometheus"))
			CHECK(f.histogram_buckets > 100, "%d", f.histogram_buckets);
		if (cases[i].want)
			CHECK(f.got == cases[i].want, "%s %s: %g", cases[i].file, cases[i].name,
			      f.got);
		else
			CHECK(!isnan(f.got));
		free(text);
	}
}

static struct cpi2_prom_sample kept;

static int keep(void *arg, const struct cpi2_prom_sample *s)
{
	(void)arg;
	kept = *s;
	return 0;
}

/* the sample of a one-line exposition, parsed in buf */
static const struct cpi2_prom_sample *one(const char *line, char *buf)
{
	char err[256];

	strcpy(buf, line);
	CHECK(cpi2_prom_parse(buf, strlen(buf), keep, NULL, err, sizeof(err)) == 0, "%s", err);
	return &kept;
}

static void selectors(void)
{
	static const struct {
		const char *sel, *suffix, *line;
		bool match;
	} cases[] = {
	    {"a", "", "a 1\n", true},
	    {"a", "", "ab 1\n", false},
	    {"a", "_sum", "a_sum 1\n", true},
	    {"a", "_sum", "a 1\n", false},
	    {"a{x=\"1\"}", "", "a{x=\"1\",y=\"2\"} 1\n", true},
	    {"a{x=\"1\"}", "", "a{x=\"2\"} 1\n", false},
	    {"a{x=\"\"}", "", "a{y=\"2\"} 1\n", true},
	    {"a{x!=\"1\"}", "", "a{y=\"2\"} 1\n", true},
	    {"a{x!=\"1\"}", "", "a{x=\"1\"} 1\n", false},
	    {"a { cmd =~ \"get|set\" , y !~ \"z.*\" }", "", "a{cmd=\"set\",y=\"q\"} 1\n", true},
	    {"a{cmd=~\"get|set\"}", "", "a{cmd=\"getx\"} 1\n", false},
	    {"a{cmd=~\"g\"}", "", "a{cmd=\"get\"} 1\n", false},
	    {"a{y!~\"z.*\"}", "", "a{y=\"zz\"} 1\n", false},
	    {"a{x=\"q\\\"\\\\\"}", "", "a{x=\"q\\\"\\\\\"} 1\n", true},
	    {"redis_commands_total{cmd=\"client|setname\"}", "",
	     "redis_commands_total{cmd=\"client|setname\"} 1\n", true},
	};
	static const char *const bad[] = {
	    "",	   "{x=\"1\"}",	   "a{x=1}",	  "a{x=\"1\"",		"a{x\"1\"}", "a{x==\"1\"}",
	    "a b", "a{x=\"\\t\"}", "a{x=~\"(\"}", "a{x=\"1\" y=\"2\"}",
	};
	struct cpi2_prom_selector sel;
	char err[256], buf[512];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(cpi2_prom_selector_parse(cases[i].sel, &sel, err, sizeof(err)) == 0, "%s",
		      err);
		CHECK(cpi2_prom_selector_match(&sel, cases[i].suffix, one(cases[i].line, buf)) ==
			  cases[i].match,
		      "case %zu: %s on %s", i, cases[i].sel, cases[i].line);
		cpi2_prom_selector_free(&sel);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(cpi2_prom_selector_parse(bad[i], &sel, err, sizeof(err)) == -EINVAL,
		      "'%s' parsed", bad[i]);
		CHECK(strstr(err, "selector") && sel.name == NULL, "%s", err);
	}
	/* 16 matchers at most */
	char many[1024] = "a{";
	for (int i = 0; i < 17; i++)
		snprintf(many + strlen(many), sizeof(many) - strlen(many), "l%d=\"v\",", i);
	strcat(many, "}");
	CHECK(cpi2_prom_selector_parse(many, &sel, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "too many"));
}

static void hashes(void)
{
	char a[128], b[128];
	struct cpi2_prom_sample s1, s2;

	s1 = *one("m{x=\"1\",y=\"2\",le=\"3\"} 1\n", a);
	s2 = *one("m{le=\"4\",y=\"2\",x=\"1\"} 1\n", b);
	CHECK(cpi2_prom_labels_hash(&s1, "le") == cpi2_prom_labels_hash(&s2, "le"));
	CHECK(cpi2_prom_labels_hash(&s1, NULL) != cpi2_prom_labels_hash(&s2, NULL));
	s2 = *one("m{x=\"12\"} 1\n", b);
	s1 = *one("m{x=\"1\",y=\"2\"} 1\n", a);
	CHECK(cpi2_prom_labels_hash(&s1, NULL) != cpi2_prom_labels_hash(&s2, NULL));
	s2 = *one("m{x1=\"2\"} 1\n", b);
	s1 = *one("m{x=\"12\"} 1\n", a);
	CHECK(cpi2_prom_labels_hash(&s1, NULL) != cpi2_prom_labels_hash(&s2, NULL));
}

/* every sample handed out is well formed, whatever the input */
static int sane(void *arg, const struct cpi2_prom_sample *s)
{
	(void)arg;
	CHECK(s->name[0] && s->family[0] && s->n_labels <= CPI2_PROM_MAX_LABELS);
	for (int i = 0; i < s->n_labels; i++)
		CHECK(s->labels[i].name[0] && strlen(s->labels[i].value) == s->labels[i].value_len);
	return 0;
}

static void random_inputs(void)
{
	static const char alphabet[] = "ab_:{}=\",# \t\n\\\"01.eE+-InfNaTYPEHLcounterhistogramle";
	size_t len;
	char *seeds[3] = {slurp("redis-exporter-1.45-a.txt", &len),
			  slurp("prometheus-2.42-a.txt", &len),
			  slurp("nginx-exporter-0.11-a.txt", &len)};
	char err[256], buf[4096];
	int ok = 0;

	srand(11);
	for (int r = 0; r < 300000; r++) {
		size_t n;

		if (r % 2) {
			n = (size_t)(rand() % 200);
			for (size_t i = 0; i < n; i++)
				buf[i] = r % 4 == 1 ? alphabet[rand() % (sizeof(alphabet) - 1)]
						    : (char)(rand() % 256);
		} else {
			const char *seed = seeds[r % 3];
			size_t sl = strlen(seed), at = (size_t)rand() % sl;

			n = sl - at < sizeof(buf) ? sl - at : sizeof(buf) - 1;
			memcpy(buf, seed + at, n);
			for (int m = rand() % 4; m >= 0 && n; m--)
				buf[(size_t)rand() % n] = alphabet[rand() % (sizeof(alphabet) - 1)];
		}
		int rc = cpi2_prom_parse(buf, n, sane, NULL, err, sizeof(err));

		CHECK(rc == 0 || rc == -EBADMSG);
		ok += rc == 0;
	}
	for (int i = 0; i < 3; i++)
		free(seeds[i]);
	printf("test-promtext: random inputs: %d of 300000 parsed\n", ok);
}

int main(void)
{
	valid();
	malformed();
	real_exporters();
	selectors();
	hashes();
	random_inputs();
	printf("test-promtext: ok\n");
	return 0;
}
