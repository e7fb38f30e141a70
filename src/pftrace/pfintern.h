/* pfintern.h - the pieces the Perfetto transcoder's stages share: string
 * tables for interning (and for naming tracks), exact times from JSON
 * number text, and the event encoder's entry points (pfevent.c). */
#ifndef CM_PFINTERN_H
#define CM_PFINTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "json/jwrite.h"

/* ---- a string table: bytes -> a number, for interning ---- */
/* Entries of a table's cache of the strings met lately (a power of 2). */
#define CM_STRTAB_CACHE 128
typedef struct cm_strtab {
	struct cm_strent *slots;
	size_t nslots, count;
	cm_buf blob; /* the strings' bytes */
	/* the strings met lately, by a hash of their words: most
	 * lookups of an event's keys, category and name find theirs here,
	 * without the hash of all their bytes and the probe (val 0: empty).
	 * W0 and W1 are cm_strtab_words' of the string: with its length,
	 * all its bytes when it has 16 at most */
	struct cm_strcache {
		uint64_t w0, w1;
		uint64_t val;
		uint32_t off, len;
	} cache[CM_STRTAB_CACHE];
} cm_strtab;

/* The number stored for S[0..N) (from 1 up), or 0 when it is new, in which
 * case VAL is stored for it (VAL 0: only look). */
static inline uint64_t cm_strtab_get(cm_strtab *t, const char *s, size_t n, uint64_t val);
/* cm_strtab_get past its cache: the probe of the table, C the cache
 * entry to fill, W0 and W1 the string's words. */
uint64_t cm_strtab_probe(cm_strtab *t, const char *s, size_t n, uint64_t val, struct cm_strcache *c, uint64_t w0,
			 uint64_t w1);

/* Two words that, with N, say every byte of S[0..N) when N is 16 at most
 * (its first and last 8 bytes, overlapping; fewer bytes packed in one
 * word, W1 then 0), and its ends when longer; no byte outside S read. */
static inline void cm_strtab_words(const char *s, size_t n, uint64_t *w0, uint64_t *w1)
{
	uint32_t a, b;
	if (n >= 8) {
		memcpy(w0, s, 8);
		memcpy(w1, s + n - 8, 8);
		return;
	}
	*w1 = 0;
	if (n >= 4) {
		memcpy(&a, s, 4);
		memcpy(&b, s + n - 4, 4);
		*w0 = a | (uint64_t)b << 32;
	} else {
		*w0 = n ? (unsigned char)s[0] | (unsigned)(unsigned char)s[n >> 1] << 8 |
			      (unsigned)(unsigned char)s[n - 1] << 16
			: 0;
	}
}

/* The cache entry of S[0..N) in T, and its words in *W0, *W1. */
static inline __attribute__((always_inline)) struct cm_strcache *cm_strtab_slot(const cm_strtab *t, const char *s, size_t n,
										 uint64_t *w0, uint64_t *w1)
{
	size_t x;
	/* the slot: a multiplicative hash of the two words and the length,
	 * which the compare needs anyway, in 128 entries.  The slot was the
	 * length and three bytes, read again, in 64 (a hash of 64 put more
	 * strings met together on one slot): 24.5 M instructions of the 50k
	 * pair's .pftrace merge for the slots; this one, with its misses'
	 * probes, 22.9 M fewer in all (BENCHMARKS.md "pfcpu16") */
	cm_strtab_words(s, n, w0, w1);
	x = (size_t)(((*w0 ^ (*w1 * UINT64_C(0x9E3779B97F4A7C15)) ^ n) * UINT64_C(0xBF58476D1CE4E5B9)) >> 57);
	return (struct cm_strcache *)&t->cache[x & (CM_STRTAB_CACHE - 1)];
}

/* 1 when the cache entry C holds S[0..N) (words W0, W1). */
static inline int cm_strtab_hit(const cm_strtab *t, const struct cm_strcache *c, const char *s, size_t n, uint64_t w0,
				uint64_t w1)
{
	return c->val && c->len == n && c->w0 == w0 && c->w1 == w1 &&
	       (n <= 16 || !memcmp(t->blob.p + c->off + 8, s + 8, n - 16));
}

/* (always inline, as pfbody.c's intern is: an event's name, category and
 * keys each look theirs up, and GCC left them out of line, a call's saving
 * and restoring of registers a lookup) */
static inline __attribute__((always_inline)) uint64_t cm_strtab_get(cm_strtab *t, const char *s, size_t n, uint64_t val)
{
	uint64_t w0, w1;
	struct cm_strcache *c = cm_strtab_slot(t, s, n, &w0, &w1);
	if (cm_strtab_hit(t, c, s, n, w0, w1))
		return c->val;
	return cm_strtab_probe(t, s, n, val, c, w0, w1);
}

