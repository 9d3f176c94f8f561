/* Fuzz target: the enforcer's path from message bytes to cgroup writes, on a fake cgroup tree
 * (in /dev/shm when there is one, else /tmp), with its clock and expiries.
 *
 * An input is a sequence of records: kind (1 byte), clock step (1 byte, in 10 s), length (2
 * bytes, little-endian), then that many bytes. kind % 5: 0 an Incident, 1 a ControlCommand (Avro
 * single-object bytes, decoded as cpi2-enforcer decodes them), 2 the clock only, 3 a restart
 * (a new enforcer recovers from the state file), 4 the kubelet (another writer) on one of the
 * tasks with cpu.idle, by the kernel's rules: its first byte picks the task, its second what it
 * does (write a CPU weight of its own, refused while cpu.idle is 1; or clear cpu.idle, which
 * gives the default weight). Messages for host "fuzz-host" (or the cluster) are decided and
 * applied exactly as in cpi2-enforcer; expiries run at every step.
 *
 * Invariants, checked after every record (abort on violation):
 * - no file outside the root changes; inside it, only cpu.max / cpu.cfs_quota_us /
 *   cpu.cfs_period_us / cpu.weight / cpu.shares / cpu.idle of a leaf task cgroup that is not
 *   protected;
 * - no limit and no CPU weight is above the one the tree started with or the kubelet wrote, and
 *   cpu.idle is never cleared where the kubelet left it 0 or set (caps only lower);
 * and at the end of the input, once the clock is past every expiry, the whole tree (outside
 * included) is byte for byte what it was, but for what the kubelet wrote: that is left as it
 * wrote it, never fought nor undone. Leak detection is on (libFuzzer checks every input that
 * allocates more than it frees): lsan.h tells LeakSanitizer to scan the unaligned words libavro
 * keeps a union's branch in. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cpi2/log.h>
#include <cpi2/wire.h>

#include "../src/decide.h"
#include "../src/messages.h"
#include "faketree.h"
#include "lsan.h"
#include "testhost.h"

#define MAX_FILES 64

static char base[PATH_MAX], root[PATH_MAX + 8], outside[PATH_MAX + 16], state[PATH_MAX + 16],
    prot[PATH_MAX + 16], journal[PATH_MAX + 32];
static struct cpi2_codec *incident_codec, *command_codec;
static bool cluster_off;

/* The tree as it started: every regular file below base. */
static struct file {
	char path[PATH_MAX];
	char text[128];
} initial[MAX_FILES];
static int n_initial;

/* Leaf task cgroups that may be written, with their starting limit in CPUs (-1 none). */
static const char *const writable[] = {"batch/a", "batch/b", "batch/c", "kube/pod/ctr"};

/* The tasks with cpu.idle (where the kubelet acts), their version, and the weights it writes:
 * never the lowest nor the default, which a cap's own values would not be told apart from. */
static const struct {
	const char *task;
	int version;
} kubelet_tasks[] = {{"batch/a", 2}, {"batch/c", 1}, {"kube/pod/ctr", 2}};
static const char *const kubelet_weights[2][2] = {{"700", "5000"}, {"300", "40"}}; /* v1, v2 */

/* What each file must hold at the end: the tree's start, or what the kubelet wrote. */
static struct file expected[MAX_FILES];

static void snapshot(struct file *out, int *n, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		abort();
	while ((de = readdir(d)) != NULL) {
		char p[PATH_MAX];
		struct stat st;

		if (de->d_name[0] == '.' || strstr(de->d_name, ".tmp"))
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		if (lstat(p, &st) != 0)
			abort();
		if (S_ISDIR(st.st_mode)) {
			snapshot(out, n, p);
		} else if (S_ISREG(st.st_mode) &&
			   strcmp(dir, base) != 0) { /* base holds the state files */
			FILE *f = fopen(p, "r");
			size_t len;

			if (*n == MAX_FILES || !f)
				abort();
			snprintf(out[*n].path, sizeof(out[*n].path), "%s", p);
			len = fread(out[*n].text, 1, sizeof(out[*n].text) - 1, f);
			out[*n].text[len] = '\0';
			fclose(f);
			(*n)++;
		}
	}
	closedir(d);
}

