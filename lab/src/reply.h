/* reply: where a server's first answer in a buffer ends, for the load generator's protocols.
 * The bytes come from a server over a socket: anything may be there, and an answer that is not
 * one of the protocol's is said so, never guessed at. */
#ifndef LAB_REPLY_H
#define LAB_REPLY_H

#include <stdbool.h>
#include <stddef.h>

/* The longest header block or RESP line taken; a longer one is refused (-1). */
#define REPLY_MAX_LINE 65536
/* The largest body or bulk string taken; a larger one is refused (-1). */
#define REPLY_MAX_BODY (64L << 20)

/* A RESP (redis) reply at buf: its length when complete (> 0), 0 when more bytes are needed,
 * -1 when it is not RESP. *error is set for an error reply (-ERR ...) or one holding one. */
long reply_redis(const char *buf, size_t len, bool *error);

/* An HTTP/1.x response at buf: its length when complete (> 0, header block and Content-Length
 * body), 0 when more bytes are needed, -1 when it is not one (no status line, no or a bad
 * Content-Length, chunked, a 1xx). *error is set for a status outside 200-299, *close when the
 * server closes the connection after it (Connection: close). */
long reply_http(const char *buf, size_t len, bool *error, bool *close);

#endif