/* The number stored for S[0..N) when T's cache holds it, else 0 (the
 * table not probed). */
static inline __attribute__((always_inline)) uint64_t cm_strtab_cached(const cm_strtab *t, const char *s, size_t n)
{
	uint64_t w0, w1;
	const struct cm_strcache *c = cm_strtab_slot(t, s, n, &w0, &w1);
	return cm_strtab_hit(t, c, s, n, w0, w1) ? c->val : 0;
}

/* Forget everything (keeps the memory). */
void cm_strtab_clear(cm_strtab *t);
void cm_strtab_free(cm_strtab *t);
/* Bytes held by the strings. */
static inline size_t cm_strtab_bytes(const cm_strtab *t) { return t->blob.len; }

/* A 64-bit hash of S[0..N) mixed with SEED. */
uint64_t cm_pf_hash(const char *s, size_t n, uint64_t seed);

/* The JSON number S[0..N), a time in microseconds, as integer nanoseconds:
 * its double (correctly rounded from the text) times 1000, exactly, to the
 * nearest integer, a half to even (pfutil.c says why).  0, or -1 when it
 * is out of the int64 range or not a number. */
int cm_pf_us_to_ns(const char *s, size_t n, int64_t *ns);
/* The same by strtod alone (cm_pf_us_to_ns reads plain decimals itself):
 * the reference its tests compare with. */
int cm_pf_us_to_ns_strtod(const char *s, size_t n, int64_t *ns);

/* ---- the lanes of a thread (pflanes.c) ---- */
/* The threads' lanes are kept in this many independent parts (shards),
 * placed in parallel (pflaneq.c).  Fixed: the lanes depend on it. */
#define CM_PF_SHARDS 16
typedef struct cm_pflanes cm_pflanes;
cm_pflanes *cm_pflanes_new(void);
void cm_pflanes_free(cm_pflanes *l);

/* The lane (0: the thread's own track, 1...: more tracks of the thread)
 * where the slice [B, E] of the thread THREAD goes, so that the trace
 * processor pairs its begin and end (pflanes.c says when lane 0 would not
 * do); remembered for the slices after it. */
unsigned cm_pflanes_place(cm_pflanes *l, uint64_t thread, int64_t b, int64_t e);
/* The slices placed so far on a lane out of the in-order mode at or after
 * the end of all of its slices (pflanes.c's append; for the tests). */
unsigned long cm_pflanes_appends(const cm_pflanes *l);
/* The slices placed so far on a list in front of a treap (pflanes.c's
 * "lanes whose slices come in order"; for the tests). */
unsigned long cm_pflanes_fronts(const cm_pflanes *l);

/* ---- the ties the lanes look out for (pflanetie.c) ---- */
/* A filter of (thread, begin) keys of the slices a merge writes last, of
 * two kinds: its runtime calls' (after the CPU trace's slices) and its
 * GPU annotation spans' (after the window's events): a Bloom filter of
 * one word a key, each kind its own bits of the word.  Every key added is
 * found (no false negative); a key not added is found now and then (a
 * false positive). */
typedef struct cm_pfties {
	uint64_t *w;
	uint64_t mask;   /* the words, less one (a power of 2) */
	uint64_t thr[2]; /* each kind's threads: bit (thread & 63) of each thread with a key (the
			  * lanes ask the words of a thread with none of the kinds asked for no slice) */
} cm_pfties;
/* The kinds of key (a set of them: an OR). */
#define CM_PFTIES_CALL 1u
#define CM_PFTIES_SPAN 2u
/* A filter for about N keys (sized 16 to 32 bits a key, up to 8 MiB). */
cm_pfties *cm_pfties_new(uint64_t n);
void cm_pfties_free(cm_pfties *f);
/* Its bytes (for the tests and the benchmarks). */
size_t cm_pfties_bytes(const cm_pfties *f);
/* Add the key of KIND of the slices of THREAD (cm_pflaneq_key's) that
 * begin at B (ns, as the lanes get it).  Any thread, any number at once
 * (atomic ORs); before any cm_pfties_has, which must see it (a join
 * between). */
void cm_pfties_add(cm_pfties *f, uint64_t thread, int64_t b, unsigned kind);
/* The kinds of which F may have a key of THREAD (all it has). */
static inline unsigned cm_pfties_kinds(const cm_pfties *f, uint64_t thread)
{
	uint64_t bit = (uint64_t)1 << (thread & 63);
	return ((f->thr[0] & bit) ? CM_PFTIES_CALL : 0) | ((f->thr[1] & bit) ? CM_PFTIES_SPAN : 0);
}

