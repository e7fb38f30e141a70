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
#include "base/buf.h"

typedef struct cm_pft cm_pft;
struct cm_jval; /* json/jval.h's value (cm_pft_enc_elem) */

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

/* ---- events inserted in the text (the merge's window events) ----
 *
 * A writer that makes some traceEvents elements on threads of its own (the
 * merge's render of the window's records) hands them over as batches,
 * between two parts of the text, instead of as text: each batch encoded
 * by the writer's thread (cm_pft_enc_open, _elem, _close, then
 * cm_pft_insert_records).  The
 * text written before cm_pft_insert_begin must end where an element may
 * follow in traceEvents (after its '[' or after an element), and the text
 * after cm_pft_insert_end go on as if the inserted elements were not
 * there (its first element with a ',' in front only when one came before
 * in the text).  Each inserted batch is one batch of the output (its
 * strings interned anew): the bytes depend on how the writer cuts its
 * elements into batches, which must not depend on the thread count.
 * Calls from one thread at a time, in order; 0, or -1 after a report. */
int cm_pft_insert_begin(cm_pft *t);
/* cm_pft_insert_begin for batches of the document's own elements, not
 * the writer's (the merge's CPU trace's parts, encoded on its copy's
 * threads: src/mergepftcpu.c): the lanes keep their slices for the ties
 * as they keep the text's (cm_pft_ties: the window's batches are those of
 * the first cm_pft_insert_begin).  Then, as for the others (on the direct
 * path or not: cm_pft_insert_direct before), the batches,
 * cm_pft_insert_end (or _abort), and the text after; several such runs
 * may come before the writer's. */
int cm_pft_insert_own_begin(cm_pft *t);
/* A batch encoded by a cm_pft_enc: its N bytes at P (copied, unless they
 * lie in the buffer the last cm_pft_insert_adopt took). */
int cm_pft_insert_records(cm_pft *t, const void *p, size_t n);
/* The writer's buffer BUF, which holds its next NBATCH batches (each then
 * given to cm_pft_insert_records, in order, a pointer into BUF's bytes),
 * taken whole: BUF is left empty, a buffer the transcoder had (kept from
 * an earlier call) swapped in, so that the writer's thread copies none of
 * the batches; each is copied by the pool's worker that takes it, and the
 * bytes kept until the last is.  Before cm_pft_insert_end. */
void cm_pft_insert_adopt(cm_pft *t, cm_buf *buf, size_t nbatch);
int cm_pft_insert_end(cm_pft *t);
/* Before cm_pft_insert_begin, ON 1: the direct path (pfinsert.c).  Each
 * batch is encoded into a buffer of the transcoder's, not OUT: the
 * encoder's calls come in pieces (cm_pft_enc_begin with the piece's
 * number: 0, 1, ... in the writer's order, every number once, each on
 * one thread; cm_pft_enc_end after its batches), a batch's records are
 * its ELEMs between an OPEN and a CLOSE, and CLOSE appends to OUT, for a
 * batch with an element, the 8 bytes to give cm_pft_insert_records (N
 * 8), in order, once the piece has ended; cm_pft_insert_adopt is not
 * for it.  The pieces' batches go straight to the sequential part. */
void cm_pft_insert_direct(cm_pft *t, int on);
/* Between two writers' runs of pieces (the merge's window events, then
 * its spans), none in flight: the next run's pieces are numbered from 0
 * again, after the last run's.  Nothing off the direct path. */
void cm_pft_insert_next(cm_pft *t);
/* The writer failed between cm_pft_insert_begin and _end (reported, or
 * the transcoder's own failure, which is reported now): the transcoder
 * stopped; its calls then return -1. */
void cm_pft_insert_abort(cm_pft *t);

/* The slices a merge writes last, which tie with slices written before:
 * its runtime calls, after the text before the inserted batches (the CPU
 * trace's slices), and its GPU annotation spans, after the inserted
 * window's events too (pflanetie.c).  Before the first write, a filter for
 * about N of them, each then added by cm_pft_tie (any thread, any number
 * at once, all before the first write), so that the lanes keep the
 * slices written before them that one may tie with.  Without it (a trace
 * converted alone) nothing is kept. */
