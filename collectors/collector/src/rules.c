/* rules: see rules.h. */
#include "rules.h"

#include <cpi2/sample.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define MAX_CAPS 9

const char cpi2_default_rules[] =
    "# Kubernetes: a pod is a task, and only the labels file (cpi2-k8s-identity) knows its job\n"
    "# (namespace/workload): a pod the file does not name is reported and not published\n"
    "# systemd cgroup driver\n"
    "kubepods.slice                                            ignore\n"
    "kubepods.slice/kubepods-pod*.slice                        needs-label\n"
    "kubepods.slice/kubepods-*.slice                           ignore\n"
    "kubepods.slice/kubepods-*.slice/kubepods-*-pod*.slice     needs-label\n"
    "kubepods.slice/**                                         ignore\n"
    "# cgroupfs driver\n"
    "kubepods                                                  ignore\n"
    "kubepods/pod*                                             needs-label\n"
    "kubepods/besteffort                                       ignore\n"
    "kubepods/burstable                                        ignore\n"
    "kubepods/*/pod*                                           needs-label\n"
    "kubepods/**                                               ignore\n"
    "# systemd: services are latency-sensitive (never capped automatically), VMs and containers\n"
    "# of machined are batch, user sessions best-effort\n"
    "system.slice                                              ignore\n"
    "system.slice/*.service                                    job=$1 task_id=$host "
    "class=latency_sensitive\n"
    "system.slice/**                                           ignore\n"
    "machine.slice                                             ignore\n"
    "machine.slice/*.scope                                     job=$1 task_id=$host class=batch\n"
    "machine.slice/**                                          ignore\n"
    "user.slice                                                ignore\n"
    "user.slice/user-*.slice                                   job=user-sessions task_id=$1@$host "
    "class=best_effort\n"
    "user.slice/**                                             ignore\n"
    "init.scope                                                ignore\n";

int rules_parse_class(const char *name)
{
	static const struct {
		const char *name;
		int tc;
	} names[] = {{"latency_sensitive", CPI2_TASK_CLASS_LATENCY_SENSITIVE},
		     {"batch", CPI2_TASK_CLASS_BATCH},
		     {"best_effort", CPI2_TASK_CLASS_BEST_EFFORT},
		     {"unknown", CPI2_TASK_CLASS_UNKNOWN},
		     {"guaranteed", CPI2_TASK_CLASS_LATENCY_SENSITIVE},
		     {"burstable", CPI2_TASK_CLASS_BATCH},
		     {"besteffort", CPI2_TASK_CLASS_BEST_EFFORT}};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcasecmp(name, names[i].name))
			return names[i].tc;
	return -1;
}

static void capture(char *dst, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	if (n > 255)
		n = 255;
	memcpy(dst, s, n);
	dst[n] = '\0';
}

/* glob one segment: '*' matches the shortest text that lets the rest match. Backtracking is
 * bounded (*budget steps) so that no cgroup name can make a pattern take long: past the bound
 * the segment does not match. */
static bool seg_match(const char *p, const char *pe, const char *s, const char *se,
		      char caps[][256], int *nc, int max, long *budget)
{
	if (--*budget < 0)
		return false;
	if (p == pe)
		return s == se;
	if (*p == '*') {
		int mine = *nc;

		for (const char *t = s; t <= se; t++) {
			*nc = mine + 1;
			if (seg_match(p + 1, pe, t, se, caps, nc, max, budget)) {
				if (mine < max)
					capture(caps[mine], s, t);
				return true;
			}
		}
		*nc = mine;
		return false;
	}
	if (s == se || *p != *s)
		return false;
	return seg_match(p + 1, pe, s + 1, se, caps, nc, max, budget);
}

int rules_match(const char *pattern, const char *path, char caps[][256], int max_caps)
{
	const char *p = pattern, *s = path;
	long budget = 100000;
	int nc = 0;

	for (;;) {
		const char *pe = strchrnul(p, '/'), *se = strchrnul(s, '/');

		if (pe - p == 2 && p[0] == '*' && p[1] == '*' && !*pe) {
			if (!*s)
				return -1;
			if (nc < max_caps)
				capture(caps[nc], s, s + strlen(s));
			return nc + 1;
		}
		if (!seg_match(p, pe, s, se, caps, &nc, max_caps, &budget))
			return -1;
		if (!*pe || !*se)
			return (!*pe && !*se) ? nc : -1;
		p = pe + 1;
		s = se + 1;
	}
}

