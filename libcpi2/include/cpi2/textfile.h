/* textfile: read a small text file (/proc, /sys, a config fragment) whole into a caller's
 * buffer, and find its keyed lines, for the strict parsers that take text. */
#ifndef CPI2_TEXTFILE_H
#define CPI2_TEXTFILE_H

#include <stddef.h>

/* Read path into buf (at most size - 1 bytes, NUL-terminated; size >= 1). Returns the length
 * read, or -errno: -EFBIG when the file does not fit (buf then holds its first size - 1 bytes). */
int cpi2_read_text(const char *path, char *buf, size_t size);

/* cpi2_read_text of path relative to the directory descriptor dirfd (AT_FDCWD: the current
 * folder), opened with O_RDONLY | O_CLOEXEC | oflags (e.g. O_NOFOLLOW: never through a
 * symlink). */
int cpi2_read_text_at(int dirfd, const char *path, int oflags, char *buf, size_t size);

/* Read a file already open (fd) whole from its start, as cpi2_read_text does: a file that
 * changes, such as a cgroup's pressure file, read again through the same descriptor. */
int cpi2_pread_text(int fd, char *buf, size_t size);

/* The rest of the first line of text that starts with key (e.g. "MemAvailable:" in
 * /proc/meminfo), up to its newline; NULL when no line does. */
const char *cpi2_text_find_line(const char *text, const char *key);

#endif