void cm_pft_ties(cm_pft *t, uint64_t n);
/* A call (SPAN 0) or a span (1) of the thread of PID and TID (integers,
 * as the render writes them) that begins at NS (ns from the trace's zero,
 * as the lanes read its "ts": 0 to 2^43 x 1000 - 1, whose text reads back
 * exactly). */
void cm_pft_tie(cm_pft *t, int span, int64_t pid, int64_t tid, int64_t ns);
/* The same for one whose "ts" is the text TS[0..N) (outside that range):
 * read as the encoder reads it. */
void cm_pft_tie_text(cm_pft *t, int span, int64_t pid, int64_t tid, const char *ts, size_t n);
/* The spans' pieces go in the same run of pieces as the window's (the
 * direct path's): the first is PIECE, before any of it is begun.  (Else
 * cm_pft_insert_next says where the spans begin.)  From there on the
 * lanes keep no slice for its ties: nothing after the spans ties with
 * them. */
void cm_pft_ties_spans_from(cm_pft *t, uint64_t piece);

/* An encoder of batches for one thread of the writer (any thread, one at
 * a time), made before the batches it encodes are inserted. */
typedef struct cm_pft_enc cm_pft_enc;
cm_pft_enc *cm_pft_enc_new(cm_pft *t);
/* A batch's records appended to OUT, for cm_pft_insert_records: open it
 * (OUT's length a multiple of 8), each element (the object's text
 * S[0..N), and, when V is not NULL, its value, the tree that
 * cm_jval_parse_py makes of S: V taken instead of parsing S; a number's
 * has_iv, when set, as pftrace/pfevent.h's CM_PF_IV_* say; each member's
 * kno, which member of the event it is, CM_JK_UNSAID where not said;
 * every key, at any depth, a literal, whose bytes outlive the encoder
 * unchanged: it may know one again by its pointer; so too a string that
 * says sfix, whose bytes stay until the batch's close), close it, in
 * the same OUT.  0, or -1 after reporting what cannot be written (the
 * offset of an inserted element is not known: -1), or -2 without a
 * report when the run has failed already (a batch's open). */
int cm_pft_enc_open(cm_pft_enc *e, cm_buf *out);
/* 1 when E reads the text S of an element given with its value V (the
 * testing aids CUPTIMERGE_PFT_MEMBERS_CHECK, which compares the two, and
 * CUPTIMERGE_PFT_GENERIC, which parses every element); else 0, and S is
 * read only for a "M" or "C" element: V's strings' and numbers' s are
 * what is read, and a number's text not even that where has_iv says its
 * value. */
int cm_pft_enc_reads_text(const cm_pft_enc *e);
int cm_pft_enc_elem(cm_pft_enc *e, const struct cm_jval *v, const char *s, size_t n, cm_buf *out);
int cm_pft_enc_close(cm_pft_enc *e, cm_buf *out);
/* An element given by its text S[0..N) alone (parsed), which lies at
 * offset OFF of the input LABEL names (its refusal says LABEL:OFF; LABEL
 * set by cm_pft_enc_label, whose bytes outlive the encoder, else the
 * output's name, with no offset).  As cm_pft_enc_elem. */
void cm_pft_enc_label(cm_pft_enc *e, const char *label);
int cm_pft_enc_text(cm_pft_enc *e, const char *s, size_t n, int64_t off, cm_buf *out);
/* The direct path's pieces (cm_pft_insert_direct): nothing else. */
void cm_pft_enc_begin(cm_pft_enc *e, uint64_t piece);
int cm_pft_enc_end(cm_pft_enc *e, cm_buf *out);
void cm_pft_enc_free(cm_pft_enc *e);

/* -v: each transcoder says where its time went when it finishes (a line
 * on standard error: the serial parts' times, the workers'; and a second
 * with the same split by phase: the text before the inserted batches,
 * those, the text after). */
void cm_pft_set_verbose(int on);

/* -v: where its sink's own calls have waited so far, asked of the sink's
 * CTX on the thread that calls the sink, after a call: *WAIT seconds for
 * the sink's workers (gzip's deflate), *EMIT writing on (the output's
 * cm_output_gz_waits).  T asks it, with -v, after each call of its sink,
 * and says per phase what the calls' deltas were. */
typedef void (*cm_pft_probe)(void *ctx, double *wait, double *emit);
void cm_pft_set_probe(cm_pft *t, cm_pft_probe probe);

#endif
