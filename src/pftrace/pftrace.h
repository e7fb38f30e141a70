/* pftrace.h - the Perfetto output format: a transcoder that takes the text
 * of a Chrome-trace JSON document, in pieces of any size, and writes it as
 * Perfetto's protobuf trace (a perfetto.protos.Trace of TrackEvent
 * packets, the .pftrace format).  It sits in the output path (output.c),
 * so whatever writes JSON (merge, repair, any later mode) can write this
 * too.  The mapping is in cuptimerge(1), OUTPUT FORMATS, and in
 * pfevent.c's header. */
#ifndef CM_PFTRACE_H
#define CM_PFTRACE_H

#include <stddef.h>

typedef struct cm_pft cm_pft;

/* Where the protobuf bytes go: 0, or -1 to stop (the sink reported). */
typedef int (*cm_pft_sink)(void *ctx, const void *p, size_t n);

/* A transcoder writing to SINK; LABEL names the output in messages. */
cm_pft *cm_pft_new(cm_pft_sink sink, void *ctx, const char *label);

/* Encode on N threads (the -j count; 1 by default), before the first
 * write.  The bytes written do not depend on N. */
void cm_pft_threads(cm_pft *t, int n);

/* Feed LEN more bytes of the JSON text.  0, or -1 after an error: what
 * cannot be written as protobuf is reported (status CM_EXIT_DATA) with the
 * offset of its event in the JSON text; a sink failure is the sink's. */
int cm_pft_write(cm_pft *t, const void *p, size_t len);

/* The text has ended: check that it was a whole document and pass the
 * last bytes on.  0 or -1 as cm_pft_write. */
int cm_pft_finish(cm_pft *t);

void cm_pft_free(cm_pft *t);

/* -v: each transcoder says where its time went when it finishes (a line
 * on standard error: the serial parts' times, the workers'). */
void cm_pft_set_verbose(int on);

#endif