static const struct file *find(const struct file *v, int n, const char *path)
{
	for (int i = 0; i < n; i++)
		if (strcmp(v[i].path, path) == 0)
			return &v[i];
	return NULL;
}

/* CPU-sec/sec of a cgroup's limit in snapshot v (-1: none), v2 or v1. */
static double limit_of(const struct file *v, int n, const char *dir)
{
	char p[PATH_MAX], q[PATH_MAX];
	const struct file *f;

	snprintf(p, sizeof(p), "%s/cpu.max", dir);
	if ((f = find(v, n, p)) != NULL)
		return limits_cpu(LIMITS_V2, f->text);
	snprintf(p, sizeof(p), "%s/cpu.cfs_quota_us", dir);
	snprintf(q, sizeof(q), "%s/cpu.cfs_period_us", dir);
	const struct file *fq = find(v, n, p), *fp = find(v, n, q);
	char text[300];

	if (!fq || !fp)
		abort();
	snprintf(text, sizeof(text), "%.*s %.*s", (int)strcspn(fq->text, "\n"), fq->text,
		 (int)strcspn(fp->text, "\n"), fp->text);
	return limits_cpu(LIMITS_V1, text);
}

static void check_tree(bool end)
{
	static struct file now[MAX_FILES];
	int n = 0;

	snapshot(now, &n, base);
	if (n != n_initial) {
		fprintf(stderr, "fuzz: %d files in the tree, %d at start\n", n, n_initial);
		abort();
	}
	for (int i = 0; i < n; i++) {
		const struct file *f = find(expected, n_initial, now[i].path);
		const char *name = strrchr(now[i].path, '/') + 1;
		char dir[PATH_MAX];
		bool ok = false;

		if (!f)
			abort(); /* a file that was not there */
		if (strcmp(f->text, now[i].text) == 0)
			continue;
		if (end) {
			fprintf(stderr,
				"fuzz: %s is '%s' after every expiry, '%s' at start or as the "
				"kubelet left it\n",
				now[i].path, now[i].text, f->text);
			abort();
		}
		snprintf(dir, sizeof(dir), "%.*s", (int)(name - 1 - now[i].path), now[i].path);
		for (size_t k = 0; k < sizeof(writable) / sizeof(writable[0]); k++) {
			char w[PATH_MAX + 64];

			snprintf(w, sizeof(w), "%s/%s", root, writable[k]);
			ok |= strcmp(dir, w) == 0;
		}
		if (ok && (strcmp(name, "cpu.weight") == 0 || strcmp(name, "cpu.shares") == 0)) {
			/* the cap's weight: only ever lowered */
			if (atol(now[i].text) > atol(f->text)) {
				fprintf(stderr, "fuzz: %s raised from %s to %s\n", now[i].path,
					f->text, now[i].text);
				abort();
			}
			continue;
		}
		if (ok && strcmp(name, "cpu.idle") == 0) {
			/* set with a cap where it was 0, never cleared where it was set */
			if (atol(now[i].text) < atol(f->text)) {
				fprintf(stderr, "fuzz: %s cleared from %s to %s\n", now[i].path,
					f->text, now[i].text);
				abort();
			}
			continue;
		}
		if (!ok || (strcmp(name, "cpu.max") && strcmp(name, "cpu.cfs_quota_us") &&
			    strcmp(name, "cpu.cfs_period_us"))) {
			fprintf(
			    stderr,
			    "fuzz: %s changed: not a limit file of a leaf task below the root\n",
			    now[i].path);
			abort();
		}
		double was = limit_of(expected, n_initial, dir), is = limit_of(now, n, dir);

		if (was >= 0 &&
		    (is < 0 || is > was + 1e-9)) { /* was < 0: no limit, nothing to raise */
			fprintf(stderr, "fuzz: %s raised from %g to %g CPU\n", dir, was, is);
			abort();
		}
	}
}

