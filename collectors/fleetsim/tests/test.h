/* One-line assertions for the fleet simulator's tests: a failure prints where and why, and the
 * test's main returns non-zero through TEST_DONE. */
#ifndef FLEETSIM_TEST_H
#define FLEETSIM_TEST_H

#include <stdio.h>

static int test_failures;

#define CHECK(cond, ...)                                                                       \
	do {                                                                                   \
		if (!(cond)) {                                                                 \
			fprintf(stderr, "%s:%d: FAILED %s: ", __FILE__, __LINE__, #cond);      \
			fprintf(stderr, __VA_ARGS__);                                          \
			fprintf(stderr, "\n");                                                 \
			test_failures++;                                                       \
		}                                                                              \
	} while (0)

#define TEST_DONE(name)                                                                        \
	do {                                                                                   \
		fprintf(stderr, "%s: %s\n", name, test_failures ? "FAILED" : "ok");            \
		return test_failures ? 1 : 0;                                                  \
	} while (0)

#endif
