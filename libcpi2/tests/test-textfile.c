/* textfile: whole files, empty files, files that do not fit, missing files, sysfs files; keyed
 * lines. */
#include <cpi2/textfile.h>

#include <errno.h>
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
	CHECK(!strcmp(cpi2_text_find_line("MemTotal: 1 kB\nMemAvailable: 2 kB\n", "MemAvailable:"), " 2 kB\n"));
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
	return 0;
}
