/* caps: see caps.h. */
#include "caps.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cpi2/cgroup.h>
#include <cpi2/clock.h>

#include "persist.h"
#include "statefile.h"
#include "text.h"

int caps_find(const struct capset *s, const char *dir)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->caps[i].dir, dir) == 0)
			return i;
	return -1;
}

/* The values of a request that is not kept (dry run, at or below): for the report. */
static struct cap *scratch(const struct cap_request *r, const char *current, double cpu,
			   long period)
{
	static struct cap c;

	memset(&c, 0, sizeof(c));
	text_printable(c.task, sizeof(c.task), r->task, r->task_len);
	snprintf(c.dir, sizeof(c.dir), "%s", r->target->dir);
	snprintf(c.previous, sizeof(c.previous), "%s", current);
	c.version = r->version;
	c.cpu = cpu;
	c.period_us = period;
	c.expires_us = r->expires_us;
	return &c;
}

static void set_ids(struct cap *c, const struct cap_request *r)
{
	text_printable(c->incident_id, sizeof(c->incident_id), r->incident_id,
		       r->incident_id ? strlen(r->incident_id) : 0);
	text_printable(c->victim_task, sizeof(c->victim_task), r->victim_task,
		       r->victim_task ? strlen(r->victim_task) : 0);
}

static void forget(struct capset *s, int i)
{
	s->caps[i] = s->caps[s->n - 1];
	s->n--;
}

static int save(struct capset *s, bool now, char *err, size_t errsz);

/* The release journal (caps.h): CAPS_MAX records of a serial and its check, little-endian. */
#define JOURNAL_RECORD 16
#define JOURNAL_SIZE (CAPS_MAX * JOURNAL_RECORD)
#define JOURNAL_CHECK 0x6370693272656c65ULL /* "cpi2rele" */

static void journal_path(const struct capset *s, char *out, size_t outsz)
{
	snprintf(out, outsz, "%s.released", s->state_path);
}

