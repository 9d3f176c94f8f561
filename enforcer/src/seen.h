/* seen: the ids of the incidents and commands acted on recently, kept across restarts, so a
 * replayed message (the same id again) changes nothing: a bounded ring of ids, the oldest
 * forgotten first, and ids older than keep_us dropped (messages that old are refused as stale
 * anyway). The file in state_dir is a log: each id is a line appended (no rewrite of the whole
 * file per id); when the log holds twice the ring's ids it is rewritten atomically with the
 * ring alone (compaction), as it is at open. Appends reach the disk through persist's thread
 * (fdatasync, off the incident-to-cap path) or, without one, at once. */
#ifndef CPI2_ENFORCER_SEEN_H
#define CPI2_ENFORCER_SEEN_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "caps.h"

struct seen_entry {
	char kind; /* 'i' incident, 'c' command */
	char id[CAPS_ID_MAX];
	int64_t at_us;
};

struct persist;

struct seen {
	char path[PATH_MAX];  /* "" = not persisted */
	struct seen_entry *v; /* ring: the oldest at head */
	int cap, n, head;
	int64_t keep_us;
	int fd;			 /* the log, open for appends (-1: none) */
	int lines;		 /* ids in the log */
	struct persist *persist; /* syncs the log (NULL: each append is synced at once) */
};

/* Load the set from path (missing = empty; a line cut short by a crash is skipped), to hold at
 * most capacity ids for keep_us, and rewrite the log with them. persist (may be NULL) syncs the
 * appends. Returns the number of malformed lines skipped (err names them), or -errno. */
int seen_open(struct seen *s, const char *path, int capacity, int64_t keep_us, int64_t now_us,
	      struct persist *persist, char *err, size_t errsz);

/* Was (kind, id) seen? */
bool seen_has(const struct seen *s, char kind, const char *id);

/* Remember (kind, id) at now_us and append it to the log. Returns 0 or -errno with a reason
 * (the id is remembered in memory either way). */
int seen_add(struct seen *s, char kind, const char *id, int64_t now_us, char *err, size_t errsz);

/* Free the set. */
void seen_close(struct seen *s);

#endif
