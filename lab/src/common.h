/* common: what the lab's programs (cpi2-lab-victim, cpi2-lab-load) do alike. */
#ifndef LAB_COMMON_H
#define LAB_COMMON_H

#include <cpi2/config.h>

/* cpi2_config_parse_args, then -X refused: the lab's programs take no Kafka properties.
 * Returns 0, 1 after --help, or -EINVAL with a reason. */
int lab_parse_args(const struct cpi2_config_key *keys, void *conf, int argc, char **argv,
		   const char *usage, const char **props, const char *program, char *err,
		   size_t errsz);

/* The settings both programs have, checked: rate (per second), duration_s, cpu, report and
 * log_level (which it sets). Returns 0 or -EINVAL with a reason. */
int lab_check_common(double rate, double duration_s, long cpu, const char *report,
		     const char *log_level, char *err, size_t errsz);

/* Pin the calling thread to cpu (nothing for -1). Returns 0, or -1 with the reason logged. */
int lab_pin(const char *module, long cpu);

/* The process's CPU time so far (user and system), seconds. */
double lab_cpu_seconds(void);

#endif
