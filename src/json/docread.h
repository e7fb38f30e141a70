/* docread.h - stream a JSON document whose top level is an object holding one
 * large array (a trace's "traceEvents", a window's "events"): the elements of
 * that array are handed over one at a time as small values, the other
 * top-level members whole, all in document order. */
#ifndef CM_DOCREAD_H
#define CM_DOCREAD_H

#include <stddef.h>
#include <stdint.h>
#include "io/input.h"
#include "json/jval.h"

/* A top-level member as its bytes were in the input. */
typedef struct cm_docread_text {
	const char *key;   /* the key, quotes and escapes included */
	size_t klen;
	const char *value; /* the value, from its first byte to its last */
	size_t vlen;
} cm_docread_text;

typedef struct cm_docread_sink {
	/* A top-level member other than the array; called only when wants_member
	 * is NULL or returns non-zero for KEY (others are skipped unbuilt): 1
	 * for a member that may appear once, 2 for one that may repeat (each
	 * appearance is handed over, the last one last).  VAL lives until the
	 * callback returns.  0 to go on, -1 after reporting. */
	int (*member)(void *ctx, const char *key, size_t klen, const cm_jval *val, int64_t offset);
	int (*wants_member)(void *ctx, const char *key, size_t klen);
	/* The array member begins / ends (its key is ARRAY_KEY).  May be NULL. */
	int (*array_begin)(void *ctx);
	int (*array_end)(void *ctx);
	/* One element of the array, which must be an object (else an error is
	 * reported); NULL skips the elements unbuilt.  0 or -1. */
	int (*element)(void *ctx, uint64_t index, const cm_jval *el, int64_t offset);
	void *ctx;
	/* Optional: when set, called instead of member, with the member's text
	 * as it was in the input as well (TEXT lives until the callback
	 * returns), for a writer that passes members through unchanged.  (The
	 * reader keeps the bytes of each member it builds while it reads it,
	 * and parses them once it has ended: memory stays bounded by the
	 * largest such member, at most its bound, docsplit.h.) */
	int (*member_text)(void *ctx, const char *key, size_t klen, const cm_jval *val,
			   const cm_docread_text *text, int64_t offset);
} cm_docread_sink;

/* Read all of IN: a top-level object whose member ARRAY_KEY, when present,
 * is an array of objects; WHAT names the document in messages ("window",
 * "trace"), LABEL is the progress label.  A member named twice is refused
 * when it is ARRAY_KEY or one the sink builds and wants once.  Returns 0, or -1 after
 * reporting.  *seen_array tells whether ARRAY_KEY was there. */
int cm_docread_run(cm_input *in, const char *array_key, const char *what, const cm_docread_sink *sink,
		   const char *label, int *seen_array);

#endif
