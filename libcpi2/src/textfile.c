/* textfile: see cpi2/textfile.h. */
#include <cpi2/textfile.h>

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int cpi2_read_text(const char *path, char *buf, size_t size)
{
	return cpi2_read_text_at(AT_FDCWD, path, 0, buf, size);
}

/* read fd whole into buf: from where it is (read) or from its start (pread) */
static int read_all(int fd, char *buf, size_t size, bool from_start)
{
	int rc = 0;
	size_t n = 0;
	ssize_t r;
	char extra;

	while (n < size - 1) {
		r = from_start ? pread(fd, buf + n, size - 1 - n, (off_t)n)
			       : read(fd, buf + n, size - 1 - n);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		n += (size_t)r;
	}
	if (n == size - 1 &&
	    (from_start ? pread(fd, &extra, 1, (off_t)n) : read(fd, &extra, 1)) == 1)
		rc = -EFBIG;
out:
	buf[n] = '\0';
	return rc ? rc : (int)n;
}

int cpi2_read_text_at(int dirfd, const char *path, int oflags, char *buf, size_t size)
{
	int fd, rc;

	if (size == 0)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | oflags);
	if (fd < 0) {
		buf[0] = '\0';
		return -errno;
	}
	rc = read_all(fd, buf, size, false);
	close(fd);
	return rc;
}

int cpi2_pread_text(int fd, char *buf, size_t size)
{
	if (size == 0)
		return -EINVAL;
	return read_all(fd, buf, size, true);
}

const char *cpi2_text_find_line(const char *text, const char *key)
{
	size_t len = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len))
			return p + len;
	return NULL;
}
