/* statefile: see statefile.h. */
#include "statefile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cpi2/textfile.h>

static int write_all(int fd, const char *p, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* fsync the folder of path (a file made or renamed there is durable only then). */
static int sync_dir(const char *path)
{
	char dirbuf[PATH_MAX];
	int fd, rc = 0;

	snprintf(dirbuf, sizeof(dirbuf), "%s", path);
	fd = open(dirname(dirbuf), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) != 0)
			rc = -errno;
		close(fd);
	}
	return rc;
}

int statefile_write(const char *path, const void *buf, size_t len, char *err, size_t errsz)
{
	char tmp[PATH_MAX];
	int fd, rc;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= sizeof(tmp)) {
		snprintf(err, errsz, "state file path too long: %s", path);
		return -ENAMETOOLONG;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errsz, "open %s: %s", tmp, strerror(errno));
		return rc;
	}
	rc = write_all(fd, buf, len);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = -errno;
	if (rc) {
		unlink(tmp);
		snprintf(err, errsz, "write %s: %s", path, strerror(-rc));
		return rc;
	}
	/* the rename itself is durable only once the folder is */
	rc = sync_dir(path);
	if (rc)
		snprintf(err, errsz, "fsync the folder of %s: %s", path, strerror(-rc));
	return rc;
}

int statefile_slots_make(const char *path, size_t size, char *err, size_t errsz)
{
	struct stat st;
	char *zero;
	int fd, rc = 0;

	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || fstat(fd, &st) != 0) {
		rc = -errno;
		snprintf(err, errsz, "open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (S_ISREG(st.st_mode) && (size_t)st.st_size == size) {
		close(fd);
		return 0; /* made before: its records are kept */
	}
	zero = calloc(1, size);
	if (!zero) {
		close(fd);
		return -ENOMEM;
	}
	/* every block written (not a hole, not fallocate's unwritten extents): a record written
	 * later needs no new block, even on a full disk */
	if (!S_ISREG(st.st_mode) || ftruncate(fd, 0) != 0)
		rc = S_ISREG(st.st_mode) ? -errno : -EINVAL;
	if (rc == 0)
		rc = write_all(fd, zero, size);
	if (rc == 0 && fsync(fd) != 0)
		rc = -errno;
	free(zero);
	close(fd);
	if (rc == 0)
		rc = sync_dir(path);
	if (rc)
		snprintf(err, errsz, "make %s: %s", path, strerror(-rc));
	return rc;
}

int statefile_slot_write(const char *path, size_t off, const void *buf, size_t len, char *err,
			 size_t errsz)
{
	int fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC), rc = 0;
	ssize_t n;

	if (fd < 0) {
		rc = -errno;
		snprintf(err, errsz, "open %s: %s", path, strerror(errno));
		return rc;
	}
	do
		n = pwrite(fd, buf, len, (off_t)off);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)len)
		rc = n < 0 ? -errno : -EIO;
	else if (fdatasync(fd) != 0)
		rc = -errno;
	close(fd);
	if (rc)
		snprintf(err, errsz, "write %s: %s", path, strerror(-rc));
	return rc;
}

ssize_t statefile_read(const char *path, void *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t got = 0;
	ssize_t n;

	if (fd < 0)
		return -errno;
	while (got < max && (n = read(fd, (char *)buf + got, max - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		got += (size_t)n;
	}
	close(fd);
	return (ssize_t)got;
}

int statefile_each_line(const char *path, size_t max_line, int (*fn)(char *line, void *arg),
			void *arg, char *err, size_t errsz)
{
	char *line = NULL;
	size_t cap = 0, l = 0;
	ssize_t n;
	int bad = 0, lineno = 0;
	FILE *f;

	if (errsz)
		err[0] = '\0';
	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, errsz, "open %s: %s", path, strerror(errno));
		return -errno;
	}
	while ((n = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (n == 0 || line[0] == '#')
			continue;
		if ((size_t)n <= max_line && strlen(line) == (size_t)n && fn(line, arg) == 0)
			continue;
		bad++;
		if (l < errsz) {
			snprintf(err + l, errsz - l, "%s%s:%d: malformed line skipped",
				 l ? "; " : "", path, lineno);
			l = strlen(err);
		}
	}
	free(line);
	fclose(f);
	return bad;
}

int statefile_save_switch(const char *path, bool off, char *err, size_t errsz)
{
	return statefile_write(path, off ? "1\n" : "0\n", 2, err, errsz);
}

bool statefile_load_switch(const char *path)
{
	char buf[16];
	int n = cpi2_read_text_at(AT_FDCWD, path, O_NOFOLLOW, buf, sizeof(buf));

	if (n == -ENOENT)
		return false;
	return !(n >= 1 && buf[0] == '0' && (n == 1 || buf[1] == '\n'));
}

int statefile_lock(const char *dir, int *fd, char *err, size_t errsz)
{
	char path[PATH_MAX], pid[32];
	long n;
	int rc;

	snprintf(path, sizeof(path), "%s/lock", dir);
	*fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (*fd < 0) {
		rc = -errno;
		snprintf(err, errsz, "open %s: %s", path, strerror(errno));
		return rc;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) != 0) {
		rc = -errno;
		n = pread(*fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (rc == -EWOULDBLOCK)
			snprintf(
			    err, errsz,
			    "state_dir %s is in use by another cpi2-enforcer (pid %s, lock %s)",
			    dir, pid[0] ? pid : "unknown", path);
		else
			snprintf(err, errsz, "lock %s: %s", path, strerror(-rc));
		close(*fd);
		*fd = -1;
		return rc;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(*fd, 0) != 0 || pwrite(*fd, pid, (size_t)n, 0) != n) {
		rc = -errno;
		snprintf(err, errsz, "write %s: %s", path, strerror(errno));
		close(*fd);
		*fd = -1;
		return rc;
	}
	return 0;
}