static void init_host(struct host_enforcer *h, int64_t *rate_clock)
{
	test_host_init(h, "fuzz-host", root, state, prot, &cluster_off);
	h->max_cap_us_per_day = 1800LL * 1000000;
	decide_bucket_init(&h->new_caps, 1, 2);
	decide_bucket_init(&h->renewals, 2, 4);
	h->rate_clock_us = rate_clock;
	h->caps.cap_weight = true; /* as cpi2-enforcer's default */
	h->caps.cap_idle = true;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256], d[PATH_MAX];

	(void)argc;
	(void)argv;
	cpi2_log_set_level(CPI2_LOG_ERR);
	snprintf(base, sizeof(base), "%s/cpi2-enforcer-fuzz-XXXXXX",
		 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
	if (!mkdtemp(base))
		abort();
	snprintf(root, sizeof(root), "%s/root", base);
	snprintf(outside, sizeof(outside), "%s/outside", base);
	snprintf(state, sizeof(state), "%s/fuzz-host.caps", base);
	snprintf(journal, sizeof(journal), "%s.released", state);
	snprintf(prot, sizeof(prot), "%s/fuzz-host.protection", base);
	/* limit files without a trailing newline, as the enforcer writes them: compared byte for
	 * byte */
	static const struct {
		const char *base, *rel;
		int version;
		const char *file, *text;
	} tree[] = {
	    {root, "batch/a", 2, "cpu.max", "max 100000"},
	    {root, "batch/a", 2, "cpu.weight", "100"},
	    {root, "batch/a", 2, "cpu.idle", "0"},
	    {root, "batch/b", 2, "cpu.max", "50000 100000"},
	    {root, "batch/b", 2, "cpu.weight", "1"},
	    {root, "batch/c", 1, "cpu.cfs_quota_us", "30000"},
	    {root, "batch/c", 1, "cpu.cfs_period_us", "100000"},
	    {root, "batch/c", 1, "cpu.shares", "8192"},
	    {root, "batch/c", 1, "cpu.idle", "0"},
	    {root, "kube/pod", 2, "cpu.max", "max 100000"},
	    {root, "kube/pod", 2, "cpu.weight", "100"},
	    {root, "kube/pod/ctr", 2, "cpu.max", "20000 100000"},
	    {root, "kube/pod/ctr", 2, "cpu.weight", "39"},
	    {root, "kube/pod/ctr", 2, "cpu.idle", "0"},
	    {root, "system.slice/sshd", 2, "cpu.max", "max 100000"},
	    {root, "system.slice/sshd", 2, "cpu.weight", "100"},
	    {outside, "x", 2, "cpu.max", "max 100000"},
	    {outside, "x", 2, "cpu.weight", "100"},
	};
	for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
		if (i == 0 || strcmp(tree[i].rel, tree[i - 1].rel) != 0)
			fake_cgroup(tree[i].base, tree[i].rel, tree[i].version, d, sizeof(d));
		fake_write(d, tree[i].file, tree[i].text);
	}
	fake_sh("ln -s ../outside '%s/link' && ln -s a '%s/batch/alias' && ln -s "
		"../../outside/x/cpu.max '%s/batch/a/evil'",
		root, root, root);
	snapshot(initial, &n_initial, base);
	memcpy(expected, initial, sizeof(expected));
	if (cpi2_codec_open(&incident_codec, "Incident", err, sizeof(err)) ||
	    cpi2_codec_open(&command_codec, "ControlCommand", err, sizeof(err))) {
		fprintf(stderr, "fuzz: %s\n", err);
		abort();
	}
	return 0;
}

/* Set file (below root/task) to text, and what it must hold at the end. */
static void kubelet_write(const char *task, const char *file, const char *text)
{
	char dir[PATH_MAX + 64], path[PATH_MAX + 96];

	snprintf(dir, sizeof(dir), "%s/%s", root, task);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fake_write(dir, file, text);
	for (int i = 0; i < n_initial; i++)
		if (strcmp(expected[i].path, path) == 0)
			snprintf(expected[i].text, sizeof(expected[i].text), "%s", text);
}

