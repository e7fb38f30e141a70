/* window.c - stream events into a trace-window file and close it properly. */
#include "window.h"
#include "pathpat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Encoded text is handed to the sink in chunks of about this size: one call
 * per chunk rather than per event, and a bounded jbuf whatever the buffer. */
#define CREC_WINDOW_CHUNK (1u << 20)

struct crec_window {
	crec_sink *sink;
	crec_jbuf jb;
	unsigned long long events;
	int failed;
};

crec_window *crec_window_open(const char *path, int gzip, double fifo_wait, char *err, size_t errsz)
{
	crec_window *w = calloc(1, sizeof *w);
	static const char head[] = "{\"events\": [\n";

	if (!w) {
		snprintf(err, errsz, "%s: out of memory", path);
		return NULL;
	}
	/* a .gz name is gzip even without -z: cuptimerge -o's rule, and a
	 * plain window named .gz would mislead every tool but ours */
	w->sink = crec_sink_open_wait(path, gzip || crec_path_is_gz(path), fifo_wait, err, errsz);
	if (!w->sink) {
		free(w);
		return NULL;
	}
	crec_sink_write(w->sink, head, sizeof head - 1);
	return w;
}

/* Hand the pending text to the sink.  Returns 0 or -1 (sticky). */
static int crec_window_flush(crec_window *w)
{
	if (w->jb.failed)
		w->failed = 1;
	if (!w->failed && w->jb.len && crec_sink_write(w->sink, w->jb.p, w->jb.len) != 0)
		w->failed = 1;
	w->jb.len = 0;
	return w->failed ? -1 : 0;
}

long crec_window_add_buffer(crec_window *w, crec_enc *enc, uint8_t *buf, size_t valid, crec_next_fn next)
{
	CUpti_Activity *rec = NULL;
	long n = 0;
	size_t mark;
	int r;

	if (w->failed)
		return -1;
	while ((r = next(buf, valid, &rec)) == 1) {
		mark = w->jb.len;
		if (w->events)
			crec_jbuf_lit(&w->jb, ",\n");
		if (crec_encode(enc, rec, &w->jb)) {
			w->events++;
			n++;
		} else {
			w->jb.len = mark;   /* skipped: take the separator back */
		}
		if (w->jb.len >= CREC_WINDOW_CHUNK && crec_window_flush(w))
			return -1;
	}
	if (crec_window_flush(w))
		return -1;
	return n;
}

/* Append `"source": {...}` for S (crec_source). */
static void crec_window_source(crec_jbuf *b, const crec_source *s)
{
	crec_jbuf_lit(b, "\"source\": {");
	if (s->host && *s->host) {
		crec_jbuf_lit(b, "\"host\": ");
		crec_jbuf_str(b, s->host, strlen(s->host));
		crec_jbuf_lit(b, ", ");
	}
	crec_jbuf_lit(b, "\"pid\": ");
	crec_jbuf_i64(b, s->pid);
	if (s->rank >= 0) {
		crec_jbuf_lit(b, ", \"rank\": ");
		crec_jbuf_i64(b, s->rank);
		if (s->rank_from) {
			crec_jbuf_lit(b, ", \"rank_from\": ");
			crec_jbuf_str(b, s->rank_from, strlen(s->rank_from));
		}
	}
	crec_jbuf_lit(b, ", \"start_ns\": ");
	crec_jbuf_u64(b, s->start_ns);
	crec_jbuf_lit(b, ", \"end_ns\": ");
	crec_jbuf_u64(b, s->end_ns);
	crec_jbuf_lit(b, "}");
}

int crec_window_close(crec_window *w, const crec_trailer *t, char *err, size_t errsz)
{
	crec_jbuf *b = &w->jb;
	int rc;

	crec_jbuf_lit(b, "\n],\n\"user_annotations\": ");
	crec_jbuf_puts(b, t->user_annotations ? t->user_annotations : "{}");
	crec_jbuf_lit(b, ",\n\"thread_resource_map\": ");
	crec_jbuf_puts(b, t->thread_resource_map ? t->thread_resource_map : "{}");
	crec_jbuf_lit(b, ",\n\"start_ns\": ");
	crec_jbuf_u64(b, t->start_ns);
	crec_jbuf_lit(b, ",\n\"dropped_records\": ");
	crec_jbuf_u64(b, t->dropped_records);
	if (t->window_version) {
		crec_jbuf_lit(b, ",\n\"window_version\": ");
		crec_jbuf_i64(b, t->window_version);
	}
	if (t->device_properties) {
		crec_jbuf_lit(b, ",\n\"device_properties\": ");
		crec_jbuf_puts(b, t->device_properties);
	}
	if (t->source) {
		crec_jbuf_lit(b, ",\n");
		crec_window_source(b, t->source);
	}
	if (t->extra && *t->extra) {
		crec_jbuf_lit(b, ",\n");
		crec_jbuf_puts(b, t->extra);
	}
	crec_jbuf_lit(b, "}\n");
	crec_window_flush(w);
	rc = crec_sink_close(w->sink, err, errsz);
	if (rc == 0 && w->failed) {
		snprintf(err, errsz, "out of memory while encoding");
		rc = -1;
	}
	crec_jbuf_free(&w->jb);
	free(w);
	return rc;
}

void crec_window_abandon(crec_window *w)
{
	crec_sink_abandon(w->sink);
	crec_jbuf_free(&w->jb);
	free(w);
}

unsigned long long crec_window_events(const crec_window *w)
{
	return w->events;
}