/* The hash of (THREAD, B): its low bits pick the word, its top 24 the
 * bits.  One multiply: the thread keys are hashes already (two keys meet
 * only where their threads differ as their begins do: a false positive
 * at worst), and the product's top bits depend on every bit of the begin. */
static inline uint64_t cm_pfties_hash(uint64_t thread, int64_t b)
{
	uint64_t x = (thread ^ (uint64_t)b) * 0x9E3779B97F4A7C15u;
	return x ^ x >> 32;
}
/* The 4 bits of hash H's word for a call (4 fields of 6 bits from the
 * top of H); a span's are those turned by 32 (as good a choice of 4, and
 * apart from a call's of the same key). */
static inline uint64_t cm_pfties_bits(uint64_t h)
{
	return (uint64_t)1 << (h >> 58) | (uint64_t)1 << (h >> 52 & 63) | (uint64_t)1 << (h >> 46 & 63) |
	       (uint64_t)1 << (h >> 40 & 63);
}
static inline uint64_t cm_pfties_span_bits(uint64_t m) { return m << 32 | m >> 32; }
/* 1 when (THREAD, B) may have been added as a key of a kind of KINDS
 * (always when it was). */
static inline int cm_pfties_has(const cm_pfties *f, uint64_t thread, int64_t b, unsigned kinds)
{
	uint64_t h = cm_pfties_hash(thread, b), w = f->w[h & f->mask], m = cm_pfties_bits(h);
	if ((kinds & CM_PFTIES_CALL) && (w & m) == m)
		return 1;
	m = cm_pfties_span_bits(m);
	return (kinds & CM_PFTIES_SPAN) && (w & m) == m;
}

/* From now on L keeps each slice placed whose (thread, begin) passes F
 * as a key of a kind of KINDS (with its lane and duration), so that a
 * slice tied with it once it is forgotten takes another lane; KINDS 0
 * (or F NULL): it keeps none from now on (what it kept is still asked).
 * Pflaneq.c sets CALL and SPAN for the slices before the merge's window's
 * events, SPAN for those, 0 from the spans on; none by default (as
 * before).  Only the threads F may have a key of asked. */
void cm_pflanes_ties(cm_pflanes *l, const cm_pfties *f, unsigned kinds);
/* The slices L keeps for their ties, and in *LOST (not NULL) those its
 * full table did not (for the tests). */
unsigned long cm_pflanes_kept(const cm_pflanes *l, unsigned long *lost);

/* ---- the event encoder (pfevent.c) ---- */
typedef struct cm_pfev cm_pfev;

/* An encoder appending Trace packets to OUT; LABEL names the output. */
cm_pfev *cm_pfev_new(cm_buf *out, const char *label);

/* The sink's part of an "M" or "C" element S[0..N) at OFFSET (they make
 * tracks, so they are encoded in order, from their text).  0, or -1 after
 * reporting what cannot be written. */
int cm_pfev_element(cm_pfev *e, const char *s, size_t n, int64_t offset);

/* ---- batches of elements (pfbatch.c) ---- */

/* A worker's part (any thread, its own encoder W): the batch IN of
 * elements (cm_pfbatch_add's) into records in OUT, each event's track
 * event encoded with interning that starts over with the batch.  0, or -1
 * after reporting what cannot be written. */
int cm_pfbatch_encode(cm_pfev *w, const cm_buf *in, cm_buf *out);

/* An element of a batch: its text S[0..N), at OFF in the document. */
struct cm_pfelem {
	const char *s;
	size_t n;
	int64_t off;
};
/* The same for the batch SEQ of the NEL elements EL (the text stays the
 * caller's). */
int cm_pfbatch_encode_elems(cm_pfev *w, uint64_t seq, const struct cm_pfelem *el, size_t nel, cm_buf *out);

/* The sequential part, batch after batch in order: the records REC as
 * packets (tracks, lanes, times made here) appended to E's output, or
 * handed to E's emit (REC's buffer then swapped for another, empty).  0
 * or -1 (reported). */
int cm_pfbatch_apply(cm_pfev *e, cm_buf *rec);

/* Append the element S[0..N), at OFFSET in the text, to the batch B; the
 * first of a batch (B empty) puts the batch's number SEQ first. */
void cm_pfbatch_add(cm_buf *b, uint64_t seq, const char *s, size_t n, int64_t offset);

/* The document has ended: write what is held back. */
void cm_pfev_finish(cm_pfev *e);

void cm_pfev_free(cm_pfev *e);

#endif