/* The kubelet on a task with cpu.idle, by the kernel's rules. */
static void kubelet(const uint8_t *p, size_t len)
{
	size_t k;
	int version;
	const char *weight_file, *idle;
	char dir[PATH_MAX + 64];

	if (len < 2)
		return;
	k = p[0] % (sizeof(kubelet_tasks) / sizeof(kubelet_tasks[0]));
	version = kubelet_tasks[k].version;
	weight_file = version == 2 ? "cpu.weight" : "cpu.shares";
	snprintf(dir, sizeof(dir), "%s/%s", root, kubelet_tasks[k].task);
	idle = fake_read(dir, "cpu.idle");
	if (p[1] % 3 < 2) {
		/* a weight of its own (a pod's resize): refused while cpu.idle is set */
		if (strcmp(idle, "1") != 0)
			kubelet_write(kubelet_tasks[k].task, weight_file,
				      kubelet_weights[version - 1][p[1] % 3]);
	} else if (strcmp(idle, "1") == 0) {
		/* cpu.idle cleared: the kernel gives the default weight */
		kubelet_write(kubelet_tasks[k].task, "cpu.idle", "0");
		kubelet_write(kubelet_tasks[k].task, weight_file, version == 2 ? "100" : "1024");
	}
}

static void message(struct host_enforcer *h, int kind, const uint8_t *p, size_t len, int64_t now)
{
	static struct action a[CAPS_MAX + 1];
	avro_value_t *rec;
	char err[512];

	if (kind == 0) {
		struct incident_in in;

		if (cpi2_codec_decode(incident_codec, p, len, &rec, err, sizeof(err)) ||
		    messages_incident(rec, &in, err, sizeof(err)) || strcmp(in.host, h->host) != 0)
			return;
		decide_incident(h, &in, now, &a[0]);
	} else {
		struct command_in in;

		if (cpi2_codec_decode(command_codec, p, len, &rec, err, sizeof(err)) ||
		    messages_command(rec, &in, err, sizeof(err)) ||
		    (in.host && strcmp(in.host, h->host) != 0))
			return;
		if (!in.host && (in.command == CPI2_COMMAND_KIND_PROTECTION_OFF ||
				 in.command == CPI2_COMMAND_KIND_PROTECTION_ON))
			cluster_off = in.command == CPI2_COMMAND_KIND_PROTECTION_OFF;
		decide_command(h, &in, now, a, CAPS_MAX + 1);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct host_enforcer h;
	static struct action a[CAPS_MAX + 1];
	int64_t now = 1700000000LL * 1000000, rate_clock = 1;
	char err[512];

	unlink(state);
	unlink(journal);
	unlink(prot);
	cluster_off = false;
	/* the tree as it started (the kubelet's writes of the last input undone) */
	for (int i = 0; i < n_initial; i++) {
		FILE *f = fopen(initial[i].path, "w");

		if (!f || fputs(initial[i].text, f) == EOF || fclose(f) != 0)
			abort();
	}
	memcpy(expected, initial, sizeof(expected));
	init_host(&h, &rate_clock);
	while (size >= 4) {
		int kind = data[0] % 5;
		int64_t step = (int64_t)data[1] * 10 * 1000000;
		size_t len = (size_t)data[2] | (size_t)data[3] << 8;

		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		now += step;
		rate_clock += step;
		if (kind == 3) {
			init_host(&h, &rate_clock);
			decide_load_protection(&h);
			decide_recover(&h, now, a, CAPS_MAX + 1, err, sizeof(err));
		} else if (kind < 2) {
			message(&h, kind, data, len, now);
		} else if (kind == 4) {
			kubelet(data, len);
		}
		while (decide_expiry(&h, now, &a[0]) == 1)
			;
		check_tree(false);
		data += len;
		size -= len;
	}
	/* past every expiry (and the ten-second retries of failed releases) */
	for (int i = 0; i < 10 && h.caps.n; i++) {
		now += 3LL * 86400 * 1000000;
		while (decide_expiry(&h, now, &a[0]) == 1)
			;
	}
	if (h.caps.n) {
		fprintf(stderr, "fuzz: %d caps still in force after every expiry\n", h.caps.n);
		abort();
	}
	check_tree(true);
	return 0;
}
