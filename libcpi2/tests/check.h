/* One-line assertions for every C test (libcpi2, the collector, the simulator, the enforcer,
 * ibench): CHECK(cond) or CHECK(cond, "format", ...) prints where, what and why, and exits 1. */
#ifndef CPI2_TEST_CHECK_H
#define CPI2_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: check failed: %s ", __FILE__, __LINE__, #cond);    \
			fprintf(stderr, " " __VA_ARGS__);                                          \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)
#endif
