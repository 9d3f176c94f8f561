/* icode: a large body of distinct generated functions for the l1i kernel, which calls the
 * first n of them round-robin so that its code footprint is n times the stride. */
#ifndef IBENCH_ICODE_H
#define IBENCH_ICODE_H

#include <stddef.h>
#include <stdint.h>

/* How many functions there are. */
size_t ibench_icode_count(void);

/* Bytes of code per function: the span of their addresses over their number, as laid out in
 * this binary. */
size_t ibench_icode_stride(void);

/* Call functions first, first + 1, ... (wrapping at n) count times, threading x through them.
 * Returns the final x. */
uint64_t ibench_icode_run(size_t first, size_t n, size_t count, uint64_t x);

#endif
