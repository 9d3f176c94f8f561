/* persist: see persist.h. */
#include "persist.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "statefile.h"

struct job {
	const char *path;
	char *buf; /* NULL: nothing waits in this slot */
	size_t len;
	bool now;
	uint64_t gen;
};

struct persist {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	struct job *jobs;
	uint64_t *gen_done;
	int *rc;
	char (*err)[256];
	int n_slots, waiting, next; /* next: the slot looked at first (each gets its turn) */
	uint64_t gen;
	int log_fd;
	bool log_dirty, busy, stop;
};

/* The slot to write next: one a caller waits for first, else the next in turn; -1: none. */
static int pick(struct persist *p)
{
	int found = -1;

	for (int i = 0; i < p->n_slots; i++) {
		int k = (p->next + i) % p->n_slots;

		if (!p->jobs[k].buf)
			continue;
		if (p->jobs[k].now)
			return k;
		if (found < 0)
			found = k;
	}
	return found;
}

static void *run(void *arg)
{
	struct persist *p = arg;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		char err[256];
		int k, rc, fd;

		while (!p->stop && !p->waiting && !p->log_dirty)
			pthread_cond_wait(&p->work, &p->mu);
		if ((k = pick(p)) >= 0) {
			struct job j = p->jobs[k];

			p->jobs[k].buf = NULL;
			p->waiting--;
			p->next = (k + 1) % p->n_slots;
			p->busy = true;
			pthread_mutex_unlock(&p->mu);
			err[0] = '\0';
			rc = statefile_write(j.path, j.buf, j.len, err, sizeof(err));
			free(j.buf);
			pthread_mutex_lock(&p->mu);
			p->gen_done[k] = j.gen;
			p->rc[k] = rc;
			snprintf(p->err[k], sizeof(p->err[k]), "%s", err);
		} else if (p->log_dirty) {
			p->log_dirty = false;
			fd = p->log_fd >= 0 ? fcntl(p->log_fd, F_DUPFD_CLOEXEC, 0) : -1;
			p->busy = true;
			pthread_mutex_unlock(&p->mu);
			if (fd >= 0) {
				fdatasync(fd);
				close(fd);
			}
			pthread_mutex_lock(&p->mu);
		} else {
			break; /* stop, and nothing left */
		}
		p->busy = false;
		pthread_cond_broadcast(&p->done);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

/* Free p and what it holds (NULL: nothing). */
static void persist_free(struct persist *p)
{
	if (!p)
		return;
	free(p->jobs);
	free(p->gen_done);
	free(p->rc);
	free(p->err);
	free(p);
}

int persist_start(struct persist **out, int n_slots)
{
	struct persist *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p || n_slots < 1) {
		persist_free(p);
		return -ENOMEM;
	}
	p->n_slots = n_slots;
	p->log_fd = -1;
	p->jobs = calloc((size_t)n_slots, sizeof(*p->jobs));
	p->gen_done = calloc((size_t)n_slots, sizeof(*p->gen_done));
	p->rc = calloc((size_t)n_slots, sizeof(*p->rc));
	p->err = calloc((size_t)n_slots, sizeof(*p->err));
	if (!p->jobs || !p->gen_done || !p->rc || !p->err) {
		persist_free(p);
		return -ENOMEM;
	}
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->work, NULL);
	pthread_cond_init(&p->done, NULL);
	rc = pthread_create(&p->thread, NULL, run, p);
	if (rc) {
		persist_free(p);
		return -rc;
	}
	*out = p;
	return 0;
}

int persist_write(struct persist *p, int slot, const char *path, char *buf, size_t len, bool now,
		  char *err, size_t errsz)
{
	struct job *j = &p->jobs[slot];
	uint64_t gen;
	int rc = 0;

	pthread_mutex_lock(&p->mu);
	if (j->buf)
		free(j->buf); /* an older content that waits: this one replaces it */
	else
		p->waiting++;
	gen = ++p->gen;
	*j = (struct job){.path = path, .buf = buf, .len = len, .now = now, .gen = gen};
	pthread_cond_signal(&p->work);
	if (now) {
		while (p->gen_done[slot] < gen)
			pthread_cond_wait(&p->done, &p->mu);
		rc = p->rc[slot];
		if (rc)
			snprintf(err, errsz, "%s", p->err[slot]);
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void persist_set_log(struct persist *p, int fd)
{
	pthread_mutex_lock(&p->mu);
	p->log_fd = fd;
	pthread_mutex_unlock(&p->mu);
}

void persist_sync_log(struct persist *p)
{
	pthread_mutex_lock(&p->mu);
	p->log_dirty = true;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
}

void persist_flush(struct persist *p)
{
	pthread_mutex_lock(&p->mu);
	while (p->waiting || p->log_dirty || p->busy)
		pthread_cond_wait(&p->done, &p->mu);
	pthread_mutex_unlock(&p->mu);
}

void persist_stop(struct persist *p)
{
	if (!p)
		return;
	persist_flush(p);
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_signal(&p->work);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	persist_free(p);
}