static void put64(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Record that the cap with this serial is being released (the state file could not say so). */
static int journal_add(struct capset *s, uint64_t serial, char *err, size_t errsz)
{
	unsigned char rec[JOURNAL_RECORD];
	char path[PATH_MAX + 16];
	int rc;

	if (!s->state_path)
		return 0;
	if (s->journal_used >= CAPS_MAX) {
		snprintf(err, errsz, "release journal full");
		return -ENOSPC;
	}
	put64(rec, serial);
	put64(rec + 8, serial ^ JOURNAL_CHECK);
	journal_path(s, path, sizeof(path));
	rc = statefile_slot_write(path, (size_t)s->journal_used * JOURNAL_RECORD, rec, sizeof(rec),
				  err, errsz);
	if (rc == 0)
		s->journal_used++;
	return rc;
}

/* The caps the journal names are releasing: due now, never resumed. Makes the journal's space
 * when there is none (a note in err when it cannot be made). Keeps next_serial above every
 * serial seen. */
static void journal_load(struct capset *s, char *err, size_t errsz)
{
	static unsigned char buf[JOURNAL_SIZE];
	char path[PATH_MAX + 16], jerr[256];
	ssize_t n;

	journal_path(s, path, sizeof(path));
	n = statefile_read(path, buf, sizeof(buf));
	for (ssize_t off = 0; off + JOURNAL_RECORD <= n; off += JOURNAL_RECORD) {
		uint64_t serial = get64(buf + off);

		if (!serial || get64(buf + off + 8) != (serial ^ JOURNAL_CHECK))
			continue;
		if (serial >= s->next_serial)
			s->next_serial = serial + 1;
		for (int i = 0; i < s->n; i++)
			if (s->caps[i].serial == serial) {
				s->caps[i].releasing = s->caps[i].release_loaded = true;
				s->caps[i].expires_us = 0;
			}
	}
	s->journal_used = 0;
	if (!s->dry_run && statefile_slots_make(path, JOURNAL_SIZE, jerr, sizeof(jerr)) != 0) {
		size_t l = strlen(err);

		if (l < errsz)
			snprintf(err + l, errsz - l,
				 "%srelease journal: %s (a release the state file cannot record "
				 "is not made)",
				 l ? "; " : "", jerr);
	}
}

/* Did the enforcer set the limit current of cap c? Its cap did; for a cap not written since a
 * restart, also the previous limit or, on v1, a file of each (a crash between the state file
 * and the cgroup writes). Anything else is another writer's: the kubelet's resize, ... */
static bool ours(const struct cap *c, const char *current)
{
	long q, p, wq, wp, pq, pp;

	if (limits_parse(c->version, current, &q, &p) ||
	    limits_parse(c->version, c->written, &wq, &wp))
		return false;
	if (q == wq && p == wp)
		return true;
	if (!c->loaded || limits_parse(c->version, c->previous, &pq, &pp))
		return false;
	if (c->version == LIMITS_V1)
		return (q == wq || q == pq) && (p == wp || p == pp);
	return q == pq && p == pp;
}

static void changed_note(const struct cap *c, const char *current, char *err, size_t errsz)
{
	snprintf(err, errsz,
		 "limit changed by another writer: was %s (the cap), now %s on %s: left as it "
		 "is, the cap dropped (the limit before it, %s, not restored)",
		 c->written, current, c->dir, c->previous);
}

/* Forget cap i without a write (another writer's limit is in force), copied to *out. A state
 * file not rewritten is noted in err: a restart finds the other limit and drops it again. */
static void drop(struct capset *s, int i, struct cap *out, char *err, size_t errsz)
{
	char serr[256];
	size_t l;

	uint64_t serial = s->caps[i].serial;

	if (out)
		*out = s->caps[i];
	forget(s, i);
	l = strlen(err);
	/* not rewritten: the journal says the cap is over, so no restart resumes it (another
	 * writer may put back exactly the limit it found) */
	if (caps_save(s, serr, sizeof(serr)) && l < errsz)
		snprintf(err + l, errsz - l, "; state file not rewritten: %s%s", serr,
			 journal_add(s, serial, serr, sizeof(serr)) == 0
			     ? " (the release journal holds its end)"
			     : "");
}

static void set_written(struct cap *c, long quota, long period)
{
	snprintf(c->written, sizeof(c->written), "%ld %ld", quota, period);
	c->loaded = false;
}

/* Append a formatted note to err, "; " between notes. */
static void note_add(char *err, size_t errsz, const char *fmt, ...)
{
	size_t l = strlen(err);
	va_list ap;

	if (l && l + 2 < errsz) {
		memcpy(err + l, "; ", 3);
		l += 2;
	}
	if (l >= errsz)
		return;
	va_start(ap, fmt);
	vsnprintf(err + l, errsz - l, fmt, ap);
	va_end(ap);
}

/* Whether cap c's cpu.idle is in force on fd: while it is, the kernel reports its own idle
 * weight and refuses weight writes, and clearing it resets the weight to the default. */
static bool idle_in_force(const struct cap *c, int fd)
{
	long v;

	return c->idle.written && limits_idle_read(fd, c->version, &v) == 0 && v == LIMITS_IDLE;
}

/* A new cap c on the directory fd, when cap_weight is on: the CPU weight lowered to the lowest
 * when it is above it, then cpu.idle set where the kernel has it and it is 0; each value found
 * goes to the state file before its write. With cpu.idle set the weight record always holds the
 * weight found (written = previous when it was at the lowest already), since clearing cpu.idle
 * resets the weight. A value that cannot be read (no cpu.idle before 5.15) or written is left as
 * it is (the limit is what caps); err says which. */
static void priority_lower(struct capset *s, struct cap *c, int fd, char *err, size_t errsz)
{
	long w, v, min = limits_min_weight(c->version);
	char werr[256], notes[512] = "";
	bool unsaved = false; /* a record changed after the last state file write */

	if (!s->cap_weight || s->dry_run || limits_weight_read(fd, c->version, &w))
		return;
	if (w > min) {
		c->weight = (struct cap_lowered){w, min};
		if (caps_save(s, werr, sizeof(werr)) == 0 &&
		    limits_weight_write(fd, c->version, min, werr, sizeof(werr)) == 0) {
			note_add(notes, sizeof(notes), "CPU weight %ld lowered to %ld while capped",
				 w, min);
		} else {
			c->weight = (struct cap_lowered){0, 0};
			note_add(notes, sizeof(notes), "CPU weight %ld not lowered: %s", w, werr);
			caps_save(s, werr, sizeof(werr));
		}
	} else if (w == min) {
		c->weight = (struct cap_lowered){w, w}; /* to put back after cpu.idle */
	}
	if (s->cap_idle && c->weight.written && limits_idle_read(fd, c->version, &v) == 0 &&
	    v == 0) {
		c->idle = (struct cap_lowered){0, LIMITS_IDLE};
		if (caps_save(s, werr, sizeof(werr)) == 0 &&
		    limits_idle_write(fd, c->version, LIMITS_IDLE, werr, sizeof(werr)) == 0) {
			note_add(notes, sizeof(notes), "cpu.idle set while capped");
		} else {
			c->idle = (struct cap_lowered){0, 0};
			unsaved = true;
			note_add(notes, sizeof(notes), "cpu.idle not set: %s", werr);
		}
	}
	if (c->weight.written && c->weight.written == c->weight.previous && !c->idle.written) {
		c->weight = (struct cap_lowered){0, 0}; /* nothing of ours in force */
		unsaved = true;
	}
	if (unsaved)
		caps_save(s, werr, sizeof(werr));
	if (notes[0])
		snprintf(err, errsz, "%s", notes);
}

/* Cap c's priority on fd at a renewal, the periodic check or a restart: a value written holds;
 * after a restart a value found (a crash between the state file and the write) is lowered
 * again; any other is another writer's: left as it is, and the cap forgets its own (never
 * fought, never restored over it). The weight is not looked at while cpu.idle is in force. */
static void priority_hold(struct capset *s, struct cap *c, int fd)
{
	char werr[256];
	long w, v;

	if (s->dry_run)
		return;
	if (c->weight.written && !idle_in_force(c, fd) &&
	    limits_weight_read(fd, c->version, &w) == 0 && w != c->weight.written &&
	    !(c->loaded && w == c->weight.previous &&
	      limits_weight_write(fd, c->version, c->weight.written, werr, sizeof(werr)) == 0)) {
		c->weight = (struct cap_lowered){0, 0};
		c->idle = (struct cap_lowered){0, 0}; /* another weight: the priority is theirs */
		caps_save(s, werr, sizeof(werr));
	}
	if (c->idle.written && limits_idle_read(fd, c->version, &v) == 0 && v != LIMITS_IDLE &&
	    !(c->loaded && v == c->idle.previous &&
	      limits_idle_write(fd, c->version, LIMITS_IDLE, werr, sizeof(werr)) == 0)) {
		c->idle = (struct cap_lowered){0, 0};
		c->weight = (struct cap_lowered){0, 0}; /* clearing it reset the weight: theirs */
		caps_save(s, werr, sizeof(werr));
	}
}

/* Put back what cap c found on fd, when what is in force is still what it wrote (another
 * writer's is left as it is): cpu.idle cleared, then the weight found written again (clearing
 * cpu.idle resets it; no one can write it while cpu.idle is set); or, without cpu.idle, the
 * weight when it is still the lowest. Returns 0 or -errno with a reason in err. */
static int priority_restore(struct cap *c, int fd, char *err, size_t errsz)
{
	long w;
	int rc;

	if (idle_in_force(c, fd)) {
		rc = limits_idle_write(fd, c->version, c->idle.previous, err, errsz);
		if (rc == 0 && c->weight.written)
			rc = limits_weight_write(fd, c->version, c->weight.previous, err, errsz);
		return rc;
	}
	if (c->release_loaded && c->idle.written && c->weight.written &&
	    limits_idle_read(fd, c->version, &w) == 0 && w == 0 &&
	    limits_weight_read(fd, c->version, &w) == 0 && w == limits_default_weight(c->version) &&
	    w != c->weight.previous)
		/* a release before the restart cleared cpu.idle (the kernel then sets the default
		 * weight) and stopped before it wrote the weight back: finish it */
		return limits_weight_write(fd, c->version, c->weight.previous, err, errsz);
	if (c->idle.written || !c->weight.written || limits_weight_read(fd, c->version, &w) ||
	    w != c->weight.written)
		return 0;
	return limits_weight_write(fd, c->version, c->weight.previous, err, errsz);
}

/* drop, after putting back cap i's priority on fd (a value not put back is noted in err). */
static void drop_at(struct capset *s, int i, int fd, struct cap *out, char *err, size_t errsz)
{
	char werr[256];
	size_t l;

	if (priority_restore(&s->caps[i], fd, werr, sizeof(werr))) {
		l = strlen(err);
		if (l < errsz)
			snprintf(err + l, errsz - l, "; priority not put back: %s", werr);
	}
	drop(s, i, out, err, errsz);
}

/* A cap's deadline by the monotonic clock (0: none): its duration from now. */
static int64_t mono_deadline(const struct capset *s, const struct cap_request *r)
{
	return s->mono_clock_us && r->duration_us > 0 ? *s->mono_clock_us + r->duration_us : 0;
}

int caps_apply(struct capset *s, const struct cap_request *r, enum caps_outcome *outcome,
	       struct cap **capp, char *err, size_t errsz)
{
	const struct cgpath_target *t = r->target;
	char current[LIMIT_TEXT_MAX];
	int i = caps_find(s, t->dir), rc, plan;
	long quota = 0, period = 0;
	struct cap *c, saved;

	if (i >= 0 && s->caps[i].ino && (s->caps[i].ino != t->ino || s->caps[i].dev != t->dev)) {
		/* the capped directory was removed and another made under its name: not ours */
		forget(s, i);
		i = -1;
	}
	rc = limits_read(t->fd, r->version, current, sizeof(current));
	if (rc) {
		snprintf(err, errsz, "read the current limit of %s: %s", t->dir, strerror(-rc));
		return rc;
	}
	if (i >= 0 && s->caps[i].releasing) {
		snprintf(err, errsz,
			 "the cap on %s is being lifted (its release failed and is tried again): "
			 "not renewed",
			 t->dir);
		return -EAGAIN;
	}
	if (i >= 0 && !s->dry_run && !ours(&s->caps[i], current)) {
		static struct cap dropped;

		changed_note(&s->caps[i], current, err, errsz);
		drop_at(s, i, t->fd, &dropped, err, errsz);
		*outcome = CAPS_CHANGED;
		*capp = &dropped;
		return 0;
	}
	plan = limits_plan_cap(r->version, current, r->cpu, r->period_us, &quota, &period);
	if (plan < 0) {
		snprintf(err, errsz,
			 "cap %g CPU over %ld us on %s (limit in force '%s'): out of range", r->cpu,
			 r->period_us, t->dir, current);
		return plan;
	}
	if (i < 0) {
		if (plan == 1) {
			*outcome = CAPS_AT_OR_BELOW;
			*capp = scratch(r, current, r->cpu, r->period_us);
			return 0;
		}
		if (s->n >= s->max_caps) {
			snprintf(err, errsz, "%d caps already in force on this host (max_caps)",
				 s->n);
			return -EBUSY;
		}
		if (s->dry_run) {
			*outcome = CAPS_DRY_RUN;
			*capp = scratch(r, current, (double)quota / (double)period, period);
			return 0;
		}
		c = &s->caps[s->n];
		memset(c, 0, sizeof(*c));
		text_printable(c->task, sizeof(c->task), r->task, r->task_len);
		snprintf(c->dir, sizeof(c->dir), "%s", t->dir);
		c->dev = t->dev;
		c->ino = t->ino;
		c->version = r->version;
		snprintf(c->previous, sizeof(c->previous), "%s", current);
		c->cpu = (double)quota / (double)period;
		c->period_us = period;
		c->expires_us = r->expires_us;
		set_written(c, quota, period);
		set_ids(c, r);
		if (!s->next_serial) /* never loaded (tests): unique across runs all the same */
			s->next_serial = (uint64_t)cpi2_clock_us(CLOCK_REALTIME);
		c->serial = s->next_serial++;
		c->deadline_mono_us = mono_deadline(s, r);
		s->n++;
		/* Remember the cap (and the limit to restore) before touching the cgroup. */
		rc = caps_save(s, err, errsz);
		if (rc == 0)
			rc = limits_write(t->fd, r->version, current, quota, period, err, errsz);
		if (rc) {
			size_t l = strlen(err);

			s->n--;
			caps_save(s, err + l, errsz - l);
			return rc;
		}
		priority_lower(s, c, t->fd, err, errsz);
		*outcome = CAPS_APPLIED;
		*capp = c;
		return 0;
	}
	c = &s->caps[i];
	if (s->dry_run) {
		*outcome = CAPS_DRY_RUN;
		*capp = scratch(r, c->previous, c->cpu, c->period_us);
		return 0;
	}
	saved = *c;
	c->expires_us = r->expires_us;
	c->deadline_mono_us = mono_deadline(s, r);
	set_ids(c, r);
	rc = 0;
	if (plan == 0) {
		/* A lower cap than the one in force. A renewal changes nothing that must be
		 * restored: write the cgroup first (the latency that matters), then the new expiry.
		 * A crash in between resumes the cap with its old expiry, which is safe. */
		rc = limits_write(t->fd, r->version, current, quota, period, err, errsz);
		if (rc == 0) {
			c->cpu = (double)quota / (double)period;
			c->period_us = period;
			set_written(c, quota, period);
		}
	}
	if (rc == 0) {
		priority_hold(s, c, t->fd);
		/* a lower cap written must be in the file before the next check tells it from
		 * another writer's; a later expiry alone may wait (a crash ends the cap sooner) */
		rc = save(s, plan == 0, err, errsz);
	}
	if (rc) {
		*c = saved;
		return rc;
	}
	*outcome = CAPS_RENEWED;
	*capp = c;
	return 0;
}

int caps_release(struct capset *s, int i, struct cap *out, char *err, size_t errsz)
{
	struct cap c = s->caps[i];
	int rc = 0, fd = -1, post = 0, theirs = 0;
	char note[512] = "", serr[256] = "", jerr[256] = "", current[LIMIT_TEXT_MAX];
	bool journaled = false;

	if (!s->dry_run) {
		/* Recorded as releasing before anything is written: a crash after a write, before
		 * the file drops the cap, makes the restart finish the release, never resume the
		 * cap (an operator's uncap would otherwise come back). The state file says so, or,
		 * when it cannot be rewritten, the release journal; with neither, nothing is lifted
		 * (a lift that a restart would undo). */
		if (!c.releasing) {
			s->caps[i].releasing = true;
			if (caps_save(s, serr, sizeof(serr)) != 0) {
				rc = journal_add(s, c.serial, jerr, sizeof(jerr));
				if (rc) {
					s->caps[i].releasing = false;
					snprintf(err, errsz,
						 "the release cannot be recorded (state file: %s; "
						 "release journal: %s): the cap stays in force",
						 serr, jerr);
					return rc;
				}
				journaled = true;
			}
			c.releasing = true;
		}
		rc = cgpath_reopen(s->policy, c.dir, c.dev, c.ino, &fd, note, sizeof(note));
		if (rc == 0)
			rc = priority_restore(&c, fd, err, errsz); /* the priority first: a retry
								       finds the limit still ours */
		if (rc == 0) {
			/* another writer's limit stays: neither fought nor replaced by a stale one
			 */
			theirs = limits_read(fd, c.version, current, sizeof(current)) == 0 &&
				 !ours(&c, current);
			if (theirs)
				changed_note(&c, current, note, sizeof(note));
			else
				rc = limits_restore(fd, c.version, c.previous, err, errsz);
		}
		if (fd >= 0)
			close(fd);
		/* A cgroup that is gone, or was replaced (note says so), has nothing of ours to
		 * restore: forget the cap. Any other failure keeps it, to retry. */
		if (rc == -ENOENT)
			snprintf(note, sizeof(note), "cgroup %s is gone: nothing to restore",
				 c.dir);
		else if (rc && rc != -ESTALE) {
			if (fd < 0)
				snprintf(err, errsz, "%s", note);
			return rc;
		}
	}
	forget(s, i);
	if (out)
		*out = c;
	if (!s->dry_run)
		post = caps_save(s, serr, sizeof(serr));
	/* Lifted either way: a state file not rewritten is noted, not a failure (the entry is
	 * gone from memory; a failure would make the caller act on another entry). */
	if (post && !journaled && journal_add(s, c.serial, jerr, sizeof(jerr)) == 0)
		journaled = true;
	if (post)
		snprintf(err, errsz, "%s%sstate file not rewritten: %s%s", note,
			 note[0] ? "; " : "", serr,
			 journaled ? " (the release journal holds the release: a restart does "
				     "not put the cap back)"
				   : " (it names the cap as releasing: a restart does not put it "
				     "back)");
	else
		snprintf(err, errsz, "%s", note);
	return theirs;
}

int caps_resume(struct capset *s, int i, char *err, size_t errsz)
{
	struct cap *c = &s->caps[i];
	char current[LIMIT_TEXT_MAX];
	long quota, period, cq, cp;
	int fd, rc;

	if (s->dry_run)
		return 0;
	rc = cgpath_reopen(s->policy, c->dir, c->dev, c->ino, &fd, err, errsz);
	if (rc == 0) {
		rc = limits_read(fd, c->version, current, sizeof(current));
		if (rc) {
			snprintf(err, errsz, "read the limit of %s: %s", c->dir, strerror(-rc));
		} else if (!ours(c, current)) {
			changed_note(c, current, err, errsz);
			drop_at(s, i, fd, NULL, err, errsz);
			close(fd);
			return 1;
		} else if (limits_parse(c->version, c->written, &quota, &period) == 0 &&
			   limits_parse(c->version, current, &cq, &cp) == 0 &&
			   (cq < 0 || (long long)quota * cp < (long long)cq * period)) {
			/* the previous limit (or half of the v1 writes) is in force: the cap */
			rc = limits_write(fd, c->version, current, quota, period, err, errsz);
		}
		if (rc == 0) {
			priority_hold(s, c, fd);
			c->loaded = false;
		}
		close(fd);
	}
	if (rc == -ENOENT || rc == -ESTALE) {
		size_t l = strlen(err);

		forget(s, i);
		caps_save(s, err + l, errsz - l);
	}
	return rc;
}

int caps_check(struct capset *s, int i, struct cap *out, char *err, size_t errsz)
{
	struct cap *c = &s->caps[i];
	char current[LIMIT_TEXT_MAX], note[256];
	int fd, rc;

	if (s->dry_run || c->releasing ||
	    cgpath_reopen(s->policy, c->dir, c->dev, c->ino, &fd, note, sizeof(note)))
		return 0;
	rc = limits_read(fd, c->version, current, sizeof(current));
	if (rc || ours(c, current)) {
		if (rc == 0)
			priority_hold(s, c, fd);
		close(fd);
		return 0;
	}
	changed_note(c, current, err, errsz);
	drop_at(s, i, fd, out, err, errsz);
	close(fd);
	return 1;
}

int caps_next_expired(const struct capset *s, int64_t now_us)
{
	const int64_t *mono = s->mono_clock_us;

	for (int i = 0; i < s->n; i++) {
		const struct cap *c = &s->caps[i];

		if (mono && c->retry_mono_us > *mono)
			continue; /* a failed release, tried again later */
		if (c->expires_us <= now_us ||
		    (mono && c->deadline_mono_us && *mono >= c->deadline_mono_us))
			return i;
	}
	return -1;
}

void caps_retry_later(struct capset *s, int i, int64_t delay_us)
{
	struct cap *c = &s->caps[i];

	if (s->mono_clock_us)
		c->retry_mono_us = *s->mono_clock_us + delay_us;
	else
		c->expires_us += delay_us;
}

int64_t caps_next_expiry(const struct capset *s)
{
	int64_t t = INT64_MAX;

	for (int i = 0; i < s->n; i++)
		if (s->caps[i].expires_us < t)
			t = s->caps[i].expires_us;
	return t;
}

static struct cap_budget *budget_find(const struct capset *s, dev_t dev, ino_t ino)
{
	for (int i = 0; i < s->n_budget; i++)
		if (s->budget[i].dev == dev && s->budget[i].ino == ino)
			return (struct cap_budget *)&s->budget[i];
	return NULL;
}

int64_t caps_budget_left(const struct capset *s, dev_t dev, ino_t ino, int64_t now_us,
			 int64_t per_day_us)
{
	const struct cap_budget *b = budget_find(s, dev, ino);

	if (!b || now_us - b->window_us >= CAPS_DAY_US || now_us < b->window_us)
		return per_day_us;
	return b->used_us >= per_day_us ? 0 : per_day_us - b->used_us;
}

void caps_budget_charge(struct capset *s, dev_t dev, ino_t ino, int64_t now_us, int64_t granted_us)
{
	struct cap_budget *b = budget_find(s, dev, ino);

	if (!b) {
		if (s->n_budget < CAPS_BUDGET_MAX) {
			b = &s->budget[s->n_budget++];
		} else {
			/* full: the task whose day began first makes room */
			b = &s->budget[0];
			for (int i = 1; i < s->n_budget; i++)
				if (s->budget[i].window_us < b->window_us)
					b = &s->budget[i];
		}
		b->dev = dev;
		b->ino = ino;
		b->window_us = now_us;
		b->used_us = 0;
	}
	if (now_us - b->window_us >= CAPS_DAY_US || now_us < b->window_us) {
		b->window_us = now_us;
		b->used_us = 0;
	}
	b->used_us += granted_us > 0 ? granted_us : 0;
}

/* Append printf output to a growing buffer. */
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int append(char **buf, size_t *len, size_t *cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(*buf + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return -EINVAL;
		if ((size_t)n < *cap - *len) {
			*len += (size_t)n;
			return 0;
		}
		char *b = realloc(*buf, *cap * 2 + (size_t)n);

		if (!b)
			return -ENOMEM;
		*buf = b;
		*cap = *cap * 2 + (size_t)n;
	}
}

/* Write the state file atomically: now (before returning), or later (through persist: a renewal
 * that wrote no lower cap changes only what may be lost in a crash, its later expiry). */
static int save(struct capset *s, bool now, char *err, size_t errsz)
{
	size_t len = 0, cap = 4096;
	char *buf;
	int rc;

	if (!s->state_path)
		return 0;
	buf = malloc(cap);
	if (!buf)
		return -ENOMEM;
	rc = append(&buf, &len, &cap,
		    "# cpi2-enforcer caps in force: cap6, task, dir, dev, inode, version, "
		    "previous, written, cpu, period_us, expires_us, incident, victim, weight "
		    "previous, weight written, idle previous, idle written (written 0: not "
		    "lowered), serial, releasing, monotonic deadline us (of boot); budget, dev, "
		    "inode, day start us, capped us\nboot\t%s\n",
		    s->boot_id);
	for (int i = 0; rc == 0 && i < s->n; i++) {
		const struct cap *c = &s->caps[i];

		rc = append(&buf, &len, &cap,
			    "cap6\t%s\t%s\t%llu\t%llu\t%d\t%s\t%s\t%.6f\t%ld\t%lld\t%s\t%s\t%ld\t%"
			    "ld\t%ld\t%ld\t%llu\t%d\t%lld\n",
			    c->task, c->dir, (unsigned long long)c->dev, (unsigned long long)c->ino,
			    c->version, c->previous, c->written, c->cpu, c->period_us,
			    (long long)c->expires_us, c->incident_id, c->victim_task,
			    c->weight.previous, c->weight.written, c->idle.previous,
			    c->idle.written, (unsigned long long)c->serial, c->releasing ? 1 : 0,
			    (long long)c->deadline_mono_us);
	}
	for (int i = 0; rc == 0 && i < s->n_budget; i++)
		rc = append(&buf, &len, &cap, "budget\t%llu\t%llu\t%lld\t%lld\n",
			    (unsigned long long)s->budget[i].dev,
			    (unsigned long long)s->budget[i].ino, (long long)s->budget[i].window_us,
			    (long long)s->budget[i].used_us);
	if (rc) {
		snprintf(err, errsz, "write %s: %s", s->state_path, strerror(-rc));
		free(buf);
		return rc;
	}
	if (s->persist) { /* it takes buf */
		rc = persist_write(s->persist, s->persist_slot, s->state_path, buf, len, now, err,
				   errsz);
	} else {
		rc = statefile_write(s->state_path, buf, len, err, errsz);
		free(buf);
	}
	if (rc == 0 && (now || !s->persist))
		s->journal_used = 0; /* the file holds every release the journal recorded */
	return rc;
}

int caps_save(struct capset *s, char *err, size_t errsz)
{
	return save(s, true, err, errsz);
}

static int num_ll(const char *s, long long *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

static int num_ull(const char *s, unsigned long long *v)
{
	char *end;

	if (!*s || *s == '-')
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -EINVAL : 0;
}

/* Split line at tabs into at most max fields (empty ones kept). Returns the count. */
static int split(char *line, char **f, int max)
{
	int n = 0;
	char *tok;

	while (n < max && (tok = strsep(&line, "\t")) != NULL)
		f[n++] = tok;
	return line ? max + 1 : n; /* more fields than max: malformed */
}

/* A "cap6" line (a "cap5" one and the serial, releasing 0 or 1, the monotonic deadline), a
 * "cap5" line (a "cap4" one and cpu.idle found and written, 0 0 when not set), a "cap4" line
 * (a "cap3" one and the weight found and written, 0 0 when none was lowered), a "cap3" line, or
 * an older one: "cap2" (no written limit: it is the cap's quota and period),
 * "cap" (no identity either: task, dir, version, previous, cpu, period, expires[, incident[,
 * victim]]). f has room for one field more than n. */
static int parse_cap(char **f, int n, struct cap *c)
{
	unsigned long long dev = 0, ino = 0;
	long long version, period, expires;
	const char *written = NULL;
	long long low[2][2] = {{0}}; /* the weight's and cpu.idle's previous and written value */
	int k = 3;
	long q, p;
	char *end;
	unsigned long long serial = 0;
	long long releasing = 0, deadline = 0;
	bool cap6 = strcmp(f[0], "cap6") == 0;
	bool cap5 = cap6 || strcmp(f[0], "cap5") == 0;
	bool cap4 = cap5 || strcmp(f[0], "cap4") == 0;

	memset(c, 0, sizeof(*c));
	if (cap6) {
		/* read as a cap5 line and its serial, releasing flag and monotonic deadline */
		if (n != 20 || num_ull(f[17], &serial) || !serial || num_ll(f[18], &releasing) ||
		    (releasing != 0 && releasing != 1) || num_ll(f[19], &deadline) || deadline < 0)
			return -EINVAL;
		n -= 3;
	}
	if (cap5) {
		/* read as a cap4 line and its idle flag */
		if (n != 17 || num_ll(f[15], &low[1][0]) || num_ll(f[16], &low[1][1]))
			return -EINVAL;
		n -= 2;
	}
	if (cap4) {
		/* read as a cap3 line and its weights */
		if (n != 15 || num_ll(f[13], &low[0][0]) || num_ll(f[14], &low[0][1]))
			return -EINVAL;
		n -= 2;
	}
	if (cap4 || strcmp(f[0], "cap3") == 0) {
		if (n != 13)
			return -EINVAL;
		/* read as a cap2 line without its written limit */
		written = f[7];
		memmove(&f[7], &f[8], (size_t)(n - 8) * sizeof(*f));
		n--;
	}
	if (written || strcmp(f[0], "cap2") == 0) {
		if (n != 12 || num_ull(f[3], &dev) || num_ull(f[4], &ino))
			return -EINVAL;
		k = 5;
	} else if (strcmp(f[0], "cap") != 0 || n < 8 || n > 10) {
		return -EINVAL;
	}
	if (strlen(f[1]) > CGPATH_MAX_TASK || strlen(f[2]) >= sizeof(c->dir) || f[2][0] != '/' ||
	    num_ll(f[k], &version) || (version != LIMITS_V1 && version != LIMITS_V2) ||
	    strlen(f[k + 1]) >= sizeof(c->previous) || num_ll(f[k + 3], &period) ||
	    num_ll(f[k + 4], &expires))
		return -EINVAL;
	snprintf(c->task, sizeof(c->task), "%s", f[1]);
	snprintf(c->dir, sizeof(c->dir), "%s", f[2]);
	c->dev = (dev_t)dev;
	c->ino = (ino_t)ino;
	c->version = (int)version;
	snprintf(c->previous, sizeof(c->previous), "%s", f[k + 1]);
	c->cpu = strtod(f[k + 2], &end);
	if (*end || !(c->cpu > 0) || c->cpu > 1024)
		return -EINVAL;
	c->period_us = (long)period;
	c->expires_us = expires;
	if (n > k + 5)
		snprintf(c->incident_id, sizeof(c->incident_id), "%s", f[k + 5]);
	if (n > k + 6)
		snprintf(c->victim_task, sizeof(c->victim_task), "%s", f[k + 6]);
	if (written) {
		if (strlen(written) >= sizeof(c->written))
			return -EINVAL;
		snprintf(c->written, sizeof(c->written), "%s", written);
	} else {
		snprintf(c->written, sizeof(c->written), "%lld %ld",
			 llround(c->cpu * (double)c->period_us), c->period_us);
	}
	c->loaded = true;
	c->serial = serial;
	c->releasing = c->release_loaded = releasing;
	c->deadline_mono_us = deadline;
	if (c->releasing)
		c->expires_us = 0; /* a release began: finish it now */
	if (low[0][0] || low[0][1]) {
		/* the lowest weight, written over one the kernel takes (the same one when only
		 * cpu.idle was set) */
		char text[32];
		long w;

		snprintf(text, sizeof(text), "%lld", low[0][0]);
		if (low[0][1] != limits_min_weight(c->version) || low[0][0] < low[0][1] ||
		    (low[0][0] == low[0][1] && !low[1][1]) ||
		    cpi2_cgroup_parse_cpu_weight(text, c->version == LIMITS_V2, &w))
			return -EINVAL;
		c->weight = (struct cap_lowered){(long)low[0][0], (long)low[0][1]};
	}
	if (low[1][0] || low[1][1]) {
		/* cpu.idle set over 0, with the weight to put back after it */
		if (low[1][0] != 0 || low[1][1] != LIMITS_IDLE || !c->weight.written)
			return -EINVAL;
		c->idle = (struct cap_lowered){0, LIMITS_IDLE};
	}
	if (limits_parse(c->version, c->previous, &q, &p) ||
	    limits_parse(c->version, c->written, &q, &p) || q < 0)
		return -EINVAL;
	return 0;
}

static int parse_budget(char **f, int n, struct cap_budget *b)
{
	unsigned long long dev, ino;
	long long w, used;

	if (n != 5 || num_ull(f[1], &dev) || num_ull(f[2], &ino) || num_ll(f[3], &w) ||
	    num_ll(f[4], &used))
		return -EINVAL;
	b->dev = (dev_t)dev;
	b->ino = (ino_t)ino;
	b->window_us = w;
	b->used_us = used;
	return 0;
}

/* What caps_load reads besides the caps: the boot the monotonic deadlines are of. */
struct load {
	struct capset *s;
	char boot_id[40];
};

static int load_line(char *line, void *arg)
{
	struct load *ld = arg;
	struct capset *s = ld->s;
	char *f[21];
	int n = split(line, f, 20);

	if (n < 1 || n > 20)
		return -EINVAL;
	if (strcmp(f[0], "boot") == 0) {
		if (n != 2 || strlen(f[1]) >= sizeof(ld->boot_id))
			return -EINVAL;
		snprintf(ld->boot_id, sizeof(ld->boot_id), "%s", f[1]);
		return 0;
	}
	if (strcmp(f[0], "budget") == 0) {
		if (s->n_budget == CAPS_BUDGET_MAX || parse_budget(f, n, &s->budget[s->n_budget]))
			return -EINVAL;
		s->n_budget++;
		return 0;
	}
	if (s->n == CAPS_MAX || parse_cap(f, n, &s->caps[s->n]) ||
	    caps_find(s, s->caps[s->n].dir) >= 0)
		return -EINVAL;
	s->n++;
	return 0;
}

int caps_load(struct capset *s, char *err, size_t errsz)
{
	struct load ld = {.s = s};
	int rc;

	s->n = 0;
	s->n_budget = 0;
	if (errsz)
		err[0] = '\0';
	if (!s->state_path)
		return 0;
	rc = statefile_each_line(s->state_path, PATH_MAX * 3, load_line, &ld, err, errsz);
	if (rc < 0)
		return rc;
	for (int i = 0; i < s->n; i++) {
		struct cap *c = &s->caps[i];

		if (c->serial >= s->next_serial)
			s->next_serial = c->serial + 1;
		if (strcmp(ld.boot_id, s->boot_id) != 0)
			c->deadline_mono_us = 0; /* another boot's clock: the wall clock alone */
	}
	journal_load(s, err, errsz); /* next_serial above the journal's serials too */
	if (s->next_serial < (uint64_t)cpi2_clock_us(CLOCK_REALTIME))
		s->next_serial = (uint64_t)cpi2_clock_us(CLOCK_REALTIME);
	for (int i = 0; i < s->n; i++)
		if (!s->caps[i].serial) /* an older line: a serial of its own now */
			s->caps[i].serial = s->next_serial++;
	return rc;
}
