/* Log lines of the fleet simulator: through libcpi2's logger when built with it, else stderr
 * (the unit tests of the model build without libcpi2). */
#ifndef FLEETSIM_FSLOG_H
#define FLEETSIM_FSLOG_H

#ifdef FLEETSIM_WITH_CPI2
#include <cpi2/log.h>
#define fs_log_error(...) cpi2_log(CPI2_LOG_ERROR, "fleetsim", __VA_ARGS__)
#define fs_log_warn(...) cpi2_log(CPI2_LOG_WARN, "fleetsim", __VA_ARGS__)
#define fs_log_info(...) cpi2_log(CPI2_LOG_INFO, "fleetsim", __VA_ARGS__)
#else
#include <stdio.h>
#define fs_log_line(lvl, fmt, ...) fprintf(stderr, "fleetsim: " lvl ": " fmt "\n", ##__VA_ARGS__)
#define fs_log_error(...) fs_log_line("error", __VA_ARGS__)
#define fs_log_warn(...) fs_log_line("warning", __VA_ARGS__)
#define fs_log_info(...) fs_log_line("info", __VA_ARGS__)
#endif

#endif
