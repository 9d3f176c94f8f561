/* optin: the per-namespace opt-in list, hostile-parsed and read again when replaced; and the
 * decisions it makes: an incident's cap on a cgroup it does not name is REFUSED ("not opted
 * in"), one it names is applied, an operator's cap is not bound by it; no list, every cgroup. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/decide.h"
#include "../src/optin.h"
#include "check.h"
#include "faketree.h"
#include "testhost.h"

static char root[PATH_MAX], file[PATH_MAX + 16];

/* Replace the list whole, as cpi2-k8s-identity does (a rename over it). */
static void replace(const char *text)
{
	char tmp[PATH_MAX + 32];

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	fake_sh("printf '%%s' '%s' > '%s' && mv '%s' '%s'", text, tmp, tmp, file);
}

static void list(void)
{
	struct optin o = {0}, none = {0};
	char err[512];

	CHECK(optin_allows(&none, "any/task") && optin_allows(NULL, "any/task"));
	o.path = file;
	/* missing: reported once, and nothing may be capped */
	CHECK(optin_refresh(&o, err, sizeof(err)) == -ENOENT && strstr(err, "no cgroup may be"));
	CHECK(optin_refresh(&o, err, sizeof(err)) == 0 && !err[0]);
	CHECK(!optin_allows(&o, "kubepods/burstable/pod1"));

	replace("# cpi2-k8s-identity: the cgroups that may be capped\n"
		"kubepods/burstable/pod1\n"
		"bad path\n../x\n/abs\na//b\nkubepods/./p\nesc\033[2J\n"
		"kubepods/besteffort/pod2\n\n");
	CHECK(optin_refresh(&o, err, sizeof(err)) == 1 && o.n == 2, "%s", err);
	CHECK(strstr(err, "line 3 skipped") && strstr(err, "line 8 skipped"), "%s", err);
	CHECK(optin_allows(&o, "kubepods/burstable/pod1") &&
	      optin_allows(&o, "kubepods/besteffort/pod2"));
	CHECK(!optin_allows(&o, "kubepods/burstable") &&
	      !optin_allows(&o, "kubepods/burstable/pod1/c") && !optin_allows(&o, "a//b") &&
	      !optin_allows(&o, "bad path"));
	CHECK(optin_refresh(&o, err, sizeof(err)) == 0); /* unchanged: not read again */

	/* replaced: the new list only */
	replace("kubepods/burstable/pod3\n");
	CHECK(optin_refresh(&o, err, sizeof(err)) == 1 && o.n == 1 && !err[0]);
	CHECK(optin_allows(&o, "kubepods/burstable/pod3") &&
	      !optin_allows(&o, "kubepods/burstable/pod1"));

	/* a symlink, a FIFO (would block a plain open), a huge file: refused once each, the last
	 * good list kept */
	fake_sh("rm '%s' && ln -s /etc/hostname '%s'", file, file);
	CHECK(optin_refresh(&o, err, sizeof(err)) == -EINVAL && strstr(err, "kept"));
	CHECK(optin_refresh(&o, err, sizeof(err)) == 0);
	fake_sh("rm '%s' && mkfifo '%s'", file, file);
	CHECK(optin_refresh(&o, err, sizeof(err)) == -EINVAL);
	fake_sh("rm '%s' && truncate -s 17M '%s'", file, file);
	CHECK(optin_refresh(&o, err, sizeof(err)) == -EFBIG && strstr(err, "bytes"));
	CHECK(optin_allows(&o, "kubepods/burstable/pod3") && o.n == 1);
	fake_sh("rm '%s'", file);
	optin_free(&o);
}

static void decisions(void)
{
	static struct host_enforcer h;
	struct optin o = {0};
	struct incident_in in;
	struct action a[8];
	char in_dir[PATH_MAX], out_dir[PATH_MAX], state[PATH_MAX + 16], prot[PATH_MAX + 16],
	    err[512];
	bool cluster_off = false;
	int64_t t = 1000000000;

	fake_cgroup(root, "shop/web-1", 2, in_dir, sizeof(in_dir));
	fake_cgroup(root, "other/batch-1", 2, out_dir, sizeof(out_dir));
	snprintf(state, sizeof(state), "%s/state", root);
	snprintf(prot, sizeof(prot), "%s/protection", root);
	test_host_init(&h, "host-1", root, state, prot, &cluster_off);
	o.path = file;
	h.optin = &o;

	/* before the list is read: no incident caps */
	in = test_incident("shop/web-1", 0.1, 300);
	CHECK(optin_refresh(&o, err, sizeof(err)) == -ENOENT);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      strstr(a[0].reason, "not opted in") && strstr(a[0].reason, "not read yet"));
	replace("shop/web-1\n");
	CHECK(optin_refresh(&o, err, sizeof(err)) == 1);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	CHECK(strcmp(fake_read(in_dir, "cpu.max"), "25000 250000") == 0);
	/* an absolute name below the root is the same cgroup */
	in = test_incident(in_dir, 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_RENEWED);
	in = test_incident("other/batch-1", 0.1, 300);
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED &&
	      a[0].cause == CPI2_ACTION_CAUSE_INCIDENT);
	CHECK(strstr(a[0].reason, "not opted in: other/batch-1 is not among the 1 cgroups"), "%s",
	      a[0].reason);
	CHECK(strcmp(fake_read(out_dir, "cpu.max"), "max 100000") == 0);
	/* dry run refuses it the same way */
	h.caps.dry_run = true;
	CHECK(decide_incident(&h, &in, t, &a[0]) == 1 && a[0].kind == CPI2_ACTION_KIND_REFUSED);
	h.caps.dry_run = false;

	/* an operator's cap is not an incident's: the list does not bind it */
	struct command_in cap = {.command_id = "c1",
				 .command = CPI2_COMMAND_KIND_CAP,
				 .host = "host-1",
				 .task = "other/batch-1",
				 .task_len = strlen("other/batch-1")};
	CHECK(decide_command(&h, &cap, t, a, 8) == 1 && a[0].kind == CPI2_ACTION_KIND_APPLIED);
	CHECK(decide_release_all(&h, CPI2_ACTION_CAUSE_SHUTDOWN, a, 8) == 2);
	optin_free(&o);
}

int main(void)
{
	fake_root(root, sizeof(root));
	snprintf(file, sizeof(file), "%s/enforce", root);
	list();
	decisions();
	fake_rm(root);
	printf("test-optin: ok\n");
	return 0;
}
