/* procfs: the parsers of the /proc and /sys files the collector reads besides cgroup usage
 * (libcpi2's cgroup.h). Each takes the file's text so tests can feed it anything; malformed
 * text gives -EINVAL, never a crash. */
#ifndef COLLECTOR_PROCFS_H
#define COLLECTOR_PROCFS_H

#include <stddef.h>

/* "vendor/family/model/model name" from /proc/cpuinfo text (x86: vendor_id, cpu family,
 * model, model name of the first processor; arm64: CPU implementer, architecture, part).
 * Returns 0 or -EINVAL (none of those fields). */
int procfs_parse_platform(const char *cpuinfo, char *out, size_t size);

/* A CPU list such as "0-3,8,10-11\n" (/sys/devices/system/cpu/online) into cpus (at most
 * max): libcpi2's cpi2_cpu_list_parse. Returns the count, or -EINVAL (malformed, descending
 * range, too many CPUs). */
int procfs_parse_cpu_list(const char *text, int *cpus, int max);

/* Number of lines of thread ids in a cgroup.threads / tasks text. Returns it or -EINVAL. */
int procfs_parse_thread_list(const char *text);

#endif
