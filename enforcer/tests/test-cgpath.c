/* cgpath: every hostile path from a message is refused with a reason; good paths open; the
 * same with openat2 and with the O_NOFOLLOW walk that stands in for it on older kernels. */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../src/cgpath.h"
#include "check.h"
#include "faketree.h"

struct hostile {
	const char *name;
	const char *task;
	size_t len; /* 0 = strlen */
	int rc;
};

static char root[PATH_MAX], outside[PATH_MAX];

static int try_open(struct cgpath_policy *p, const char *task, size_t len, char *out, char *err,
		    size_t errsz)
{
	struct cgpath_target t;
	int rc;

	err[0] = '\0';
	rc = cgpath_open(p, task, len ? len : strlen(task), &t, err, errsz);
	if (rc == 0) {
		struct stat st;

		CHECK(t.fd >= 0 && fstat(t.fd, &st) == 0 && st.st_ino == t.ino &&
		      st.st_dev == t.dev);
		close(t.fd);
		if (out)
			strcpy(out, t.dir);
	} else {
		CHECK(t.fd == -1);
	}
	return rc;
}

static void run(bool walk)
{
	char dir[PATH_MAX], out[PATH_MAX], err[256], want[PATH_MAX];
	char prot[] = "system.slice, kubelet.slice ,init.scope";
	char longname[400], longpath[1100], own[PATH_MAX], coll[PATH_MAX], abs_ok[PATH_MAX],
	    abs_bad[PATH_MAX];
	struct cgpath_policy p = {0};

	cgpath_no_openat2 = walk;
	fake_root(root, sizeof(root));
	fake_cgroup(root, "batch.slice/video-3", 2, dir, sizeof(dir));
	fake_cgroup(root, "system.slice/sshd.service", 2, dir, sizeof(dir));
	fake_cgroup(root, "enforcer.scope", 2, dir, sizeof(dir));
	fake_cgroup(root, "collector.scope/inner", 2, dir, sizeof(dir));
	fake_cgroup(root, "kubepods.slice/pod-1/ctr-a", 2, dir, sizeof(dir));
	fake_cgroup(root, "kubepods.slice/pod-1/ctr-b", 2, dir, sizeof(dir));
	snprintf(outside, sizeof(outside), "%s-outside", root);
	fake_cgroup(outside, "x", 2, dir, sizeof(dir));
	fake_sh("ln -s '%s/x' '%s/batch.slice/escape'", outside, root);
	fake_sh("ln -s 'video-3' '%s/batch.slice/alias'", root);
	fake_sh("ln -s '%s' '%s/linkdir'", outside, root);
	fake_sh("ln -s 'system.slice' '%s/innocent.slice'", root);
	fake_sh("touch '%s/batch.slice/afile'", root);

	p.root = root;
	CHECK(cgpath_set_protected(&p, prot) == 0);
	CHECK(p.n_protected == 3 && strcmp(p.protected_names[1], "kubelet.slice") == 0);
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
	snprintf(abs_ok, sizeof(abs_ok), "%s/batch.slice/video-3", root);
	snprintf(abs_bad, sizeof(abs_bad), "%s/x", outside);

	struct hostile table[] = {
	    {"traversal", "../x", 0, -EPERM},
	    {"traversal inside", "batch.slice/../../x", 0, -EPERM},
	    {"dot", "batch.slice/./video-3", 0, -EPERM},
	    {"symlink escape", "batch.slice/escape", 0, -EPERM},
	    {"symlink inside the root (not followed)", "batch.slice/alias", 0, -EPERM},
	    {"symlinked folder on the way", "linkdir/x", 0, -EPERM},
	    {"symlink to a protected slice", "innocent.slice/sshd.service", 0, -EPERM},
	    {"absolute elsewhere", abs_bad, 0, -EPERM},
	    {"absolute /etc", "/etc", 0, -EPERM},
	    {"NUL byte", "batch.slice\0/../../etc", 22, -EINVAL},
	    {"newline", "batch.slice\n", 0, -EINVAL},
	    {"double slash", "batch.slice//video-3", 0, -EINVAL},
	    {"overlong component", longname, 0, -ENAMETOOLONG},
	    {"overlong path", longpath, 0, -ENAMETOOLONG},
	    {"protected slice", "system.slice/sshd.service", 0, -EPERM},
	    {"own cgroup", "enforcer.scope", 0, -EPERM},
	    {"collector cgroup", "collector.scope", 0, -EPERM},
	    {"inside the collector's cgroup", "collector.scope/inner", 0, -EPERM},
	    {"missing", "batch.slice/nope", 0, -ENOENT},
	    {"not a directory", "batch.slice/afile", 0, -ENOENT},
	    {"root itself", "batch.slice/..", 0, -EPERM},
	    {"a parent: every pod under it", "kubepods.slice", 0, -EPERM},
	    {"a parent: a pod with containers", "kubepods.slice/pod-1", 0, -EPERM},
	    {"a parent: a slice", "batch.slice", 0, -EPERM},
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int rc = try_open(&p, table[i].task, table[i].len, NULL, err, sizeof(err));

		if (rc != table[i].rc)
			fprintf(stderr, "%s (%s): got %d (%s), want %d\n", table[i].name,
				walk ? "walk" : "openat2", rc, err, table[i].rc);
		CHECK(rc == table[i].rc);
		CHECK(err[0] != '\0');
	}

	struct cgpath_target t;
	int fd, rc;

	CHECK(cgpath_open(&p, "", 0, &t, err, sizeof(err)) == -EINVAL && strstr(err, "empty"));

	/* Good paths: relative, absolute below the root, a leaf container. */
	CHECK(realpath(abs_ok, want) != NULL);
	CHECK(try_open(&p, "batch.slice/video-3", 0, out, err, sizeof(err)) == 0);
	CHECK(strcmp(out, want) == 0);
	CHECK(try_open(&p, abs_ok, 0, out, err, sizeof(err)) == 0);
	CHECK(strcmp(out, want) == 0);
	CHECK(try_open(&p, "kubepods.slice/pod-1/ctr-a", 0, out, err, sizeof(err)) == 0);

	/* task_cgroup_depth: pods (depth 2) are the tasks, containers under them are not. */
	p.task_depth = 2;
	CHECK(try_open(&p, "kubepods.slice/pod-1", 0, out, err, sizeof(err)) == 0);
	CHECK(try_open(&p, "kubepods.slice", 0, out, err, sizeof(err)) == -EPERM &&
	      strstr(err, "task_cgroup_depth"));
	CHECK(try_open(&p, "kubepods.slice/pod-1/ctr-a", 0, out, err, sizeof(err)) == -EPERM);

	/* The kubelet's layout (systemd driver): a Guaranteed pod at depth 2, the Burstable and
	 * BestEffort pods at depth 3 under their QoS slice at depth 2. A QoS slice holds other
	 * tasks (pods with containers): never capped at any depth; the pods at either depth are. */
	fake_cgroup(root, "kubepods.slice/kubepods-podg.slice/cri-containerd-1.scope", 2, dir,
		    sizeof(dir));
	fake_cgroup(root,
		    "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podb.slice/"
		    "cri-containerd-2.scope",
		    2, dir, sizeof(dir));
	CHECK(try_open(&p, "kubepods.slice/kubepods-podg.slice", 0, out, err, sizeof(err)) == 0);
	CHECK(try_open(&p, "kubepods.slice/kubepods-burstable.slice", 0, out, err, sizeof(err)) ==
		  -EPERM &&
	      strstr(err, "other tasks"));
	p.task_depth = 3;
	CHECK(try_open(&p, "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podb.slice",
		       0, out, err, sizeof(err)) == 0);
	CHECK(try_open(&p, "kubepods.slice/kubepods-burstable.slice", 0, out, err, sizeof(err)) ==
	      -EPERM);
	p.task_depth = 0;

	/* The root given through a symlink, protected_cgroups named through it with spaces around
	 * the commas (conf.c splits the list with cgpath_split_list): still protected. */
	char linkroot[PATH_MAX + 8], list[PATH_MAX * 2 + 16], *items[4];
	struct cgpath_policy q = p;

	snprintf(linkroot, sizeof(linkroot), "%s-link", root);
	fake_sh("ln -s '%s' '%s'", root, linkroot);
	snprintf(list, sizeof(list), " %s/collector.scope , %s/nothing ", linkroot, linkroot);
	q.root = linkroot;
	q.own_cgroup = NULL;
	CHECK(cgpath_split_list(list, (const char **)items, 4) == 2);
	CHECK(items[0][0] == '/' && items[0][strlen(items[0]) - 1] == 'e' &&
	      strstr(items[1], "nothing"));
	q.also_protected[0] = items[0];
	q.also_protected[1] = items[1];
	q.n_also = 2;
	CHECK(try_open(&q, "collector.scope", 0, out, err, sizeof(err)) == -EPERM &&
	      strstr(err, "protected"));
	CHECK(try_open(&q, "collector.scope/inner", 0, out, err, sizeof(err)) == -EPERM);
	CHECK(try_open(&q, "batch.slice/video-3", 0, out, err, sizeof(err)) == 0 &&
	      strcmp(out, want) == 0);
	snprintf(abs_ok, sizeof(abs_ok), "%s/batch.slice/video-3",
		 linkroot); /* absolute, through the link */
	CHECK(try_open(&q, abs_ok, 0, out, err, sizeof(err)) == 0 && strcmp(out, want) == 0);

	/* reopen: the same directory; replaced (new inode) is -ESTALE; a symlink put in its place
	 * is not followed; gone is -ENOENT; outside the root is -EPERM. */
	CHECK(cgpath_open(&p, "batch.slice/video-3", 19, &t, err, sizeof(err)) == 0);
	close(t.fd);
	rc = cgpath_reopen(&p, t.dir, t.dev, t.ino, &fd, err, sizeof(err));
	if (rc)
		fprintf(stderr, "reopen %s: %s\n", t.dir, err);
	CHECK(rc == 0 && fd >= 0);
	close(fd);
	fake_sh("mkdir '%s.new' && rm -rf '%s' && mv '%s.new' '%s'", t.dir, t.dir, t.dir, t.dir);
	CHECK(cgpath_reopen(&p, t.dir, t.dev, t.ino, &fd, err, sizeof(err)) == -ESTALE && fd == -1);
	CHECK(strstr(err, "replaced") != NULL);
	fake_sh("rm -rf '%s' && ln -s '%s/x' '%s'", t.dir, outside, t.dir);
	CHECK(cgpath_reopen(&p, t.dir, 0, 0, &fd, err, sizeof(err)) == -ESTALE &&
	      strstr(err, "symlink"));
	fake_sh("rm -f '%s'", t.dir);
	CHECK(cgpath_reopen(&p, t.dir, 0, 0, &fd, err, sizeof(err)) == -ENOENT);
	CHECK(cgpath_reopen(&p, abs_bad, 0, 0, &fd, err, sizeof(err)) == -EPERM);

	fake_rm(root);
	fake_rm(outside);
	fake_sh("rm -f '%s'", linkroot);
	printf("test-cgpath: ok (%zu hostile paths refused, %s)\n",
	       sizeof(table) / sizeof(table[0]), walk ? "O_NOFOLLOW walk" : "openat2");
}

int main(void)
{
	run(false);
	run(true);
	return 0;
}
