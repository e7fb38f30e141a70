/* docmember.c - a top-level member's value, as the splitter reads it: held
 * until it ends, then handed on whole; and its check for the sink.
 *
 * A member value is handed on whole, so it is held while it is read.  A
 * big one (a window's user_annotations: about 10 MB a GB of window) would
 * make memory grow with the input; so a value longer than the spill size
 * goes to an unlinked temporary file as it is read, and is handed on as a
 * read-only mapping of that file.  Its reader may then let go of the pages
 * behind it (cm_docsplit_release), and this file's own check of the value
 * (cm_docsplit_member_key) does so too, an element or member at a time. */
#include "config.h"
#include "json/docmember.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/jscan.h"
#include "json/jval.h"
#include "json/jvalid.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Member values longer than this go to a temporary file. */
static size_t spill_at = 1u << 20;

/* The spilled value being handed on by this thread, mapped. */
static __thread const char *spill_map;
static __thread size_t spill_map_len;

void cm_docsplit_set_spill(size_t bytes) { spill_at = bytes; }

void cm_docsplit_release(const char *text, size_t upto)
{
	uintptr_t a = (uintptr_t)text, b;
	long page = sysconf(_SC_PAGESIZE);
	if (!spill_map || text != spill_map)
		return;
	if (upto > spill_map_len)
		upto = spill_map_len;
	b = (a + upto) & ~(uintptr_t)(page - 1); /* whole pages only; the mapping starts on one */
	if (b > a)
		madvise((void *)a, b - a, MADV_DONTNEED);
}

size_t cm_docsplit_spill_size(void) { return spill_at; }

int docmember_put(struct split *sp, const char *s, size_t n)
{
	if (sp->record_only) /* the careful reader has the value */
		return 0;
	return cm_spillbuf_put(&sp->val, s, n, spill_at);
}

int docmember_done(struct split *sp, int64_t end_offset)
{
	const char *v;
	size_t n;
	int rc;
	if (sp->lay_on)
		cm_doclayout_member(&sp->lay, sp->tag, sp->key_at, sp->key_end, sp->val_at, (uint64_t)end_offset);
	if (sp->record_only)
		return 0;
	if (!(v = cm_spillbuf_text(&sp->val, &n)))
		return CM_DOCSPLIT_IOERR;
	if (sp->val.map) { /* spilled: its reader may let go of its pages */
		spill_map = v;
		spill_map_len = n;
	}
	if (sp->sink->cut_cpu) {
		double t = cm_thread_cpu_s();
		rc = sp->sink->member(sp->sink->ctx, sp->key.p, sp->key.len, v, n, end_offset) < 0;
		sp->in_sink += cm_thread_cpu_s() - t;
	} else {
		rc = sp->sink->member(sp->sink->ctx, sp->key.p, sp->key.len, v, n, end_offset) < 0;
	}
	spill_map = NULL;
	cm_spillbuf_clear(&sp->val); /* (the mapping let go) */
	return rc;
}

/* cm_jvalid_value (at depth 1) of a spilled member value: an object or an
 * array is checked an element (a key and a value) at a time, letting go of
 * the pages behind every MiB; the verdict is the same. */
static int valid_released(const char *s, size_t n)
{
	size_t i = 0, at, done = 0;
	char close_ch;
	cm_jscan_skip_ws(s, n, &i);
	if (i >= n || (s[i] != '{' && s[i] != '['))
		return cm_jvalid_value(s, n, 1, NULL);
	close_ch = s[i++] == '{' ? '}' : ']';
	cm_jscan_skip_ws(s, n, &i);
	if (i < n && s[i] == close_ch) {
		i++;
	} else {
		for (;;) {
			if (close_ch == '}') { /* a key, then a colon */
				if (i >= n || s[i] != '"' || cm_jvalid_prefix(s + i, n - i, 2, &at) != 1)
					return 0;
				i += at;
				cm_jscan_skip_ws(s, n, &i);
				if (i >= n || s[i] != ':')
					return 0;
				i++;
				cm_jscan_skip_ws(s, n, &i);
			}
			if (cm_jvalid_prefix(s + i, n - i, 2, &at) != 1)
				return 0;
			i += at;
			if (i - done >= (1u << 20)) {
				cm_docsplit_release(s, i);
				done = i;
			}
			cm_jscan_skip_ws(s, n, &i);
			if (i < n && s[i] == ',') {
				i++;
				cm_jscan_skip_ws(s, n, &i);
			} else if (i < n && s[i] == close_ch) {
				i++;
				break;
			} else {
				return 0;
			}
		}
	}
	cm_jscan_skip_ws(s, n, &i);
	cm_docsplit_release(s, i);
	return i == n;
}

const cm_jval *cm_docsplit_member_key(cm_arena *arena, const char *key, size_t klen, const char *val, size_t vlen)
{
	if (!cm_jvalid_value(key, klen, 1, NULL))
		return NULL;
	if (val == spill_map ? !valid_released(val, vlen) : !cm_jvalid_value(val, vlen, 1, NULL))
		return NULL;
	return cm_jval_parse_py(arena, key, klen);
}
