/* promtext: the Prometheus text exposition format (version 0.0.4: what exporters serve as
 * text/plain) and series selectors over it.
 *
 * cpi2_prom_parse reads a whole exposition and calls back once per sample, with its metric name,
 * the family a "# TYPE" line put it in and that family's type, its labels (escapes undone) and
 * value. Every exposition is hostile: the first malformed line refuses the whole of it, with its
 * line number and the reason (as Prometheus refuses a scrape), and nothing after it is handed
 * out. It checks names, label syntax and escapes, UTF-8 in label values, duplicate label names,
 * values and timestamps, "# TYPE" types, a family typed twice in a row, the "le" of histogram
 * buckets and the "quantile" of summaries, and that the text ends with a line feed (one cut
 * short does not). Label names and metric names may also be quoted (format 1.0.0's UTF-8 names:
 * {"my.metric", "a.b"="c"}).
 *
 * A selector is PromQL's instant vector selector without offsets: name{label="v", l2!="v",
 * l3=~"re", l4!~"re"}; regular expressions are POSIX extended ones, anchored at both ends as
 * PromQL anchors them. */
#ifndef CPI2_PROMTEXT_H
#define CPI2_PROMTEXT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cpi2_prom_type {
	CPI2_PROM_UNTYPED,
	CPI2_PROM_COUNTER,
	CPI2_PROM_GAUGE,
	CPI2_PROM_HISTOGRAM,
	CPI2_PROM_SUMMARY,
};

#define CPI2_PROM_MAX_LABELS 64 /* labels of one sample; more refuses the exposition */

/* a label of a sample: NUL-terminated strings inside the parsed text */
struct cpi2_prom_label {
	const char *name, *value;
	size_t value_len; /* the value may hold no NUL, but its length saves a strlen */
};

/* one sample, valid during the callback only */
struct cpi2_prom_sample {
	const char *name;   /* the series' metric name, e.g. http_request_duration_seconds_bucket */
	const char *family; /* the "# TYPE" name it belongs to, or name itself when none */
	enum cpi2_prom_type type; /* the family's type: UNTYPED without a "# TYPE" line */
	int n_labels;
	struct cpi2_prom_label labels[CPI2_PROM_MAX_LABELS];
	double value;
	bool has_timestamp;
	int64_t timestamp_ms;
	int line; /* from 1 */
};

/* Called once per sample; a non-zero return stops the parse and is returned. */
typedef int (*cpi2_prom_sample_fn)(void *arg, const struct cpi2_prom_sample *s);

/* Parse the exposition text (len bytes; changed in place: escapes undone, names terminated).
 * Returns 0, fn's first non-zero return, or -EBADMSG with "line N: reason" in err. */
int cpi2_prom_parse(char *text, size_t len, cpi2_prom_sample_fn fn, void *arg, char *err,
		    size_t errsz);

/* The name of a type as "# TYPE" spells it. */
const char *cpi2_prom_type_name(enum cpi2_prom_type t);

/* A sample value as Go's exporters write it (decimal, exponent, NaN, +Inf, -Inf; the
 * infinities and NaN in any case), the whole of s[0..len). Returns 0 or -EINVAL. */
int cpi2_prom_parse_value(const char *s, size_t len, double *out);

/* The value of the label name of s, or NULL. */
const char *cpi2_prom_label(const struct cpi2_prom_sample *s, const char *name);

enum cpi2_prom_op { CPI2_PROM_EQ, CPI2_PROM_NE, CPI2_PROM_RE, CPI2_PROM_NRE };

#define CPI2_PROM_MAX_MATCHERS 16

struct cpi2_prom_matcher {
	char *name, *value; /* owned */
	enum cpi2_prom_op op;
	bool has_re;
	regex_t re; /* for =~ and !~ */
};

/* name{matchers}: what a series must be to be selected */
struct cpi2_prom_selector {
	char *text; /* as given (owned), for logs */
	char *name; /* owned */
	int n;
	struct cpi2_prom_matcher m[CPI2_PROM_MAX_MATCHERS];
};

/* Parse a selector. Returns 0 or -EINVAL with a reason (sel is then empty, nothing to free). */
int cpi2_prom_selector_parse(const char *text, struct cpi2_prom_selector *sel, char *err,
			     size_t errsz);

/* Whether s is selected: its name is sel's name followed by suffix ("" for the name itself) and
 * every matcher holds (a label s lacks has the value ""). */
bool cpi2_prom_selector_match(const struct cpi2_prom_selector *sel, const char *suffix,
			      const struct cpi2_prom_sample *s);

/* Free what a selector holds and empty it. */
void cpi2_prom_selector_free(struct cpi2_prom_selector *sel);

/* A 64-bit hash of a sample's labels, in name order, leaving out the label skip (NULL: none):
 * the identity of a series within one metric name across expositions. */
uint64_t cpi2_prom_labels_hash(const struct cpi2_prom_sample *s, const char *skip);

#endif
