/* stats: nearest-rank percentiles, in any input order, at the edges. */
#include <cpi2/stats.h>

#include "check.h"

int main(void)
{
	uint64_t v[100], one = 7;

	for (int i = 0; i < 100; i++)
		v[i] = (uint64_t)((i * 37) % 100 + 1); /* 1..100, shuffled */
	CHECK(cpi2_percentile_u64(v, 100, 50) == 50);
	CHECK(cpi2_percentile_u64(v, 100, 99) == 99);
	CHECK(cpi2_percentile_u64(v, 100, 99.5) == 100);
	CHECK(cpi2_percentile_u64(v, 100, 100) == 100);
	CHECK(cpi2_percentile_u64(v, 100, 0) == 1);
	CHECK(v[0] == 1 && v[99] == 100);	   /* sorted */
	CHECK(cpi2_percentile_u64(v, 3, 50) == 2); /* rank ceil(1.5) = 2 */
	CHECK(cpi2_percentile_u64(&one, 1, 99) == 7);
	CHECK(cpi2_percentile_u64(NULL, 0, 50) == 0);
	printf("test-stats: ok\n");
	return 0;
}
