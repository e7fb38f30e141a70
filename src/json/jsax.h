/* jsax.h - replay a JSON value already known to be valid (jvalid.h) as the
 * yajl callbacks a parse of it would make, without yajl.
 *
 * A SAX consumer written for yajl (cpuscan.c) can then run on worker
 * threads over elements cut out of a document (docsplit.h): validation has
 * been done, so this only tokenises, which costs a fraction of a parse. */
#ifndef CM_JSAX_H
#define CM_JSAX_H

#include <stddef.h>
#include <yajl/yajl_parse.h>
#include "json/jval.h"

/* Call CB's callbacks (null, boolean, number, string, start_map, map_key,
 * end_map, start_array, end_array; integer and double are not used: numbers
 * go to number as their text) for the value S[0..N), which must be valid
 * JSON (the result is undefined otherwise).  Strings with escapes are
 * decoded into ARENA.  Returns 1 when every callback returned non-zero, 0
 * when one stopped the replay. */
int cm_jsax_replay(const char *s, size_t n, const yajl_callbacks *cb, void *ctx, cm_arena *arena);

/* The string token of valid JSON at S[*I] (its opening quote): its bytes,
 * decoded into ARENA when it holds escapes, in *LEN of them; *I moves past
 * the closing quote. */
const char *cm_jsax_string(const char *s, size_t n, size_t *i, size_t *len, cm_arena *arena);

#endif
