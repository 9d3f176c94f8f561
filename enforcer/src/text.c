/* text: see text.h. */
#include "text.h"

#include <string.h>

char *text_printable(char *dst, size_t dstsz, const char *src, size_t len)
{
	size_t i;

	if (dstsz == 0)
		return dst;
	for (i = 0; src && i < len && i + 1 < dstsz && src[i]; i++)
		dst[i] = ((unsigned char)src[i] < 0x20 || src[i] == 0x7f) ? '?' : src[i];
	dst[i] = '\0';
	return dst;
}

const char *text_log(int slot, const char *src)
{
	static char buf[4][640];

	slot &= 3;
	return text_printable(buf[slot], sizeof(buf[slot]), src, src ? strlen(src) : 0);
}