/* expand $0..$9 and $host into out; false if it does not fit */
static bool expand(const char *tpl, const char *path, char caps[][256], int nc, const char *host,
		   char *out, size_t size)
{
	size_t o = 0;

	for (const char *t = tpl; *t; t++) {
		const char *add = NULL;
		char one[2] = {*t, '\0'};

		if (t[0] == '$' && t[1] >= '0' && t[1] <= '9') {
			int i = t[1] - '0';

			add = i == 0 ? path : i <= nc && i <= MAX_CAPS ? caps[i - 1] : "";
			t++;
		} else if (!strncmp(t, "$host", 5)) {
			add = host;
			t += 4;
		} else {
			add = one;
		}
		size_t n = strlen(add);

		if (o + n >= size)
			return false;
		memcpy(out + o, add, n);
		o += n;
	}
	out[o] = '\0';
	return true;
}

static int parse_line(struct rules *r, char *line, char *err, size_t errsz)
{
	struct rule rule = {0};
	char *save = NULL, *tok = strtok_r(line, " \t", &save);
	int stars = 0;

	rule.task_id = "$host";
	for (const char *c = tok; *c; c++)
		stars += *c == '*';
	if (stars > MAX_CAPS) {
		snprintf(err, errsz, "pattern '%s' has more than %d wildcards", tok, MAX_CAPS);
		return -EINVAL;
	}
	if (tok[0] == '/' || strstr(tok, "//")) {
		snprintf(err, errsz,
			 "pattern '%s': task paths are relative, without empty segments", tok);
		return -EINVAL;
	}
	rule.pattern = tok;
	while ((tok = strtok_r(NULL, " \t", &save))) {
		if (!strcmp(tok, "ignore"))
			rule.ignore = true;
		else if (!strcmp(tok, "needs-label"))
			rule.needs_label = true;
		else if (!strcmp(tok, "protected"))
			rule.is_protected = true;
		else if (!strncmp(tok, "job=", 4) && tok[4])
			rule.job = tok + 4;
		else if (!strncmp(tok, "task_id=", 8) && tok[8])
			rule.task_id = tok + 8;
		else if (!strncmp(tok, "class=", 6) && tok[6])
			rule.task_class = tok + 6;
		else {
			snprintf(err, errsz,
				 "'%s': expected ignore, needs-label, job=, task_id=, class= or "
				 "protected",
				 tok);
			return -EINVAL;
		}
	}
	if (rule.ignore && rule.needs_label) {
		snprintf(err, errsz, "rule for '%s': ignore or needs-label, not both",
			 rule.pattern);
		return -EINVAL;
	}
	if (!rule.ignore && !rule.needs_label && (!rule.job || !rule.task_class)) {
		snprintf(err, errsz, "rule for '%s' needs job= and class= (or ignore, needs-label)",
			 rule.pattern);
		return -EINVAL;
	}
	if ((rule.ignore || rule.needs_label) &&
	    (rule.job || rule.task_class || rule.is_protected)) {
		snprintf(err, errsz, "rule for '%s': %s takes nothing else", rule.pattern,
			 rule.ignore ? "ignore" : "needs-label");
		return -EINVAL;
	}
	if (rule.task_class && !strchr(rule.task_class, '$') &&
	    rules_parse_class(rule.task_class) < 0) {
		snprintf(err, errsz,
			 "unknown class '%s' (latency_sensitive, batch, best_effort, unknown, "
			 "guaranteed, burstable, besteffort)",
			 rule.task_class);
		return -EINVAL;
	}
	struct rule *v = realloc(r->v, (r->n + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	r->v = v;
	rule.pattern = strdup(rule.pattern);
	rule.job = rule.job ? strdup(rule.job) : NULL;
	rule.task_id = strdup(rule.task_id);
	rule.task_class = rule.task_class ? strdup(rule.task_class) : NULL;
	r->v[r->n++] = rule;
	if (!rule.pattern || !rule.task_id)
		return -ENOMEM;
	return 0;
}

int rules_parse(struct rules *r, const char *text, const char *origin, char *err, size_t errsz)
{
	char *copy = strdup(text), *line, *save = NULL, msg[384];
	int lineno = 0, rc = 0;

	if (!copy)
		return -ENOMEM;
	/* strtok_r would merge empty lines and lose the numbering: walk by hand */
	for (line = copy; line && !rc; line = save) {
		char *nl = strchr(line, '\n'), *hash, *s;

		save = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		if ((hash = strchr(line, '#')))
			*hash = '\0';
		for (s = line; *s == ' ' || *s == '\t' || *s == '\r'; s++)
			;
		if (!*s)
			continue;
		for (char *e = s + strlen(s);
		     e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t');)
			*--e = '\0';
		rc = parse_line(r, s, msg, sizeof(msg));
		if (rc)
			snprintf(err, errsz, "%s:%d: %s", origin, lineno, msg);
	}
	free(copy);
	return rc;
}

static int slurp(const char *path, char **out, struct timespec *mtime, char *err, size_t errsz)
{
	FILE *f = fopen(path, "re");
	struct stat st;
	char *buf;
	size_t n;

	if (!f) {
		int e = errno;

		snprintf(err, errsz, "%s: %s", path, strerror(e));
		return -e;
	}
	if (fstat(fileno(f), &st) || st.st_size > (16 << 20)) {
		snprintf(err, errsz, "%s: cannot stat, or larger than 16 MiB", path);
		fclose(f);
		return -EFBIG;
	}
	buf = malloc((size_t)st.st_size + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, (size_t)st.st_size, f);
	buf[n] = '\0';
	fclose(f);
	if (mtime)
		*mtime = st.st_mtim;
	*out = buf;
	return 0;
}

int rules_load(struct rules *r, const char *path, char *err, size_t errsz)
{
	char *text = NULL;
	int rc = slurp(path, &text, NULL, err, errsz);

	if (rc)
		return rc;
	rc = rules_parse(r, text, path, err, errsz);
	free(text);
	return rc;
}

static int by_task(const void *a, const void *b)
{
	return strcmp(((const struct label *)a)->task, ((const struct label *)b)->task);
}

static void labels_free(struct label *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].task);
		free(v[i].job);
		free(v[i].task_id);
		free(v[i].scrape.url);
		free(v[i].scrape.work);
		free(v[i].scrape.latency);
		free(v[i].scrape.quantile);
	}
	free(v);
}

