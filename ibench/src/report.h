/* report: what a run did, as one JSON object on one line or as aligned "key  value" lines,
 * written field by field in the same order for both. */
#ifndef IBENCH_REPORT_H
#define IBENCH_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct ibench_report {
	FILE *out;
	bool json;
	int fields;
};

void ibench_report_begin(struct ibench_report *r, FILE *out, bool json);

/* A string field (escaped for JSON; "-" for an empty one in text). */
void ibench_report_str(struct ibench_report *r, const char *key, const char *value);

void ibench_report_int(struct ibench_report *r, const char *key, long long value);

void ibench_report_u64(struct ibench_report *r, const char *key, uint64_t value);

/* A number with up to 6 significant decimals; non-finite values are written as null. */
void ibench_report_num(struct ibench_report *r, const char *key, double value);

/* Close the object (JSON) and flush. */
void ibench_report_end(struct ibench_report *r);

#endif
