/* LeakSanitizer for the C tests and fuzz targets that decode with libcpi2's codec: LEAK_CHECK()
 * is true when the heap holds nothing unreachable (always true, with a note, without ASan). */
#ifndef CPI2_TEST_LSAN_H
#define CPI2_TEST_LSAN_H
#include <stdio.h>

#if defined(__SANITIZE_ADDRESS__) /* gcc -fsanitize=address */
#define CPI2_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) /* clang */
#define CPI2_TEST_ASAN 1
#endif
#endif

#ifdef CPI2_TEST_ASAN
#include <sanitizer/lsan_interface.h>
#define LEAK_CHECK() (__lsan_do_recoverable_leak_check() == 0)
/* libavro keeps a union's branch at offset 4 of the union (after an int discriminant), so a
 * decoded ["null", "string"] holds its buffer pointers at addresses that are not 8-byte aligned.
 * LeakSanitizer scans only aligned words unless told otherwise, and would report the strings a
 * live codec holds as leaked. */
const char *__lsan_default_options(void)
{
	return "use_unaligned=1";
}
#else
#define LEAK_CHECK() (fprintf(stderr, "%s: not built with ASan, no leak check\n", __FILE__), 1)
#endif
#endif
