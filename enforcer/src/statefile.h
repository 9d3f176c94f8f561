/* statefile: the enforcer's files in state_dir (caps in force, kill switches, ids seen) are
 * replaced atomically, and one process at a time owns the folder.
 *
 * An atomic write is: a temporary file in the same folder, write, fsync, rename over the old
 * one, fsync of the folder. A reader sees the old content or the new one, never a mix, even
 * after a crash or power loss. */
#ifndef CPI2_ENFORCER_STATEFILE_H
#define CPI2_ENFORCER_STATEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Replace path with len bytes of buf atomically. Returns 0 or -errno with a reason in err. */
int statefile_write(const char *path, const void *buf, size_t len, char *err, size_t errsz);

/* Slots: a file of size bytes whose every block is written at once (zeros), so that a record
 * written into it later (statefile_slot_write: pwrite, fdatasync) needs no new block and no
 * write permission on the folder: it still works on a full disk or a folder made read-only.
 * statefile_slots_make makes it (or leaves one of that size as it is); statefile_read reads at
 * most max bytes of a file (no symlink), returning the count or -errno. Each returns 0 or
 * -errno with a reason in err. */
int statefile_slots_make(const char *path, size_t size, char *err, size_t errsz);
int statefile_slot_write(const char *path, size_t off, const void *buf, size_t len, char *err,
			 size_t errsz);
ssize_t statefile_read(const char *path, void *buf, size_t max);

/* Read path line by line (missing file: no line), skipping empty lines and '#' comments, and
 * call fn(line without its newline, arg) for each; a line fn refuses (non-zero) or one longer
 * than max_line is skipped and named in err ("path:N: malformed line skipped; ..."). Returns
 * the number of lines skipped, or -errno when the file cannot be read. */
int statefile_each_line(const char *path, size_t max_line, int (*fn)(char *line, void *arg),
			void *arg, char *err, size_t errsz);

/* A kill switch file: "1\n" (off) or "0\n" (on). save writes it atomically; load returns
 * true (protection off), false (on, or no file), and -EINVAL-like garbage reads as off: a
 * switch someone turned off is never forgotten because its file got damaged. */
int statefile_save_switch(const char *path, bool off, char *err, size_t errsz);
bool statefile_load_switch(const char *path);

/* Take the exclusive lock of dir (flock on dir/lock, which then holds our pid). *fd stays open
 * for the life of the process. Returns 0, or -EWOULDBLOCK naming the holder's pid in err, or
 * -errno. */
int statefile_lock(const char *dir, int *fd, char *err, size_t errsz);

#endif
