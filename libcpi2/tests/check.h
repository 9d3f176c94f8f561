/* One-line assertions for the C tests (libcpi2 and the host agents). */
#ifndef CPI2_TEST_CHECK_H
#define CPI2_TEST_CHECK_H
#include <stdio.h>
#include <stdlib.h>
#define CHECK(cond)                                                                          \
	do {                                                                                 \
		if (!(cond)) {                                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond); \
			exit(1);                                                             \
		}                                                                            \
	} while (0)
#endif
