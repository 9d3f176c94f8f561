/* rules: which job, task id and task class a cgroup belongs to.
 *
 * A rule is one line "PATTERN ACTION": PATTERN matches a task path segment by segment, '*'
 * inside a segment matches any text within it (captured as $1, $2, ... left to right) and a
 * final "**" segment matches one or more remaining segments. ACTION is "ignore" (not a task:
 * a parent slice, a container inside a pod), "needs-label" (a task whose job only the labels
 * file knows, a Kubernetes pod: without an entry it is reported and not published) or
 * "job=T task_id=T class=T [protected]" where the
 * templates T may use $1..$9, $0 (the whole path) and $host. class is latency_sensitive, batch,
 * best_effort or unknown, or a Kubernetes QoS class (guaranteed, burstable, besteffort).
 * The first matching rule wins; exact entries of the labels file ("TASK JOB TASK_ID CLASS
 * [protected] [scrape=URL work=SELECTOR latency=SELECTOR latency_quantile=Q]", written by a
 * scheduler) come before every rule. A token of the file may hold blanks and '#' inside double
 * quotes (a selector's matcher values, as in work=x{path="/a b"}); '#' elsewhere starts a
 * comment. */
#ifndef COLLECTOR_RULES_H
#define COLLECTOR_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

struct rule {
	char *pattern;
	bool ignore, needs_label;
	char *job, *task_id, *task_class; /* templates */
	bool is_protected;
};

/* what the labels file says of a task's metrics endpoint (each NULL when not given): checked
 * when the collector scrapes it (services.h), not here */
struct label_scrape {
	char *url;	/* scrape=http://ADDRESS:PORT/PATH */
	char *work;	/* work=SELECTOR: the work counter */
	char *latency;	/* latency=SELECTOR: a histogram's or summary's family */
	char *quantile; /* latency_quantile=Q: a quantile rather than the mean */
};

struct label {
	char *task, *job, *task_id;
	int task_class;
	bool is_protected;
	struct label_scrape scrape;
};

struct rules {
	struct rule *v;
	size_t n;
	struct label *labels;
	size_t n_labels;
	char labels_path[4096];
	struct timespec labels_mtime; /* of the file last loaded */
};

/* The built-in rules: systemd slices and Kubernetes pod cgroups (both cgroup drivers). */
extern const char cpi2_default_rules[];

/* What a cgroup is: a task (mapped), not a task, matched by no rule, or a task that only a
 * labels entry may map and that has none. */
enum { MAP_TASK, MAP_IGNORE, MAP_UNMAPPED, MAP_NEEDS_LABEL };

struct mapping {
	char job[256], task_id[256];
	int task_class; /* CPI2_TASK_CLASS_* */
	bool is_protected;
	/* the labels entry's metrics endpoint, or NULL: valid until the labels are reloaded */
	const struct label_scrape *scrape;
};

/* Append the rules in text (lines; '#' comments); origin names it in errors ("rules.conf").
 * Returns 0 or -EINVAL with "origin:line: reason". */
int rules_parse(struct rules *r, const char *text, const char *origin, char *err, size_t errsz);

/* Append the rules of a file. Returns 0 or -errno with a reason. */
int rules_load(struct rules *r, const char *path, char *err, size_t errsz);

/* (Re)load the labels file when its modification time changed (or the first time). A bad
 * file keeps the labels loaded before. Returns 0 (also: unchanged), or -errno with a reason. */
int rules_labels_refresh(struct rules *r, const char *path, char *err, size_t errsz);

/* Map a task path. Returns MAP_TASK (out filled), MAP_IGNORE, MAP_UNMAPPED or
 * MAP_NEEDS_LABEL. */
int rules_map(const struct rules *r, const char *task, const char *host, struct mapping *out);

/* Match one pattern against a path; captures (at most max_caps, each cut at 255 bytes) are
 * written to caps. Returns the number of captures, or -1 for no match. */
int rules_match(const char *pattern, const char *path, char caps[][256], int max_caps);

/* Parse a class name (ours or a Kubernetes QoS class); returns CPI2_TASK_CLASS_* or -1. */
int rules_parse_class(const char *name);

/* Free everything. */
void rules_free(struct rules *r);

#endif
