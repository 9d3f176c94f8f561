/* scrape: one HTTP GET of a metrics endpoint on a non-blocking socket, driven by poll() from the
 * collector's wait between windows, so that no endpoint can hold up a window: it ends with the
 * answer, or at its deadline, or at its size limit, whichever comes first. HTTP/1.1 with
 * "Connection: close"; an answer is read to its Content-Length, its last chunk (chunked
 * encoding) or the end of the connection, and is used only when it is a whole 200 answer in
 * plain text (no content encoding is asked for, none is accepted). */
#ifndef COLLECTOR_SCRAPE_H
#define COLLECTOR_SCRAPE_H

#include "svcsignal.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum scrape_state { SCRAPE_IDLE, SCRAPE_CONNECTING, SCRAPE_SENDING, SCRAPE_READING, SCRAPE_DONE };

struct scrape {
	enum scrape_state state;
	int fd;
	int64_t deadline_us; /* monotonic */
	size_t max_bytes;    /* of the answer, head and body */
	char req[768];
	size_t req_len, req_sent;
	char *buf; /* the answer as read; once done, the body (decoded) starts at body */
	size_t len, cap;
	/* when DONE: */
	int reason; /* SVC_OK, or why not */
	char detail[160];
	char *body;
	size_t body_len;
};

/* Start a GET of conf's endpoint that must end by deadline_us (monotonic). A connection that
 * fails at once ends the scrape at once (DONE with the reason). */
void scrape_start(struct scrape *s, const struct svc_conf *conf, size_t max_bytes,
		  int64_t deadline_us);

/* The poll events the scrape waits for (0 when not in flight). */
short scrape_events(const struct scrape *s);

/* Go on after poll said revents for its descriptor; then, past the deadline, end it
 * (SVC_TIMEOUT). now_us: the monotonic time. */
void scrape_step(struct scrape *s, short revents, int64_t now_us);

/* End a scrape in flight now with the reason (the deadline of a scrape left over), closing
 * its socket. */
void scrape_abort(struct scrape *s, int reason, const char *detail);

/* Back to IDLE after DONE (the buffer is kept for the next one). */
void scrape_reset(struct scrape *s);

/* Close and free. */
void scrape_free(struct scrape *s);

/* What an answer read so far is. */
enum http_parse { HTTP_MORE, HTTP_DONE, HTTP_ERROR };

/* Parse an answer buf[0..len) (eof: the peer closed). HTTP_DONE: a whole 200 answer in plain
 * text, its body (chunks joined in place, so buf is changed) at *body; HTTP_ERROR with
 * *reason (SVC_HTTP, SVC_TOO_LARGE) and a detail; HTTP_MORE: read on. A body longer than
 * max_body is SVC_TOO_LARGE. */
enum http_parse http_parse(char *buf, size_t len, bool eof, size_t max_body, char **body,
			   size_t *body_len, int *reason, char *detail, size_t dsz);

#endif
