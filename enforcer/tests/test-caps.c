/* caps and limits against fake v1 and v2 trees: apply, renew, expire, restore, uncap, the
 * per-host limit, dry-run, and the state file that survives a crash. */
#include <errno.h>
#include <string.h>

#include "../src/caps.h"
#include "../../libcpi2/tests/check.h"
#include "faketree.h"

static void run(int version)
{
	char root[PATH_MAX], a[PATH_MAX], b[PATH_MAX], c3[PATH_MAX], state[PATH_MAX + 16], err[512];
	static struct capset s, again;
	enum caps_outcome out;
	struct cap *cap, released;
	const char *limit_file = version == 2 ? "cpu.max" : "cpu.cfs_quota_us";

	fake_root(root, sizeof(root));
	fake_cgroup(root, "batch/a", version, a, sizeof(a));
	fake_cgroup(root, "batch/b", version, b, sizeof(b));
	fake_cgroup(root, "batch/c", version, c3, sizeof(c3));
	/* b has a limit of its own before we cap it: it must come back exactly. */
	if (version == 2) {
		fake_write(b, "cpu.max", "50000 100000\n");
	} else {
		fake_write(b, "cpu.cfs_quota_us", "50000\n");
		fake_write(b, "cpu.cfs_period_us", "100000\n");
	}
	snprintf(state, sizeof(state), "%s/state", root);
	memset(&s, 0, sizeof(s));
	s.max_caps = 2;
	s.state_path = state;
	CHECK(limits_detect(a) == version);

	/* apply */
	CHECK(caps_apply(&s, "batch/a", a, version, 0.1, 250000, 1000, "inc-1", "ls/v", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_APPLIED && s.n == 1);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "25000 250000" : "25000") == 0);
	if (version == 1)
		CHECK(strcmp(fake_read(a, "cpu.cfs_period_us"), "250000") == 0);

	/* renew: no stacking, new expiry, original previous limit kept */
	CHECK(caps_apply(&s, "batch/a", a, version, 0.01, 250000, 2000, "inc-2", "ls/v", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_RENEWED && s.n == 1 && cap->expires_us == 2000);
	CHECK(strcmp(cap->previous, version == 2 ? "max 100000" : "-1 100000") == 0);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "2500 250000" : "2500") == 0);

	/* second cap, then the per-host limit */
	CHECK(caps_apply(&s, "batch/b", b, version, 0.1, 100000, 1500, "inc-3", "ls/v", &out, &cap, err, sizeof(err)) == 0);
	CHECK(s.n == 2);
	CHECK(caps_apply(&s, "batch/c", c3, version, 0.1, 100000, 1500, "inc-4", "ls/v", &out, &cap, err, sizeof(err)) == -EBUSY);
	CHECK(strstr(err, "max_caps") != NULL);
	CHECK(strcmp(fake_read(c3, limit_file), version == 2 ? "max 100000" : "-1") == 0);

	/* the state file names both caps: a restarted enforcer sees them (crash recovery) */
	memset(&again, 0, sizeof(again));
	again.state_path = state;
	again.max_caps = 2;
	CHECK(caps_load(&again, err, sizeof(err)) == 0);
	CHECK(again.n == 2 && caps_find(&again, a) >= 0 && caps_find(&again, b) >= 0);
	CHECK(strcmp(again.caps[caps_find(&again, b)].previous, version == 2 ? "50000 100000" : "50000 100000") == 0);
	CHECK(caps_next_expiry(&again) == 1500);

	/* expire: only b is due at 1500; restore its exact previous limit */
	CHECK(caps_next_expired(&again, 1499) == -1);
	int i = caps_next_expired(&again, 1500);
	CHECK(i >= 0 && strcmp(again.caps[i].dir, b) == 0);
	CHECK(caps_release(&again, i, &released, err, sizeof(err)) == 0);
	CHECK(strcmp(released.task, "batch/b") == 0);
	CHECK(strcmp(fake_read(b, limit_file), version == 2 ? "50000 100000" : "50000") == 0);

	/* uncap a: back to no limit; state file empty */
	CHECK(caps_release(&again, caps_find(&again, a), NULL, err, sizeof(err)) == 0);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "max 100000" : "-1") == 0);
	CHECK(caps_load(&s, err, sizeof(err)) == 0 && s.n == 0);

	/* a cgroup that vanished while capped is forgotten without error */
	CHECK(caps_apply(&s, "batch/c", c3, version, 0.1, 100000, 1500, "inc-5", "", &out, &cap, err, sizeof(err)) == 0);
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", c3);
	CHECK(system(cmd) == 0);
	CHECK(caps_release(&s, 0, NULL, err, sizeof(err)) == 0 && s.n == 0);

	/* dry-run decides and writes nothing, remembers nothing */
	s.dry_run = true;
	CHECK(caps_apply(&s, "batch/a", a, version, 0.1, 100000, 1500, "inc-6", "", &out, &cap, err, sizeof(err)) == 0);
	CHECK(out == CAPS_DRY_RUN && s.n == 0);
	CHECK(strcmp(fake_read(a, limit_file), version == 2 ? "max 100000" : "-1") == 0);

	/* malformed limit files and state files are errors, not crashes */
	fake_write(a, version == 2 ? "cpu.max" : "cpu.cfs_quota_us", "garbage\n");
	s.dry_run = false;
	CHECK(caps_apply(&s, "batch/a", a, version, 0.1, 100000, 1500, "inc-7", "", &out, &cap, err, sizeof(err)) == -EINVAL);
	CHECK(s.n == 0);
	fake_write(root, "state", "cap\tonly\tthree\n");
	CHECK(caps_load(&s, err, sizeof(err)) == -EINVAL && strstr(err, ":1:") != NULL);

	fake_rm(root);
}

int main(void)
{
	long q, p;

	CHECK(limits_parse(LIMITS_V2, "max 100000", &q, &p) == 0 && q == -1 && p == 100000);
	CHECK(limits_parse(LIMITS_V1, "-1 100000", &q, &p) == 0 && q == -1);
	CHECK(limits_parse(LIMITS_V2, "-1 100000", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V2, "100 100000 7", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V2, "12x 100000", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V2, "", &q, &p) == -EINVAL);
	CHECK(limits_parse(LIMITS_V1, "1000 99999999", &q, &p) == -EINVAL);
	run(2);
	run(1);
	printf("test-caps: ok (v1 and v2)\n");
	return 0;
}
