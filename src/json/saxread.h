/* saxread.h - drive yajl over an input, chunk by chunk, with absolute byte
 * offsets in messages. */
#ifndef CM_SAXREAD_H
#define CM_SAXREAD_H

#include <stdint.h>
#include <yajl/yajl_parse.h>
#include "io/input.h"

typedef struct cm_sax {
	yajl_handle h;
	cm_input *in;
	const char *what;  /* label for the progress line */
	uint64_t base;     /* text offset of the piece yajl is parsing */
	int started;       /* a byte other than white space was parsed */
	/* Optional, set by the caller before cm_sax_run (zero: none): called
	 * with each piece of text, S[0..N) at text offset BASE, just before yajl
	 * parses it.  Every byte of the text comes once, in order; S stays valid
	 * until that parse returns, so the callbacks it triggers may read it
	 * too.  For a reader that needs the bytes as they were (docread). */
	void (*tap)(void *tap_ctx, const char *s, size_t n, uint64_t base);
	/* Optional, with tap: called when yajl has parsed the piece the tap
	 * last showed, while its bytes are still valid, so that a reader may
	 * keep the part of it that a value still open will need (docread). */
	void (*tap_done)(void *tap_ctx);
	void *tap_ctx;
	/* Optional, set by the caller before cm_sax_run: the document's array
	 * key.  Then no value is held longer than the splitter's bounds
	 * (docsplit.h: an element of that array, a top-level member's value),
	 * judged as the splitter judges them, on each chunk as it arrives:
	 * a token that never ends is not collected until memory runs out. */
	const char *array_key;
} cm_sax;

/* Parse all of IN with CALLBACKS (ctx CTX): one JSON value, nothing after it
 * but whitespace.  A callback that finds bad data reports it itself (with
 * cm_error and cm_sax_offset) and returns 0.  The text is held to strict JSON
 * (jcheck.h) as well as to yajl's syntax.  Returns 0, or -1 after a
 * report: read errors, JSON syntax errors and truncation are reported here as
 * "FILE:OFFSET: MESSAGE". */
int cm_sax_run(cm_sax *sax, cm_input *in, const yajl_callbacks *callbacks, void *ctx,
	       const char *what);

/* Offset in the text just past the token the current callback is about. */
int64_t cm_sax_offset(const cm_sax *sax);

#endif
