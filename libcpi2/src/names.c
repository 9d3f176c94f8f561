/* names: see cpi2/names.h. */
#include <cpi2/names.h>

#include <errno.h>
#include <string.h>

int cpi2_symbol_index(const char *const *symbols, size_t n, const char *symbol)
{
	if (!symbol)
		return -ENOENT;
	for (size_t i = 0; i < n; i++)
		if (strcmp(symbols[i], symbol) == 0)
			return (int)i;
	return -ENOENT;
}
