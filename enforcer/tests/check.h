/* One-line assertions for the enforcer's tests. */
#ifndef CPI2_ENFORCER_CHECK_H
#define CPI2_ENFORCER_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond)                                                                      \
	do {                                                                             \
		if (!(cond)) {                                                           \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)
#endif
