/* report: see report.h. */
#include "report.h"

#include <math.h>

void ibench_report_begin(struct ibench_report *r, FILE *out, bool json)
{
	r->out = out;
	r->json = json;
	r->fields = 0;
	if (json)
		fputc('{', out);
}

static void key(struct ibench_report *r, const char *k)
{
	if (r->json)
		fprintf(r->out, "%s\"%s\": ", r->fields ? ", " : "", k);
	else
		fprintf(r->out, "%-22s ", k);
	r->fields++;
}

static void end_field(struct ibench_report *r)
{
	if (!r->json)
		fputc('\n', r->out);
}

void ibench_report_str(struct ibench_report *r, const char *k, const char *value)
{
	key(r, k);
	if (!r->json) {
		fputs(value[0] ? value : "-", r->out);
		end_field(r);
		return;
	}
	fputc('"', r->out);
	for (const unsigned char *c = (const unsigned char *)value; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(r->out, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(r->out, "\\u%04x", *c);
		else
			fputc(*c, r->out);
	}
	fputc('"', r->out);
}

void ibench_report_int(struct ibench_report *r, const char *k, long long value)
{
	key(r, k);
	fprintf(r->out, "%lld", value);
	end_field(r);
}

void ibench_report_u64(struct ibench_report *r, const char *k, uint64_t value)
{
	key(r, k);
	fprintf(r->out, "%llu", (unsigned long long)value);
	end_field(r);
}

void ibench_report_num(struct ibench_report *r, const char *k, double value)
{
	key(r, k);
	if (isfinite(value))
		fprintf(r->out, "%.6g", value);
	else
		fputs(r->json ? "null" : "-", r->out);
	end_field(r);
}

void ibench_report_end(struct ibench_report *r)
{
	if (r->json)
		fputs("}\n", r->out);
	fflush(r->out);
}
