/* Scenario parser: every shipped scenario parses; malformed files give an error with the file
 * and line and never crash (mutation fuzzing; run under AddressSanitizer when built with it). */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../src/rng.h"
#include "../src/scenario.h"
#include "check.h"

#ifndef SCENARIO_DIR
#error "SCENARIO_DIR must name the folder of the shipped scenarios"
#endif

static const char *minimal = "[scenario]\nname = t\n"
			     "[platform p]\n"
			     "[hosts h]\ncount = 5\nplatform = p\n"
			     "[job j]\nplace = h:5\n";

static void test_minimal_and_defaults(void)
{
	struct scenario *s;
	char err[512] = "";

	CHECK(scenario_parse(minimal, "min", &s, err, sizeof(err)) == 0, "%s", err);
	if (!s)
		return;
	CHECK(s->nhosts == 5 && s->njobs == 1 && s->jobs[0].ntasks == 5, "fleet %d/%d/%d",
	      s->nhosts, s->njobs, s->jobs[0].ntasks);
	CHECK(s->jobs[0].task_class == CPI2_TASK_CLASS_BATCH, "default class %d",
	      s->jobs[0].task_class);
	CHECK(s->warmup_s == 6 * 3600 && s->duration_s == 7200, "defaults %f %f", s->warmup_s,
	      s->duration_s);
	CHECK(s->hosts[0].cpus == 64, "default cpus %d", s->hosts[0].cpus);
	char name[64];
	scenario_host_name(s, 0, 3, name, sizeof(name));
	CHECK(!strcmp(name, "h-003"), "host name %s", name);
	scenario_delete(s);
}

static void test_templates_and_durations(void)
{
	const char *text = "[scenario]\nname = t\nduration = 1h30\n";
	struct scenario *s;
	char err[512];

	/* "1h30" is not a duration: a bare number only alone */
	CHECK(scenario_parse(text, "d", &s, err, sizeof(err)) == -EINVAL && strstr(err, "d:3:"),
	      "got '%s'", err);
	text = "[scenario]\nname = t\nduration = 1h30m\nwarmup = 0.5d\n[platform p]\n"
	       "[hosts a]\nplatform = p\ncpus = 16\n[hosts g]\ncount = 4\nplatform = p\n"
	       "[job x-{i}-y]\ncount = 12\nplace = a:1, g:4\n"
	       "[event]\ntask = x-11-y/4\ncpu = 3\nstart = 10m\n";
	CHECK(scenario_parse(text, "t", &s, err, sizeof(err)) == 0, "%s", err);
	if (!s)
		return;
	CHECK(s->duration_s == 5400 && s->warmup_s == 43200, "durations %f %f", s->duration_s,
	      s->warmup_s);
	CHECK(s->hosts[0].cpus == 16 && s->hosts[1].cpus == 64, "cpus %d %d", s->hosts[0].cpus,
	      s->hosts[1].cpus);
	CHECK(s->njobs == 12 && !strcmp(s->jobs[0].name, "x-00-y") &&
		  !strcmp(s->jobs[11].name, "x-11-y"),
	      "template expansion: %d jobs", s->njobs);
	CHECK(s->events[0].job == 11 && s->events[0].task_index == 4 && s->events[0].end_s == 5400,
	      "event resolved to job %d task %d end %f", s->events[0].job, s->events[0].task_index,
	      s->events[0].end_s);
	scenario_delete(s);
}

