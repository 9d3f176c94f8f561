/* persist: the durable writes that need not come before a cgroup write, off the incident-to-cap
 * path. One background thread replaces state files atomically (statefile_write) and syncs the
 * ids-seen log (fdatasync), while the main thread goes on with the next message.
 *
 * Each file is a slot (one per host's state file). A write asked for later replaces the one still
 * waiting in its slot (the newest content wins: each is whole); a write asked for now waits until
 * it is on disk and returns its result, and goes before every write asked for later. Every write
 * of a slot goes through the thread, one at a time, so an older content never lands after a newer
 * one. What a renewal changes (a later expiry, the budget) is written later: a crash before it
 * resumes the cap with its older expiry, which ends it sooner. */
#ifndef CPI2_ENFORCER_PERSIST_H
#define CPI2_ENFORCER_PERSIST_H

#include <stdbool.h>
#include <stddef.h>

struct persist;

/* Start the thread with n_slots slots. Returns 0 or -errno. */
int persist_start(struct persist **out, int n_slots);

/* Replace path (slot's file) with buf (len bytes; persist takes it, it is freed). now: wait until
 * it is on disk, and return 0 or -errno with a reason in err; later: return 0 at once. */
int persist_write(struct persist *p, int slot, const char *path, char *buf, size_t len, bool now,
		  char *err, size_t errsz);

/* Sync fd (fdatasync) soon: the thread does it on a copy of the descriptor, so the caller may
 * close or replace fd meanwhile (persist_set_log first). */
void persist_set_log(struct persist *p, int fd);
void persist_sync_log(struct persist *p);

/* Wait until every write and sync asked for so far is done. */
void persist_flush(struct persist *p);

/* Flush, stop the thread and free it. */
void persist_stop(struct persist *p);

#endif
