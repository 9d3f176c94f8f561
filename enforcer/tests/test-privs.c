/* privs: the capability names, and the drop itself in a child process: afterwards its
 * effective, permitted, inheritable, ambient and bounding sets hold only what was kept, and
 * no_new_privs is set. Exit 77 (skipped) when not root: there is nothing to drop. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../src/privs.h"
#include "check.h"

/* The hex value of "Cap...:" or "NoNewPrivs:" in /proc/self/status. */
static unsigned long long status_field(const char *name)
{
	char line[256];
	unsigned long long v = ~0ULL;
	size_t n = strlen(name);
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, name, n) == 0 && line[n] == ':')
			v = strtoull(line + n + 1, NULL, strcmp(name, "NoNewPrivs") == 0 ? 10 : 16);
	if (f)
		fclose(f);
	return v;
}

static int child(uint64_t keep)
{
	char err[256];

	if (privs_drop(keep, err, sizeof(err)) != 0)
		return 2;
	if (status_field("CapEff") != keep || status_field("CapPrm") != keep ||
	    status_field("CapBnd") != keep || status_field("CapInh") != 0 ||
	    status_field("CapAmb") != 0 || status_field("NoNewPrivs") != 1)
		return 3;
	return 0;
}

int main(void)
{
	char err[256], names[256];
	uint64_t mask;
	int status;

	CHECK(privs_parse("", &mask, err, sizeof(err)) == 0 && mask == 0);
	CHECK(privs_parse(" dac_override , CAP_PERFMON", &mask, err, sizeof(err)) == 0);
	CHECK(mask == ((1ULL << 1) | (1ULL << 38)));
	privs_names(mask, names, sizeof(names));
	CHECK(strcmp(names, "cap_dac_override,cap_perfmon") == 0);
	privs_names(0, names, sizeof(names));
	CHECK(strcmp(names, "none") == 0);
	CHECK(privs_parse("dac_overide", &mask, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "dac_overide"));
	if (geteuid() != 0) {
		printf("test-privs: SKIPPED the drop: not root, no capability to drop\n");
		return 77;
	}
	for (int k = 0; k < 2; k++) {
		uint64_t keep = k ? (1ULL << 1) : 0; /* none (the default), or dac_override */
		pid_t pid = fork();

		CHECK(pid >= 0);
		if (pid == 0)
			_exit(child(keep));
		CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status));
		if (WEXITSTATUS(status) != 0)
			fprintf(stderr, "keep %llx: child exit %d\n", (unsigned long long)keep,
				WEXITSTATUS(status));
		CHECK(WEXITSTATUS(status) == 0);
	}
	printf("test-privs: ok (after the drop: nothing, or only dac_override, in every set; "
	       "no_new_privs)\n");
	return 0;
}