/* Each malformed text must fail with "FILE:LINE:" and a phrase saying what is wrong. */
static void test_errors(void)
{
	static const struct {
		const char *text;
		int line;
		const char *phrase;
	} cases[] = {
	    {"[scenario]\nname = t\nfoo = 1\n", 3, "unknown key 'foo'"},
	    {"name = t\n", 1, "outside any section"},
	    {"[scenario]\nname = bad name\n", 2, "not a name"},
	    {"[scenario\nname = t\n", 1, "section header"},
	    {"[scenario]\nname = t\n[weird]\n", 3, "unknown section"},
	    {"[scenario]\njust words\n", 2, "expected 'key = value'"},
	    {"[scenario]\nname = t\nwarmup = -1h\n", 3, "not a duration"},
	    {"[scenario]\nname = t\nwarmup = 2x\n", 3, "not a duration"},
	    {"[scenario]\nname = t\n[platform p]\nghz = fast\n", 4, "not a number"},
	    {"[scenario]\nname = t\n[platform p]\nghz = 1e400\n", 4, "not a number"},
	    {"[scenario]\nname = t\n[platform p]\nghz = 0\n", 4, "out of range"},
	    {"[scenario]\nname = t\n[platform p]\nlabel = a\"b\n", 4, "label"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\ncount = 0\n", 5, "out of range"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\ncpus = 0\n", 5, "out of range"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\ncount = 99999999999999999999\n", 5,
	     "not an integer"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = q\n", 4,
	     "platform 'q' is not defined"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h\n", 7,
	     "TARGET:COUNT"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:x\n",
	     7, "count"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = z:5\n",
	     7, "no host or [hosts] 'z'"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:4\n",
	     6, "a spec needs >= 5"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nclass = vip\n",
	     7, "class"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j-{i}]\nplace = "
	     "h:5\n",
	     6, "'{i}' needs count > 1"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = k/0\ncpu = 1\n",
	     8, "no job 'k'"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/5\ncpu = 1\n",
	     8, "has 5 tasks"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\n",
	     8, "missing cpu"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\ncpu = 1\nstart = 2h\nend = 1h\n",
	     8, "end must be after start"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\npattern = zigzag\n",
	     10, "pattern"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[job j]\nplace = h:5\n",
	     8, "defined twice"},
	    {"[scenario]\n[platform p]\n", 1, "missing [scenario] name"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\ncpu = 1\nvictims = j/1, j\n",
	     11, "victims: 'j' is not JOB/INDEX"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\ncpu = 1\nvictims = j/7\n",
	     8, "victim 'j/7': job 'j' has 5 tasks"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\nkind = self-inflicted\ntask = j/0\ncpu = 1\ncpu_low = 0.1\nvictims = j/1\n",
	     8, "victims is for kind = antagonist"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\ncpu = 1\nduty = 1\n",
	     11, "out of range"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\nkind = vanish\n",
	     10, "is not antagonist, self-inflicted, gap"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[task k/0]\ncpu = 1\n",
	     8, "task 'k/0': no job 'k'"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[task j]\n",
	     8, "[task]: 'j' is not JOB/INDEX"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[task j/1]\nlevel = 1\n",
	     9, "unknown key 'level' in [task]"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\nskew = +3s\n", 6,
	     "not a duration"},
	    {"[scenario]\nname = t\n[platform p]\n[job j]\nmissing = 2\n", 5, "out of range"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\nkind = shift\ntask = j/0\n",
	     8, "kind = shift needs job = NAME"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\nkind = shift\njob = k\n",
	     8, "no job 'k'"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\ncpu = 1\njob = j\n",
	     8, "job is for kind = shift"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\nkind = shift\njob = j\ncpi_factor = 0\n",
	     11, "out of range"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\nkind = move\ntask = j/0\nhost = z\n",
	     8, "kind = move needs host"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\ntask = j/0\ncpu = 1\nhost = h\n",
	     8, "host is for kind = move"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "[event]\nkind = gap\ntask = j/0\npattern = bursts\n",
	     8, "pattern bursts is for kind = antagonist"},
	    {"[scenario]\nname = t\n[platform p]\n[hosts h]\nplatform = p\n[job j]\nplace = h:5\n"
	     "peak = 25h\n",
	     6, "peak must be under 1d"},
	};
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct scenario *s = (struct scenario *)1;
		char err[512] = "", want[32];
		int rc = scenario_parse(cases[i].text, "bad.scn", &s, err, sizeof(err));
		snprintf(want, sizeof(want), "bad.scn:%d: ", cases[i].line);
		CHECK(rc == -EINVAL && s == NULL, "case %u: rc %d", i, rc);
		CHECK(strstr(err, want) == err, "case %u: want '%s...', got '%s'", i, want, err);
		CHECK(strstr(err, cases[i].phrase), "case %u: want '%s' in '%s'", i,
		      cases[i].phrase, err);
	}
	char err[512] = "";
	struct scenario *s;
	CHECK(scenario_load("/nonexistent/x.scn", &s, err, sizeof(err)) == -ENOENT &&
		  strstr(err, "/nonexistent/x.scn: "),
	      "missing file: '%s'", err);
}

