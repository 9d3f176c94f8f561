/* textfile: see cpi2/textfile.h. */
#include <cpi2/textfile.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

int cpi2_read_text(const char *path, char *buf, size_t size)
{
	return cpi2_read_text_at(AT_FDCWD, path, 0, buf, size);
}

int cpi2_read_text_at(int dirfd, const char *path, int oflags, char *buf, size_t size)
{
	int fd, rc = 0;
	size_t n = 0;
	ssize_t r;
	char extra;

	if (size == 0)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | oflags);
	if (fd < 0) {
		buf[0] = '\0';
		return -errno;
	}
	while (n < size - 1) {
		r = read(fd, buf + n, size - 1 - n);
		if (r == 0)
			break;
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out_close;
		}
		n += (size_t)r;
	}
	if (n == size - 1 && read(fd, &extra, 1) == 1)
		rc = -EFBIG;
out_close:
	close(fd);
	buf[n] = '\0';
	return rc ? rc : (int)n;
}

const char *cpi2_text_find_line(const char *text, const char *key)
{
	size_t len = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, len))
			return p + len;
	return NULL;
}
