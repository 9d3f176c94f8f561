/* Where samples go: Kafka (Avro single-object encoding, key = host, as a collector publishes),
 * stdout as JSON lines, or nowhere after encoding (to measure generation + encoding). */
#ifndef FLEETSIM_OUTPUT_H
#define FLEETSIM_OUTPUT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "fleet.h"

enum output_mode { OUTPUT_KAFKA, OUTPUT_STDOUT, OUTPUT_DISCARD };

struct output_stats {
	uint64_t emitted;	   /* samples handed to the output */
	uint64_t encode_errors;	   /* samples the encoder refused */
	uint64_t queue_full_waits; /* times a full producer queue made us wait (backpressure) */
	uint64_t sent, delivered, failed, dropped_queue_full; /* from the producer */
	uint64_t acked_written;	   /* acknowledged samples written to the acked file */
	uint64_t acked_unreadable; /* acknowledged payloads that did not decode (a bug) */
};

struct output;

/* props: "key=value" librdkafka properties, NULL-terminated (may be NULL). A full producer
 * queue makes output_emit wait until there is room or *stop is set. 0 or -errno. */
int output_new(struct output **out, enum output_mode mode, const char *brokers, const char *topic,
	       const char *const *props, volatile sig_atomic_t *stop, char *err, size_t errsz);
/* A fleet_emit: encodes one sample and sends, prints or drops it. 0, or -errno to stop
 * (-EINTR when *stop was set while waiting for the queue). */
int output_emit(void *ctx, const struct fleet_sample *s);
/* Serves delivery reports; cheap, never blocks. */
void output_poll(struct output *o);
void output_get_stats(const struct output *o, struct output_stats *st);
/* Kafka output: from now on, every sample the broker acknowledges is written to a new file at
 * path as one line "host<TAB>task<TAB>window_start_us" (its identity in ClickHouse), so a test
 * can check each acknowledged sample arrived. 0 or -errno with a reason. */
int output_acked_file(struct output *o, const char *path, char *err, size_t errsz);
/* Flushes (at most timeout_ms), fills *st (may be NULL) with the final counters and frees.
 * Returns what the producer had left, 0, or -EIO when the acked file could not be written. */
int output_close(struct output *o, int timeout_ms, struct output_stats *st);

#endif
