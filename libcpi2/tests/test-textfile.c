/* textfile: whole files, empty files, files that do not fit, missing files, sysfs files, files
 * relative to a folder and not through symlinks; keyed lines. And the small helpers beside it:
 * the clock and the log level by name. */
#include <cpi2/clock.h>
#include <cpi2/log.h>
#include <cpi2/textfile.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"

int main(void)
{
	char path[] = "/tmp/cpi2-textfile-test-XXXXXX", buf[8];
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(cpi2_read_text(path, buf, sizeof(buf)) == 0 && buf[0] == '\0');
	CHECK(write(fd, "1234567", 7) == 7);
	CHECK(cpi2_read_text(path, buf, sizeof(buf)) == 7 && !strcmp(buf, "1234567"));
	CHECK(write(fd, "8", 1) == 1);
	CHECK(cpi2_read_text(path, buf, sizeof(buf)) == -EFBIG && !strcmp(buf, "1234567"));
	CHECK(cpi2_read_text(path, buf, 1) == -EFBIG && buf[0] == '\0');
	CHECK(cpi2_read_text(path, buf, 0) == -EINVAL);
	close(fd);
	unlink(path);
	CHECK(cpi2_read_text(path, buf, sizeof(buf)) == -ENOENT && buf[0] == '\0');
	CHECK(cpi2_read_text("/tmp", buf, sizeof(buf)) == -EISDIR);
	/* keyed lines: at the start of a line only, the first one, the rest up to the newline */
	CHECK(!strcmp(cpi2_text_find_line("MemTotal: 1 kB\nMemAvailable: 2 kB\n", "MemAvailable:"),
		      " 2 kB\n"));
	CHECK(!strcmp(cpi2_text_find_line("a 1\na 2", "a "), "1\na 2"));
	CHECK(!strcmp(cpi2_text_find_line("x\nkey", "key"), ""));
	CHECK(cpi2_text_find_line("XMemAvailable: 2 kB\n", "MemAvailable:") == NULL);
	CHECK(cpi2_text_find_line("", "a") == NULL && cpi2_text_find_line("\n\n", "a") == NULL);
	/* a sysfs file reports a page-sized length but reads its real content */
	if (access("/sys/devices/system/cpu/online", R_OK) == 0) {
		char big[64];
		int n = cpi2_read_text("/sys/devices/system/cpu/online", big, sizeof(big));

		CHECK(n > 0 && big[n - 1] == '\n');
	}
	/* relative to a directory, and never through a symlink with O_NOFOLLOW */
	{
		char dir[] = "/tmp/cpi2-textfile-XXXXXX", path[64], got[16];
		int fd;
		FILE *f;

		CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof(path), "%s/f", dir);
		CHECK((f = fopen(path, "w")) && fputs("0\n", f) >= 0 && fclose(f) == 0);
		snprintf(path, sizeof(path), "%s/link", dir);
		CHECK(symlink("f", path) == 0);
		CHECK((fd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0);
		CHECK(cpi2_read_text_at(fd, "f", O_NOFOLLOW, got, sizeof(got)) == 2 &&
		      !strcmp(got, "0\n"));
		CHECK(cpi2_read_text_at(fd, "link", 0, got, sizeof(got)) == 2);
		CHECK(cpi2_read_text_at(fd, "link", O_NOFOLLOW, got, sizeof(got)) == -ELOOP);
		close(fd);
		/* one descriptor, read again from the start after the file changed; too long: the
		 * start and -EFBIG; and a cgroup pressure file's fresh values the same way */
		snprintf(path, sizeof(path), "%s/f", dir);
		CHECK((fd = open(path, O_RDONLY)) >= 0);
		CHECK(cpi2_pread_text(fd, got, sizeof(got)) == 2 && !strcmp(got, "0\n"));
		CHECK((f = fopen(path, "w")) && fputs("12345\n", f) >= 0 && fclose(f) == 0);
		CHECK(cpi2_pread_text(fd, got, sizeof(got)) == 6 && !strcmp(got, "12345\n"));
		CHECK(cpi2_pread_text(fd, got, 4) == -EFBIG && !strcmp(got, "123"));
		CHECK(cpi2_pread_text(fd, got, 0) == -EINVAL);
		close(fd);
		CHECK(cpi2_pread_text(fd, got, sizeof(got)) == -EBADF);
		if ((fd = open("/proc/pressure/cpu", O_RDONLY)) >= 0) {
			char psi[512];

			CHECK(cpi2_pread_text(fd, psi, sizeof(psi)) > 0 &&
			      !strncmp(psi, "some ", 5));
			CHECK(cpi2_pread_text(fd, psi, sizeof(psi)) > 0 &&
			      !strncmp(psi, "some ", 5));
			close(fd);
		}
		snprintf(path, sizeof(path), "%s/link", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/f", dir);
		unlink(path);
		rmdir(dir);
	}
	/* the clock helper: microseconds and nanoseconds of one clock agree, and time moves on */
	{
		int64_t a = cpi2_clock_us(CLOCK_MONOTONIC),
			b = cpi2_clock_ns(CLOCK_MONOTONIC) / 1000;
		int64_t w = cpi2_clock_us(CLOCK_REALTIME);

		CHECK(b >= a && b - a < 1000000);
		CHECK(w > 1600000000LL * 1000000 && w < 4000000000LL * 1000000);
	}
	/* the log level by name */
	{
		char err[128];

		CHECK(cpi2_log_set_level_name("debug", err, sizeof(err)) == 0);
		CHECK(cpi2_log_set_level_name("loud", err, sizeof(err)) == -EINVAL &&
		      strstr(err, "log_level 'loud'"));
		CHECK(cpi2_log_set_level_name("info", err, sizeof(err)) == 0);
	}
	return 0;
}
