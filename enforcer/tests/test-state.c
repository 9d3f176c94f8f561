/* The enforcer's state folder: atomic files, the kill switch files, the lock that keeps a
 * second enforcer out, the ids seen (replays across restarts, a log appended to), the writer
 * thread (persist), and the sampler that bounds dead letters. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/persist.h"
#include "../src/sampler.h"
#include "../src/seen.h"
#include "../src/statefile.h"
#include <cpi2/textfile.h>
#include "check.h"
#include "faketree.h"

static void files(const char *root)
{
	char path[PATH_MAX + 16], err[512], buf[64];
	int fd, fd2, status;
	pid_t pid;

	/* atomic write: the content, no temporary left behind */
	snprintf(path, sizeof(path), "%s/f", root);
	CHECK(statefile_write(path, "one\n", 4, err, sizeof(err)) == 0);
	CHECK(statefile_write(path, "two\n", 4, err, sizeof(err)) == 0);
	CHECK(cpi2_read_text_at(AT_FDCWD, path, O_NOFOLLOW, buf, sizeof(buf)) == 4 &&
	      strcmp(buf, "two\n") == 0);
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	CHECK(access(tmp, F_OK) != 0);
	CHECK(statefile_write("/nonexistent-dir/x", "a", 1, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "nonexistent"));

	/* kill switch: remembered; no file is on; a damaged file reads as off (never forgotten) */
	snprintf(path, sizeof(path), "%s/cluster.protection", root);
	CHECK(!statefile_load_switch(path));
	CHECK(statefile_save_switch(path, true, err, sizeof(err)) == 0 &&
	      statefile_load_switch(path));
	CHECK(statefile_save_switch(path, false, err, sizeof(err)) == 0 &&
	      !statefile_load_switch(path));
	fake_write(root, "cluster.protection", "garbage");
	CHECK(statefile_load_switch(path));
	fake_write(root, "cluster.protection", "");
	CHECK(statefile_load_switch(path));

	/* the lock: a second holder (another process) is refused with the first one's pid */
	CHECK(statefile_lock(root, &fd, err, sizeof(err)) == 0 && fd >= 0);
	pid = fork();
	CHECK(pid >= 0);
	if (pid == 0) {
		char want[64];

		snprintf(want, sizeof(want), "pid %ld", (long)getppid());
		_exit(statefile_lock(root, &fd2, err, sizeof(err)) == -EWOULDBLOCK &&
			      strstr(err, want) && strstr(err, "in use")
			  ? 0
			  : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd); /* released: the next one gets it */
	CHECK(statefile_lock(root, &fd, err, sizeof(err)) == 0);
	close(fd);
}

static int lines(const char *path)
{
	char buf[8192];
	int n = 0, fd = open(path, O_RDONLY);
	ssize_t got;

	CHECK(fd >= 0);
	got = read(fd, buf, sizeof(buf));
	close(fd);
	for (ssize_t i = 0; i < got; i++)
		n += buf[i] == '\n';
	return n;
}

