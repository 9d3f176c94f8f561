/* text: what the enforcer copies out of a message into logs, actions and its state file is
 * made printable first (a hostile id must not forge log lines or state-file fields). */
#ifndef CPI2_ENFORCER_TEXT_H
#define CPI2_ENFORCER_TEXT_H

#include <stddef.h>

/* Copy at most len bytes of src (NULL = "") into dst (always NUL-terminated), stopping at a NUL
 * byte and replacing control characters (below 0x20, and 0x7f) and bytes that are not UTF-8 with
 * '?': dst is UTF-8, cut at a character boundary when it is too small (a character src cuts short
 * at its end is left out), so a record that carries it is one every decoder reads. Returns dst. */
char *text_printable(char *dst, size_t dstsz, const char *src, size_t len);

/* text_printable of a NUL-terminated string, for a log line: a static buffer per slot (0..3),
 * so up to four may appear in one call. */
const char *text_log(int slot, const char *src);

#endif
