/* The collector's reported-once set stays bounded under cgroup churn: 20,000 cgroups that come
 * and go leave at most ONCE_SET_MAX strings, and a recent one is still known. */
#include <stdio.h>
#include <stdlib.h>

#include "collector.h"
#include "check.h"

int main(void)
{
	struct once_set set = {0};
	char name[64];

	for (int i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "kubepods.slice/pod-%d", i);
		CHECK(once_set_add(&set, name)); /* each is new */
		CHECK(set.n <= ONCE_SET_MAX);
	}
	CHECK(!once_set_add(&set, name)); /* the last one is remembered */
	for (size_t i = 0; i < set.n; i++)
		free(set.v[i]);
	free(set.v);
	printf("test-collector-once: ok (20000 cgroups, at most %d remembered)\n", ONCE_SET_MAX);
	return 0;
}
