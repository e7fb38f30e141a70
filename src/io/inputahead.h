/* inputahead.h - an input's chunks made on a thread of its own
 * (inputahead.c).  Internal to src/io: the stages of input_int.h. */
#ifndef CM_INPUTAHEAD_H
#define CM_INPUTAHEAD_H

#include "io/input.h"

#include <stddef.h>

/* Start the read-ahead thread for this pass (in->ra), when it is wanted
 * (cm_input_readahead), the pass has not begun and the input is a regular
 * file.  Without a thread (in->ra NULL) the caller reads as before. */
void inputahead_start(cm_input *in);

/* Stop and join the read-ahead thread (none: nothing); an error it met
 * that the caller never reached is dropped (the caller stopped before
 * it). */
void inputahead_stop(cm_input *in);

/* cm_input_next from the read-ahead thread's ring (in->ra set): the same
 * chunks, offsets and errors as the caller's own reading; at the end or an
 * error, in->ra_ended and in->ra_rc are set and the thread is gone. */
int inputahead_next(cm_input *in, const char **data, size_t *len);

/* inputdecode_member_end for an input read ahead (in->ra set, gzip): the
 * chunks the thread made taken, and their text dropped, until one that
 * ended the member of the chunk last handed out.  0 when the member ended
 * sound, -1 after reporting its damage (the thread's error, as
 * inputahead_next reports it).  An error the thread met after the member's
 * end is left in the ring, unreported. */
int inputahead_member_end(cm_input *in);

#endif
