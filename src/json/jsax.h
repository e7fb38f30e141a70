/* jsax.h - string tokens of JSON already known to be valid (jvalid.h), read
 * without a parser: the window's user-annotation map is walked this way
 * (gpuscan.c).  A validation that also replays the tokens as yajl's
 * callbacks is cm_jvalid_replay (jvalid.h). */
#ifndef CM_JSAX_H
#define CM_JSAX_H

#include <stddef.h>
#include "json/jval.h"

/* The string token of valid JSON at S[*I] (its opening quote): its bytes,
 * decoded into ARENA when it holds escapes, in *LEN of them; *I moves past
 * the closing quote. */
const char *cm_jsax_string(const char *s, size_t n, size_t *i, size_t *len, cm_arena *arena);

#endif