/* Split a line into at most max tokens at blanks: double quotes keep blanks and '#' inside a
 * token (a backslash keeps the next character inside them); '#' outside quotes ends the line.
 * Returns the number of tokens, max + 1 when there are more, or -1 for a quote left open. */
static int label_tokens(char *line, char **tok, int max)
{
	int n = 0;
	char *p = line;

	for (;;) {
		bool quoted = false;

		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			return n;
		if (n == max)
			return max + 1;
		tok[n++] = p;
		for (; *p; p++) {
			if (quoted && *p == '\\' && p[1]) {
				p++;
				continue;
			}
			if (*p == '"')
				quoted = !quoted;
			else if (!quoted && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '#'))
				break;
		}
		if (quoted)
			return -1;
		if (*p == '#') {
			*p = '\0';
			return n;
		}
		if (*p)
			*p++ = '\0';
	}
}

/* the options after CLASS: protected, scrape=, work=, latency=, latency_quantile= */
static const char *label_options(char **tok, int nt, struct label *l)
{
	static const char *const keys[] = {"scrape=", "work=", "latency=", "latency_quantile="};
	char **fields[] = {&l->scrape.url, &l->scrape.work, &l->scrape.latency,
			   &l->scrape.quantile};

	for (int i = 0; i < nt; i++) {
		size_t k;

		if (!strcmp(tok[i], "protected")) {
			l->is_protected = true;
			continue;
		}
		for (k = 0; k < 4; k++)
			if (!strncmp(tok[i], keys[k], strlen(keys[k])))
				break;
		if (k == 4 || !tok[i][strlen(keys[k])])
			return "expected protected, scrape=URL, work=SELECTOR, latency=SELECTOR or "
			       "latency_quantile=Q after CLASS";
		if (*fields[k])
			return "an option given twice";
		if (!(*fields[k] = strdup(tok[i] + strlen(keys[k]))))
			return "out of memory";
	}
	if (!l->scrape.url && (l->scrape.work || l->scrape.latency || l->scrape.quantile))
		return "work=, latency= and latency_quantile= need scrape=";
	if (l->scrape.url && !l->scrape.work && !l->scrape.latency)
		return "scrape= needs work= or latency=";
	if (l->scrape.quantile && !l->scrape.latency)
		return "latency_quantile= needs latency=";
	return NULL;
}

