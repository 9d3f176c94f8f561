/* signals: how every host agent (collector, fleet simulator, enforcer) answers signals.
 * SIGTERM and SIGINT ask the program to stop: its main loop sees cpi2_signal_stop and ends
 * cleanly (flushes, releases). SIGHUP, which would kill it without that, is counted and
 * reported by cpi2_signal_hangups, since the configuration is read at start only. */
#ifndef CPI2_SIGNALS_H
#define CPI2_SIGNALS_H

#include <signal.h>

/* Set to 1 by SIGTERM or SIGINT once cpi2_signal_install has run. */
extern volatile sig_atomic_t cpi2_signal_stop;

/* Install the handlers of SIGTERM, SIGINT and SIGHUP (without SA_RESTART: a blocking call
 * returns EINTR, so a loop sees the stop at once). Returns 0 or -errno. */
int cpi2_signal_install(void);

/* If SIGHUPs came since the last call, log one warning "SIGHUP ignored: why" as module and
 * return how many; else 0. Call it from the main loop. */
int cpi2_signal_hangups(const char *module, const char *why);

#endif
