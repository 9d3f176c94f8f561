/* text: see text.h. */
#include "text.h"

#include <string.h>

#include <cpi2/wire.h>

char *text_printable(char *dst, size_t dstsz, const char *src, size_t len)
{
	size_t i = 0, o = 0;

	if (dstsz == 0)
		return dst;
	while (src && i < len && src[i] && o + 1 < dstsz) {
		int n = cpi2_utf8_char(src + i, len - i);

		if (n < 0)
			break; /* a character cut short where src ends: not copied */
		if (n == 0 || (n == 1 && ((unsigned char)src[i] < 0x20 || src[i] == 0x7f))) {
			dst[o++] = '?'; /* a control character, or a byte that is not UTF-8 */
			i++;
			continue;
		}
		if (o + (size_t)n >= dstsz)
			break; /* cut before a character that does not fit, never inside it */
		if (memchr(src + i, '\0', (size_t)n)) {
			break;
		}
		memcpy(dst + o, src + i, (size_t)n);
		o += (size_t)n;
		i += (size_t)n;
	}
	dst[o] = '\0';
	return dst;
}

const char *text_log(int slot, const char *src)
{
	static char buf[4][640];

	slot &= 3;
	return text_printable(buf[slot], sizeof(buf[slot]), src, src ? strlen(src) : 0);
}