/* "TASK JOB TASK_ID CLASS [protected] [scrape=.. work=.. latency=.. latency_quantile=..]" */
static int labels_parse(char *text, const char *path, struct label **out, size_t *count, char *err,
			size_t errsz)
{
	struct label *v = NULL;
	size_t n = 0;
	int lineno = 0;
	char *line, *next;

	for (line = text; line; line = next) {
		char *nl = strchr(line, '\n'), *tok[10];
		const char *why;
		int nt, tc;

		next = nl ? nl + 1 : NULL;
		if (nl)
			*nl = '\0';
		lineno++;
		nt = label_tokens(line, tok, 9);
		if (nt == 0)
			continue;
		if (nt < 0) {
			snprintf(err, errsz, "%s:%d: a double quote left open", path, lineno);
			goto fail;
		}
		if (nt < 4 || nt > 9) {
			snprintf(err, errsz,
				 "%s:%d: expected 'TASK JOB TASK_ID CLASS [protected] [scrape=URL "
				 "work=SELECTOR latency=SELECTOR latency_quantile=Q]'",
				 path, lineno);
			goto fail;
		}
		if ((tc = rules_parse_class(tok[3])) < 0) {
			snprintf(err, errsz, "%s:%d: unknown class '%s'", path, lineno, tok[3]);
			goto fail;
		}
		struct label *nv = realloc(v, (n + 1) * sizeof(*nv));

		if (!nv)
			goto fail;
		v = nv;
		v[n] = (struct label){strdup(tok[0][0] == '/' ? tok[0] + 1 : tok[0]),
				      strdup(tok[1]),
				      strdup(tok[2]),
				      tc,
				      false,
				      {NULL, NULL, NULL, NULL}};
		n++;
		if (!v[n - 1].task || !v[n - 1].job || !v[n - 1].task_id) {
			snprintf(err, errsz, "%s: out of memory", path);
			goto fail;
		}
		if ((why = label_options(tok + 4, nt - 4, &v[n - 1]))) {
			snprintf(err, errsz, "%s:%d: %s", path, lineno, why);
			goto fail;
		}
	}
	if (n > 1)
		qsort(v, n, sizeof(*v), by_task);
	*out = v;
	*count = n;
	return 0;
fail:
	labels_free(v, n);
	return -EINVAL;
}

int rules_labels_refresh(struct rules *r, const char *path, char *err, size_t errsz)
{
	struct timespec mtime;
	struct stat st;
	struct label *v;
	size_t n;
	char *text = NULL;
	int rc;

	if (!path || !path[0])
		return 0;
	if (stat(path, &st) == 0 && !strcmp(r->labels_path, path) &&
	    st.st_mtim.tv_sec == r->labels_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == r->labels_mtime.tv_nsec)
		return 0;
	rc = slurp(path, &text, &mtime, err, errsz);
	if (rc)
		return rc;
	rc = labels_parse(text, path, &v, &n, err, errsz);
	free(text);
	if (rc)
		return rc;
	labels_free(r->labels, r->n_labels);
	r->labels = v;
	r->n_labels = n;
	snprintf(r->labels_path, sizeof(r->labels_path), "%s", path);
	r->labels_mtime = mtime;
	return 0;
}

int rules_map(const struct rules *r, const char *task, const char *host, struct mapping *out)
{
	char caps[MAX_CAPS][256], cls[64];
	struct label key = {.task = (char *)task}, *l;

	memset(out, 0, sizeof(*out));
	l = r->n_labels ? bsearch(&key, r->labels, r->n_labels, sizeof(key), by_task) : NULL;
	if (l) {
		snprintf(out->job, sizeof(out->job), "%s", l->job);
		snprintf(out->task_id, sizeof(out->task_id), "%s", l->task_id);
		out->task_class = l->task_class;
		out->is_protected = l->is_protected;
		out->scrape = l->scrape.url ? &l->scrape : NULL;
		return MAP_TASK;
	}
	for (size_t i = 0; i < r->n; i++) {
		const struct rule *ru = &r->v[i];
		int nc = rules_match(ru->pattern, task, caps, MAX_CAPS);

		if (nc < 0)
			continue;
		if (ru->ignore)
			return MAP_IGNORE;
		if (ru->needs_label)
			return MAP_NEEDS_LABEL;
		if (!expand(ru->job, task, caps, nc, host, out->job, sizeof(out->job)) ||
		    !expand(ru->task_id, task, caps, nc, host, out->task_id,
			    sizeof(out->task_id)) ||
		    !expand(ru->task_class, task, caps, nc, host, cls, sizeof(cls)) ||
		    (out->task_class = rules_parse_class(cls)) < 0)
			return MAP_UNMAPPED; /* the rule matched but made no sense of this path */
		out->is_protected = ru->is_protected;
		return MAP_TASK;
	}
	return MAP_UNMAPPED;
}

void rules_free(struct rules *r)
{
	for (size_t i = 0; i < r->n; i++) {
		free(r->v[i].pattern);
		free(r->v[i].job);
		free(r->v[i].task_id);
		free(r->v[i].task_class);
	}
	free(r->v);
	labels_free(r->labels, r->n_labels);
	memset(r, 0, sizeof(*r));
}
