/* pfkeys.h - the members of a trace event that the .pftrace's encoder
 * reads (struct ev's, pfevent.h), known at a member's quote by the first
 * eight bytes of the text: the flat parse's (pfparse.c) test of a key,
 * in one load, a multiply and a compare. */
#ifndef CM_PFKEYS_H
#define CM_PFKEYS_H

#include "base/word.h"
#include "json/jval.h"

#include <stdint.h>

/* The event's keys known by their first word (cm_pf_key_known): one
 * entry a key, at the hash of its first two bytes (CM_PF_KEY_AT: the
 * eleven keys' pairs land apart in 16, check_pfparse says so), holding its
 * bytes with the closing quote and the colon.  An entry no key lands on
 * is all zeros (KLEN 0: none). */
#define CM_PF_KEY_HASH(w) (((uint32_t)(w) * UINT32_C(0x13956ed)) >> 28)
#define CM_PF_KEY_AT(a, b) CM_PF_KEY_HASH((uint32_t)(unsigned char)(a) | (uint32_t)(unsigned char)(b) << 8)
struct cm_pf_keyword {
	uint64_t want, mask;
	uint32_t klen, kno;
};
#define CM_PF_KEYWORD(k, kno) {cm_pf_kw_want(k, sizeof k - 1) & cm_pf_kw_mask(sizeof k - 1), cm_pf_kw_mask(sizeof k - 1), sizeof k - 1, kno}
#define cm_pf_kw_mask(n) (~UINT64_C(0) >> (64 - 8 * ((n) + 2)))
#define cm_pf_kw_byte(k, n, i) ((uint64_t)(unsigned char)((i) < (n) ? (k)[(i) < (n) ? (i) : 0] : (i) == (n) ? '"' : ':') << 8 * (i))
#define cm_pf_kw_want(k, n) (cm_pf_kw_byte(k, n, 0) | cm_pf_kw_byte(k, n, 1) | cm_pf_kw_byte(k, n, 2) | \
			     cm_pf_kw_byte(k, n, 3) | cm_pf_kw_byte(k, n, 4) | ((n) >= 4 ? cm_pf_kw_byte(k, n, 5) : 0))
static const struct cm_pf_keyword cm_pf_keywords[16] = {
	[CM_PF_KEY_AT('p', 'h')] = CM_PF_KEYWORD("ph", CM_JK_PH),
	[CM_PF_KEY_AT('n', 'a')] = CM_PF_KEYWORD("name", CM_JK_NAME),
	[CM_PF_KEY_AT('c', 'a')] = CM_PF_KEYWORD("cat", CM_JK_CAT),
	[CM_PF_KEY_AT('t', 's')] = CM_PF_KEYWORD("ts", CM_JK_TS),
	[CM_PF_KEY_AT('d', 'u')] = CM_PF_KEYWORD("dur", CM_JK_DUR),
	[CM_PF_KEY_AT('p', 'i')] = CM_PF_KEYWORD("pid", CM_JK_PID),
	[CM_PF_KEY_AT('t', 'i')] = CM_PF_KEYWORD("tid", CM_JK_TID),
	[CM_PF_KEY_AT('a', 'r')] = CM_PF_KEYWORD("args", CM_JK_ARGS),
	[CM_PF_KEY_AT('i', 'd')] = CM_PF_KEYWORD("id", CM_JK_ID),
	[CM_PF_KEY_AT('s', '"')] = CM_PF_KEYWORD("s", CM_JK_S),
	[CM_PF_KEY_AT('b', 'p')] = CM_PF_KEYWORD("bp", CM_JK_BP),
};

/* At C (a member's opening quote, up to E) one of struct ev's keys
 * followed at once by its closing quote and the colon: the byte after the
 * colon, the key's CM_JK_* in *KNO and length in *KLEN; NULL for any other
 * text (member_key's to read: another key, a space before the colon, too
 * few bytes left).  One load, a multiply and a compare, where the string's
 * end and the key's compares were about 40 instructions a member of the
 * CPU trace's text (BENCHMARKS.md "pfparse20"). */
static inline const char *cm_pf_key_known(const char *c, const char *e, unsigned *kno, uint32_t *klen)
{
	const struct cm_pf_keyword *k;
	uint64_t x;
	if (e - c < 9 || *c != '"')
		return NULL;
	x = cm_load_le64(c + 1);
	k = &cm_pf_keywords[CM_PF_KEY_HASH(x & 0xffff)];
	if (!k->klen || (x & k->mask) != k->want)
		return NULL;
	*kno = k->kno;
	*klen = k->klen;
	return c + 1 + k->klen + 2;
}

#endif
