/* inputraw.h - the raw bytes of an input's file (inputraw.c).  Internal to
 * src/io: the stages of input_int.h. */
#ifndef CM_INPUTRAW_H
#define CM_INPUTRAW_H

#include "io/input.h"

#include <sys/types.h>

/* Read up to WANT raw bytes into in->raw + AT, teeing them to the spool on
 * a pipe's first pass.  Returns the count (0 at the end of the file), or
 * -1 after reporting. */
ssize_t inputraw_read(cm_input *in, size_t at, size_t want);

/* The next chunk of plain text into in->raw (which the input owns: see
 * inputbuf_own): the file's pages mapped there when it can be ("Mapped
 * reading"), else read.  As inputraw_read. */
ssize_t inputraw_map_chunk(cm_input *in);

/* Whether IN, a regular file just opened, is to have its plain text mapped
 * (cm_input_map_default, CUPTIMERGE_MMAP, and a read size that maps). */
int inputraw_map_wanted(const cm_input *in);

/* At the end of each pass over a regular file: is it still the file it was
 * when opened?  0 (also for a pipe: we read our own spool), or -1 after
 * reporting. */
int inputraw_check_unchanged(cm_input *in);

/* Make the spool file for a pipe (in->spool_fd).  Returns 0, or -1 after
 * reporting. */
int inputraw_spool_create(cm_input *in);

#endif