static void seen(const char *root)
{
	static struct seen s, again;
	char path[PATH_MAX + 16], err[512], id[32];
	const int64_t t = 1700000000LL * 1000000;

	snprintf(path, sizeof(path), "%s/seen-ids", root);
	CHECK(seen_open(&s, path, 4, 3600LL * 1000000, t, NULL, err, sizeof(err)) == 0 && s.n == 0);
	CHECK(!seen_has(&s, 'i', "inc-1"));
	CHECK(seen_add(&s, 'i', "inc-1", t, err, sizeof(err)) == 0);
	CHECK(seen_has(&s, 'i', "inc-1") && !seen_has(&s, 'c', "inc-1"));
	CHECK(seen_add(&s, 'c', "cmd\t1\nx", t, err, sizeof(err)) ==
	      0); /* one line in the file, still */
	CHECK(seen_has(&s, 'c', "cmd\t1\nx"));

	/* across a restart */
	CHECK(seen_open(&again, path, 4, 3600LL * 1000000, t + 1, NULL, err, sizeof(err)) == 0 &&
	      again.n == 2);
	CHECK(seen_has(&again, 'i', "inc-1") && seen_has(&again, 'c', "cmd\t1\nx"));
	seen_close(&again);

	/* bounded: the oldest is forgotten first */
	for (int i = 2; i <= 4; i++) {
		snprintf(id, sizeof(id), "inc-%d", i);
		CHECK(seen_add(&s, 'i', id, t + i, err, sizeof(err)) == 0);
	}
	CHECK(s.n == 4 && !seen_has(&s, 'i', "inc-1") && seen_has(&s, 'i', "inc-4"));

	/* older than keep: dropped (a message that old is refused as stale anyway) */
	CHECK(seen_add(&s, 'i', "inc-late", t + 3601LL * 1000000, err, sizeof(err)) == 0);
	CHECK(s.n == 1 && seen_has(&s, 'i', "inc-late"));
	seen_close(&s);

	/* malformed lines are skipped and named */
	fake_write(root, "seen-ids",
		   "# x\ni\t5\tgood\nzz\nc\tnotanumber\tx\ni\t7\t\nc\t9\talso-good\n");
	CHECK(seen_open(&s, path, 8, 3600LL * 1000000, 10, NULL, err, sizeof(err)) == 3);
	CHECK(strstr(err, ":3:") && strstr(err, ":4:") && strstr(err, ":5:"));
	CHECK(s.n == 2 && seen_has(&s, 'i', "good") && seen_has(&s, 'c', "also-good"));
	seen_close(&s);

	/* a log: each id appends a line (the file is not rewritten per id; it was, 494 KB and an
	 * fsync at 8192 ids); at twice the ring's ids it is rewritten with the ring alone; a last
	 * line cut short by a crash is skipped at the next open */
	struct persist *p;
	CHECK(persist_start(&p, 1) == 0);
	unlink(path);
	CHECK(seen_open(&s, path, 4, 3600LL * 1000000, t, p, err, sizeof(err)) == 0);
	persist_set_log(p, s.fd);
	CHECK(lines(path) == 1); /* the header */
	for (int i = 0; i < 8; i++) {
		snprintf(id, sizeof(id), "log-%d", i);
		CHECK(seen_add(&s, 'i', id, t + i, err, sizeof(err)) == 0);
		CHECK(lines(path) == 2 + i, "%d lines after %d ids", lines(path), i + 1);
	}
	CHECK(seen_add(&s, 'i', "log-8", t + 8, err, sizeof(err)) == 0 && lines(path) == 1 + 4);
	CHECK(seen_add(&s, 'c', "log-9", t + 9, err, sizeof(err)) == 0 && lines(path) == 1 + 5);
	persist_flush(p);
	seen_close(&s);
	fake_sh("printf 'i\t12' >> '%s'", path); /* torn */
	CHECK(seen_open(&again, path, 4, 3600LL * 1000000, t + 10, NULL, err, sizeof(err)) == 1 &&
	      strstr(err, ":7:"));
	CHECK(again.n == 4 && seen_has(&again, 'c', "log-9") && seen_has(&again, 'i', "log-6") &&
	      !seen_has(&again, 'i', "log-5"));
	CHECK(lines(path) == 5); /* rewritten with the ring */
	seen_close(&again);
	persist_stop(p);
}

/* persist: a write asked for later is replaced by a newer one of the same slot, one asked for
 * now returns once it is on disk (and after every older one of the slot), errors come back. */
static void persist(const char *root)
{
	struct persist *p;
	char path[PATH_MAX + 16], bad[PATH_MAX + 32], err[256], buf[64];

	snprintf(path, sizeof(path), "%s/persisted", root);
	snprintf(bad, sizeof(bad), "%s/no-such-folder/x", root);
	CHECK(persist_start(&p, 2) == 0);
	for (int i = 0; i < 200; i++) {
		char *b = malloc(16);

		snprintf(b, 16, "v%d\n", i);
		CHECK(persist_write(p, 0, path, b, strlen(b), i % 50 == 49, err, sizeof(err)) == 0);
		if (i % 50 == 49) { /* now: this very content is there */
			snprintf(buf, sizeof(buf), "v%d", i);
			CHECK(strcmp(fake_read(root, "persisted"), buf) == 0);
		}
	}
	char *last = strdup("last\n");
	CHECK(persist_write(p, 0, path, last, 5, false, err, sizeof(err)) == 0);
	persist_flush(p);
	CHECK(strcmp(fake_read(root, "persisted"), "last") == 0);
	CHECK(persist_write(p, 1, bad, strdup("x"), 1, true, err, sizeof(err)) == -ENOENT &&
	      strstr(err, "no-such-folder"));
	persist_stop(p);
}

static void sampler(void)
{
	static struct sampler s = {.per_min = 3};
	char key[SAMPLER_KEY], k2[SAMPLER_KEY];
	const int64_t t = 1000000000;
	long n;
	int allowed = 0;

	sampler_class("truncated payload at byte 17", key);
	sampler_class("truncated payload at byte 18", k2);
	CHECK(strcmp(key, k2) == 0 && strcmp(key, "truncated payload at byte ") == 0);
	for (int i = 0; i < 100; i++)
		allowed += sampler_allow(&s, key, t + i);
	CHECK(allowed == 3);
	CHECK(sampler_allow(&s, "another reason", t)); /* a class of its own */
	CHECK(sampler_due(&s, t + 59000000, key, &n) == 0);
	CHECK(sampler_due(&s, t + 61000000, key, &n) == 1 && n == 97 && strcmp(key, k2) == 0);
	CHECK(sampler_due(&s, t + 61000000, key, &n) == 0);
	CHECK(sampler_allow(&s, k2, t + 62000000)); /* a new minute */
}

int main(void)
{
	char root[PATH_MAX];

	fake_root(root, sizeof(root));
	files(root);
	seen(root);
	persist(root);
	sampler();
	fake_rm(root);
	printf("test-state: ok\n");
	return 0;
}
