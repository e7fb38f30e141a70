/* inputdecode.h - an input's raw bytes made text (inputdecode.c).
 * Internal to src/io: the stages of input_int.h. */
#ifndef CM_INPUTDECODE_H
#define CM_INPUTDECODE_H

#include "io/input.h"

#include <stddef.h>

/* The next chunk of text, as cm_input_next hands it out: *DATA starts its
 * buffer, in->text (gzip) or in->raw (plain text).  The first call of a
 * pass sniffs the format.  A byte order mark skipped moves in->next_off
 * past it; adding the chunk's length is the caller's.  Returns 1 for a
 * chunk, 0 at the end, -1 after reporting. */
int inputdecode_fill(cm_input *in, const char **data, size_t *len);

/* After the text of a gzip input (in->gzip, sniffed) was found bad, with
 * no read-ahead thread: inflate on, discarding the text, to the end of the
 * member the last chunk handed out came from (read no further), so that
 * its CRC and length are checked.  0 when the member ended sound (or had
 * already ended), -1 after reporting its damage (a CRC or length error,
 * bad deflate data, the file ending inside it, a read error). */
int inputdecode_member_end(cm_input *in);

#endif
