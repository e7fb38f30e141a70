/* window.h - the streaming writer of one trace-window file. */
#ifndef CREC_WINDOW_H
#define CREC_WINDOW_H

#include <stddef.h>
#include <stdint.h>
#include "encode.h"
#include "sink.h"

/* The next record of a completed buffer: 1 and *REC set, 0 at the end, -1 when
 * the buffer cannot be parsed.  In the collector this is
 * cuptiActivityGetNextRecord; the tests walk hand-made buffers.  *REC is NULL
 * before the first call. */
typedef int (*crec_next_fn)(uint8_t *buf, size_t valid, CUpti_Activity **rec);

typedef struct crec_window crec_window;

/* Create PATH (gzip when GZIP or when PATH ends in .gz; a FIFO's reader
 * waited for FIFO_WAIT seconds, crec_sink_open_wait) and write the opening
 * `{"events": [`.  Returns NULL with a message in ERR on failure. */
crec_window *crec_window_open(const char *path, int gzip, double fifo_wait, char *err, size_t errsz);

/* Encode every record of buf[0..valid) with ENC and append the events.
 * Returns the number of events written, or -1 once output has failed (the
 * failure is sticky; crec_window_close reports it). */
long crec_window_add_buffer(crec_window *w, crec_enc *enc, uint8_t *buf, size_t valid, crec_next_fn next);

/* Where and when a window was recorded: its "source" member (issue 9), so
 * that a tool pairing windows with traces never has to parse file names. */
typedef struct crec_source {
	const char *host;       /* crec_path_host's name; NULL or "": left out */
	long pid;
	long rank;              /* crec_path_rank's; -1: "rank" left out */
	const char *rank_from;  /* the variable the rank came from; NULL: left out */
	uint64_t start_ns;      /* recording on / off, CLOCK_REALTIME ns: the */
	uint64_t end_ns;        /* clock the events are written in */
} crec_source;

/* The members after "events", in the order WINDOW-FORMAT.md's streaming
 * writer uses.  The JSON texts are complete values; NULL writes {}. */
typedef struct crec_trailer {
	const char *user_annotations;   /* {"id": "name", ...} */
	const char *thread_resource_map;/* {"pid": {"opaque": tid, ...}} */
	uint64_t start_ns;
	uint64_t dropped_records;
	int window_version;             /* "window_version"; 0: left out (version 1) */
	const char *device_properties;  /* [{...}, ...] (devprops.h); NULL: left out */
	const crec_source *source;      /* NULL: no "source" member */
	const char *extra;              /* further members ("k": v, ...) or NULL */
} crec_trailer;

/* Close the events array, write the trailer and close the file.  Returns 0,
 * or -1 with a message in ERR when any write failed since the open. */
int crec_window_close(crec_window *w, const crec_trailer *t, char *err, size_t errsz);

/* Close without the trailer (the file stays truncated). */
void crec_window_abandon(crec_window *w);

/* Events written so far. */
unsigned long long crec_window_events(const crec_window *w);

#endif
