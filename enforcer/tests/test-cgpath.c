/* cgpath: every hostile path from a message is refused with a reason; good paths resolve. */
#include <errno.h>
#include <string.h>

#include "../src/cgpath.h"
#include "../../libcpi2/tests/check.h"
#include "faketree.h"

struct hostile {
	const char *name;
	const char *task;
	size_t len; /* 0 = strlen */
	int rc;
};

int main(void)
{
	char root[PATH_MAX], dir[PATH_MAX], out[PATH_MAX], err[256], outside[PATH_MAX], cmd[PATH_MAX * 3];
	char prot[] = "system.slice,kubelet.slice,init.scope";
	char longname[400], longpath[1100];
	struct cgpath_policy p = {0};

	fake_root(root, sizeof(root));
	fake_cgroup(root, "batch.slice/video-3", 2, dir, sizeof(dir));
	fake_cgroup(root, "system.slice/sshd.service", 2, dir, sizeof(dir));
	fake_cgroup(root, "enforcer.scope", 2, dir, sizeof(dir));
	fake_cgroup(root, "collector.scope", 2, dir, sizeof(dir));
	snprintf(outside, sizeof(outside), "%s-outside", root);
	fake_cgroup(outside, "x", 2, dir, sizeof(dir));
	snprintf(cmd, sizeof(cmd), "ln -s '%s/x' '%s/batch.slice/escape'", outside, root);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "ln -s 'video-3' '%s/batch.slice/alias'", root);
	CHECK(system(cmd) == 0);
	snprintf(cmd, sizeof(cmd), "touch '%s/batch.slice/afile'", root);
	CHECK(system(cmd) == 0);

	p.root = root;
	CHECK(cgpath_set_protected(&p, prot) == 0);
	CHECK(p.n_protected == 3);
	char own[PATH_MAX], coll[PATH_MAX];
	snprintf(own, sizeof(own), "%s/enforcer.scope", root);
	snprintf(coll, sizeof(coll), "%s/collector.scope", root);
	p.own_cgroup = own;
	p.also_protected[0] = coll;
	p.n_also = 1;

	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	memset(longpath, 0, sizeof(longpath));
	for (size_t i = 0; i + 2 < sizeof(longpath) - 1; i += 2)
		memcpy(longpath + i, "a/", 2);
	longpath[sizeof(longpath) - 2] = 'a';
	char abs_ok[PATH_MAX], abs_bad[PATH_MAX];
	snprintf(abs_ok, sizeof(abs_ok), "%s/batch.slice/video-3", root);
	snprintf(abs_bad, sizeof(abs_bad), "%s/x", outside);

	struct hostile table[] = {
		{"traversal", "../x", 0, -EPERM},
		{"traversal inside", "batch.slice/../../x", 0, -EPERM},
		{"dot", "batch.slice/./video-3", 0, -EPERM},
		{"symlink escape", "batch.slice/escape", 0, -EPERM},
		{"absolute elsewhere", abs_bad, 0, -EPERM},
		{"absolute /etc", "/etc", 0, -EPERM},
		{"NUL byte", "batch.slice\0/../../etc", 22, -EINVAL},
		{"newline", "batch.slice\n", 0, -EINVAL},
		{"empty", "", 0, -EINVAL},
		{"double slash", "batch.slice//video-3", 0, -EINVAL},
		{"overlong component", longname, 0, -ENAMETOOLONG},
		{"overlong path", longpath, 0, -ENAMETOOLONG},
		{"protected slice", "system.slice/sshd.service", 0, -EPERM},
		{"own cgroup", "enforcer.scope", 0, -EPERM},
		{"collector cgroup", "collector.scope", 0, -EPERM},
		{"missing", "batch.slice/nope", 0, -ENOENT},
		{"not a directory", "batch.slice/afile", 0, -ENOENT},
		{"root itself", "batch.slice/..", 0, -EPERM},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		size_t len = table[i].len ? table[i].len : strlen(table[i].task);
		int rc;

		err[0] = '\0';
		rc = cgpath_resolve(&p, table[i].task, len, out, sizeof(out), err, sizeof(err));
		if (rc != table[i].rc)
			fprintf(stderr, "%s: got %d (%s), want %d\n", table[i].name, rc, err, table[i].rc);
		CHECK(rc == table[i].rc);
		CHECK(err[0] != '\0');
	}

	/* Good paths: relative, absolute below the root, a symlink that stays inside. */
	char want[PATH_MAX];
	CHECK(realpath(abs_ok, want) != NULL);
	CHECK(cgpath_resolve(&p, "batch.slice/video-3", 19, out, sizeof(out), err, sizeof(err)) == 0);
	CHECK(strcmp(out, want) == 0);
	CHECK(cgpath_resolve(&p, abs_ok, strlen(abs_ok), out, sizeof(out), err, sizeof(err)) == 0);
	CHECK(strcmp(out, want) == 0);
	CHECK(cgpath_resolve(&p, "batch.slice/alias", 17, out, sizeof(out), err, sizeof(err)) == 0);
	CHECK(strcmp(out, want) == 0);

	fake_rm(root);
	fake_rm(outside);
	printf("test-cgpath: ok (%zu hostile paths refused)\n", sizeof(table) / sizeof(table[0]));
	return 0;
}
