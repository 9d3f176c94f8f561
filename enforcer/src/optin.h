/* optin: the node-local list of the task cgroups that incidents may cap (per-namespace opt-in).
 *
 * cpi2-k8s-identity, which knows each pod's namespace, writes it beside the labels file
 * (k8s/README.md): the cgroups of the pods of the namespaces that enforce, one path a line,
 * relative to the cgroup root as incidents name them, '#' comments. Measurement and detection
 * go on everywhere; the enforcer refuses an incident's cap on a cgroup the list does not name.
 * The decision stays on the node: no message can widen the list.
 *
 * The file is hostile: never read through a symlink, a regular file of at most
 * OPTIN_MAX_BYTES, at most OPTIN_MAX_TASKS paths; a line that is not a clean relative path
 * (printable, no space, no empty, "." or ".." component, at most CGPATH_MAX_TASK bytes) is
 * skipped and named (a skipped line can only take a cgroup out). It is read again whenever its
 * identity, size or mtime changes (the writer replaces it whole by a rename). A file missing
 * or refused keeps the list of the last good read; before any, no cgroup may be capped. */
#ifndef CPI2_ENFORCER_OPTIN_H
#define CPI2_ENFORCER_OPTIN_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>
#include <sys/types.h>

#define OPTIN_MAX_BYTES (16 << 20)
#define OPTIN_MAX_TASKS 65536

struct optin {
	const char *path;   /* the file; NULL or "": no list, every task cgroup may be capped */
	char *text;	    /* the last good file's content; tasks point into it */
	const char **tasks; /* sorted */
	int n;
	bool read;   /* a good file was read at least once */
	bool looked; /* the file below was looked at (read, or refused and reported) */
	dev_t dev;   /* its identity; all 0 when it was missing */
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

/* Read the file again if it changed since the last call. Returns 1 when a new list was read
 * (err names the lines skipped, or is ""), 0 when nothing changed, or -errno when the file is
 * missing or refused (err says why; reported once per change of the file: later calls return 0
 * until it changes). */
int optin_refresh(struct optin *o, char *err, size_t errsz);

/* May the task cgroup rel (relative to the root, as cgpath made it) be capped? Always with no
 * list configured. */
bool optin_allows(const struct optin *o, const char *rel);

/* Free the list. */
void optin_free(struct optin *o);

#endif