static char *read_all(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	} else if (buf) {
		buf[n] = 0;
	}
	fclose(f);
	return buf;
}

/* Mutates a valid file many ways; parsing must return 0 or -EINVAL with "file:line:". */
static void fuzz(const char *name, const char *text)
{
	static const char *junk[] = {"[",    "]", "=",	  "\n",	      "{i}",
				     ":",    ",", "/",	  "-",	      "1e308",
				     "nan",  "#", "[job", "place = ", "count = 100000",
				     "\xff", " "};
	size_t n = strlen(text);
	struct rng r;
	char *buf = malloc(n + 64);

	rng_seed(&r, 12345);
	for (int iter = 0; iter < 1500; iter++) {
		struct scenario *s;
		char err[512] = "";
		size_t pos = rng_next(&r) % (n + 1);

		memcpy(buf, text, n + 1);
		switch (iter % 4) {
		case 0: /* truncate */
			buf[pos] = 0;
			break;
		case 1: /* flip a byte to something printable or not */
			if (pos < n)
				buf[pos] = (char)(rng_next(&r) % 255 + 1);
			break;
		case 2: { /* insert junk */
			const char *j = junk[rng_next(&r) % (sizeof(junk) / sizeof(junk[0]))];
			size_t jl = strlen(j);
			memmove(buf + pos + jl, buf + pos, n - pos + 1);
			memcpy(buf + pos, j, jl);
			break;
		}
		default: /* delete a span */
			if (pos < n) {
				size_t len = rng_next(&r) % 40;
				if (pos + len > n)
					len = n - pos;
				memmove(buf + pos, buf + pos + len, n - pos - len + 1);
			}
		}
		int rc = scenario_parse(buf, name, &s, err, sizeof(err));
		CHECK(rc == 0 || (rc == -EINVAL && strstr(err, name) == err && strchr(err, ':')),
		      "%s mutation %d: rc %d err '%s'", name, iter, rc, err);
		scenario_delete(s);
	}
	free(buf);
}

static void test_shipped_scenarios(void)
{
	DIR *d = opendir(SCENARIO_DIR);
	struct dirent *e;
	int found = 0;

	CHECK(d != NULL, "cannot open %s", SCENARIO_DIR);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char path[1024], err[512] = "";
		struct scenario *s;
		size_t l = strlen(e->d_name);
		if (l < 5 || strcmp(e->d_name + l - 4, ".scn"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", SCENARIO_DIR, e->d_name);
		CHECK(scenario_load(path, &s, err, sizeof(err)) == 0, "%s", err);
		scenario_delete(s);
		char *text = read_all(path);
		if (text)
			fuzz(e->d_name, text);
		free(text);
		found++;
	}
	closedir(d);
	CHECK(found >= 6, "only %d scenarios in %s (cases 1-4, steady, fleet)", found,
	      SCENARIO_DIR);
}

int main(void)
{
	test_minimal_and_defaults();
	test_templates_and_durations();
	test_errors();
	test_shipped_scenarios();
	printf("test-scenario: ok\n");
	return 0;
}
