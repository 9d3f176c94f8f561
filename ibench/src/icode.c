/* icode: see icode.h. The functions are written out by the preprocessor: each has its own
 * constants (from its number), so the compiler can neither merge nor fold them, and each is a
 * chain of multiply-xor-shift steps on its argument. Names are ifn_1ddddd with base-4 digits. */
#include "icode.h"

#include <stdint.h>

typedef uint64_t (*ifn)(uint64_t);

#define STEP(n, k)                                                                                 \
	x = (x ^ (x >> ((k) % 29 + 3))) * (0x9E3779B97F4A7C15ull + (n)*0x10001ull + (k)*2);
/* Kept out of clang-format, which does not settle on one layout of this list. */
/* clang-format off */
#define STEPS(n)                                                                                   \
	STEP(n, 1) STEP(n, 2) STEP(n, 3) STEP(n, 4) STEP(n, 5) STEP(n, 6) STEP(n, 7) STEP(n, 8)    \
	STEP(n, 9) STEP(n, 10) STEP(n, 11) STEP(n, 12) STEP(n, 13) STEP(n, 14) STEP(n, 15)         \
	STEP(n, 16)
/* clang-format on */
#define DEFINE(n)                                                                                  \
	static __attribute__((noinline, used)) uint64_t ifn_##n(uint64_t x)                        \
	{                                                                                          \
		STEPS(n)                                                                           \
		return x;                                                                          \
	}
#define ENTRY(n) ifn_##n,

#define X4(L, p) L(p##0) L(p##1) L(p##2) L(p##3)
#define X16(L, p) X4(L, p##0) X4(L, p##1) X4(L, p##2) X4(L, p##3)
#define X64(L, p) X16(L, p##0) X16(L, p##1) X16(L, p##2) X16(L, p##3)
#define X256(L, p) X64(L, p##0) X64(L, p##1) X64(L, p##2) X64(L, p##3)
#define X1024(L, p) X256(L, p##0) X256(L, p##1) X256(L, p##2) X256(L, p##3)

X1024(DEFINE, 1)

static const ifn table[] = {X1024(ENTRY, 1)};

#define COUNT (sizeof(table) / sizeof(table[0]))

size_t ibench_icode_count(void)
{
	return COUNT;
}

size_t ibench_icode_stride(void)
{
	static size_t stride; /* first computed in setup, before any worker thread starts */
	uintptr_t lo = UINTPTR_MAX, hi = 0;

	if (stride)
		return stride;
	for (size_t i = 0; i < COUNT; i++) {
		uintptr_t a = (uintptr_t)table[i];

		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	stride = (size_t)(hi - lo) / (COUNT - 1);
	if (!stride)
		stride = 1;
	return stride;
}

uint64_t ibench_icode_run(size_t first, size_t n, size_t count, uint64_t x)
{
	size_t i = first % n;

	while (count--) {
		x = table[i](x);
		if (++i == n)
			i = 0;
	}
	return x;
}
