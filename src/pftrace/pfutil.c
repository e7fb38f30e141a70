/* pfutil.c - the Perfetto transcoder's helpers: the interning tables
 * (open addressing over a byte blob, so that a table is a few large blocks,
 * not one allocation a string) and exact times from JSON number text. */
#include "config.h"
#include "pftrace/pfintern.h"
#include "base/diag.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cm_strent {
	uint64_t hash, val; /* val 0: an empty slot */
	uint32_t off, len;  /* the string in the blob */
};

/* The word hash H of N bytes, finished: the length mixed in, then
 * splitmix64's finaliser. */
static inline uint64_t hash_finish(uint64_t h, size_t n)
{
	h ^= n;
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9u;
	h ^= h >> 27;
	h *= 0x94D049BB133111EBu;
	h ^= h >> 31;
	return h;
}

uint64_t cm_pf_hash(const char *s, size_t n, uint64_t seed)
{
	/* FNV-1a over 8-byte words, then splitmix64's finaliser: names are
	 * short, and a hash per event is all it costs */
	uint64_t h = 0xcbf29ce484222325u ^ seed * 0x9E3779B97F4A7C15u;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3u;
		h ^= h >> 29;
	}
	for (; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 0x100000001b3u;
	return hash_finish(h, n);
}

/* The hash of the tables' strings: cm_pf_hash's, but the bytes after the
 * last whole word taken as one word (the last eight bytes, or the few
 * there are), not one at a time (a table's hash is its own: it orders
 * nothing written, where cm_pf_hash's keys the lanes' shards). */
static inline uint64_t strtab_hash(const char *s, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u, w = 0;
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x100000001b3u;
		h ^= h >> 29;
	}
	if (i < n) {
		if (n >= 8) {
			memcpy(&w, s + n - 8, 8);
		} else {
			w = 0;
			memcpy(&w, s, n);
		}
		h = (h ^ w) * 0x100000001b3u;
		h ^= h >> 29;
	}
	return hash_finish(h, n);
}

/* Double the slots (or make the first 1024), placing the entries again. */
static void grow(cm_strtab *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 1024, i;
	struct cm_strent *s = cm_xcalloc(n, sizeof *s);
	for (i = 0; i < t->nslots; i++) {
		size_t j;
		if (!t->slots[i].val)
			continue;
		for (j = t->slots[i].hash & (n - 1); s[j].val; j = (j + 1) & (n - 1))
			;
		s[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = s;
	t->nslots = n;
}

uint64_t cm_strtab_probe(cm_strtab *t, const char *s, size_t n, uint64_t val, struct cm_strcache *c, uint64_t w0,
			 uint64_t w1)
{
	uint64_t h = strtab_hash(s, n);
	size_t j;
	if (!t->nslots || (t->count + 1) * 4 > t->nslots * 3)
		grow(t);
	for (j = h & (t->nslots - 1); t->slots[j].val; j = (j + 1) & (t->nslots - 1)) {
		struct cm_strent *e = &t->slots[j];
		if (e->hash == h && e->len == n && (!n || !memcmp(t->blob.p + e->off, s, n))) { /* ("": the blob may be NULL) */
			c->off = e->off, c->len = e->len, c->val = e->val, c->w0 = w0, c->w1 = w1;
			return e->val;
		}
	}
	if (!val)
		return 0;
	t->slots[j].hash = h;
	t->slots[j].val = val;
	t->slots[j].off = (uint32_t)t->blob.len;
	t->slots[j].len = (uint32_t)n;
	c->off = (uint32_t)t->blob.len, c->len = (uint32_t)n, c->val = val, c->w0 = w0, c->w1 = w1;
	cm_buf_put(&t->blob, s, n);
	t->count++;
	return 0;
}

void cm_strtab_clear(cm_strtab *t)
{
	if (t->slots)
		memset(t->slots, 0, t->nslots * sizeof *t->slots);
	t->count = 0;
	t->blob.len = 0;
	memset(t->cache, 0, sizeof t->cache);
}

void cm_strtab_free(cm_strtab *t)
{
	free(t->slots);
	cm_buf_free(&t->blob);
	memset(t, 0, sizeof *t);
}

/* The double nearest the decimal S[0..N) of the form -?D*(.D*)? (a digit
 * at least, 19 significant digits and 19 after the point at most), as
 * strtod rounds it (to the nearest, a half to even), in *D: 1, or 0 when S
 * is not of that form (strtod reads it then).  Most times of a trace take
 * Clinger's fast path (the digits and the power of ten both exact, one
 * correctly rounded division); the rest an exact 128-bit division.  And
 * when the text has 3 decimals at most and is below 2^43 (101 days in
 * microseconds), the nanoseconds are its digits: the double is within
 * 2^-11 of the text, so its product by 1000 within 0.49 of them: *NS is
 * set instead, *D left alone (else *NS left alone). */
static int decimal_double(const char *s, size_t n, double *d, int64_t *ns)
{
	static const uint64_t p10[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u,
					 100000000u, 1000000000u, 10000000000u, 100000000000u, 1000000000000u,
					 10000000000000u, 100000000000000u, 1000000000000000u,
					 10000000000000000u, 100000000000000000u, 1000000000000000000u,
					 10000000000000000000u};
	uint64_t m = 0, p;
	unsigned __int128 num, den, q, r;
	int digits, k = 0, neg = 0, sh;
	size_t i = 0, a;
	unsigned dg;
	if (n && s[0] == '-')
		neg = 1, i = 1;
	/* the digits, the point, the digits: M (wrong when past 19
	 * significant digits, checked below) */
	for (a = i; i < n && (dg = (unsigned)(unsigned char)s[i] - '0') <= 9; i++)
		m = m * 10 + dg;
	digits = (int)(i - a);
	if (i < n && s[i] == '.') {
		size_t b = ++i;
		for (; i < n && (dg = (unsigned)(unsigned char)s[i] - '0') <= 9; i++)
			m = m * 10 + dg;
		k = (int)(i - b);
		digits += k;
	}
	if (i != n || !digits || k > 19)
		return 0;
	if (digits > 19) { /* the significant ones, from the first that is not 0 */
		int sig = digits;
		for (i = a; i < n && (s[i] == '0' || s[i] == '.'); i++)
			sig -= s[i] == '0';
		if (sig > 19)
			return 0;
	}
	p = p10[k];
	if (k <= 3 && m < (UINT64_C(1) << 43) * p) { /* the double is not needed */
		uint64_t x = m * p10[3 - k];
		*ns = neg ? -(int64_t)x : (int64_t)x;
		return 1;
	}
	if (!m) {
		*d = neg ? -0.0 : 0.0;
		return 1;
	}
	if (m <= (UINT64_C(1) << 53) && k <= 19) { /* Clinger: 10^19 < 2^64, but exact as a double to 10^22 */
		*d = (double)m / (double)p;
		*d = neg ? -*d : *d;
		return 1;
	}
	/* m / p to 53 bits: q = m * 2^sh / p in [2^52, 2^53), then rounded */
	sh = 53 - (64 - __builtin_clzll(m)) + (64 - __builtin_clzll(p));
	for (;;) {
		num = sh >= 0 ? (unsigned __int128)m << sh : m;
		den = sh >= 0 ? (unsigned __int128)p : (unsigned __int128)p << -sh;
		q = num / den;
		if (q >= ((unsigned __int128)1 << 53))
			sh--;
		else if (q < ((unsigned __int128)1 << 52))
			sh++;
		else
			break;
	}
	r = num - q * den;
	if (2 * r > den || (2 * r == den && (q & 1)))
		q++;
	*d = ldexp((double)(uint64_t)q, -sh);
	*d = neg ? -*d : *d;
	return 1;
}

/* The double of the number text S[0..N) by strtod; 0, or -1 when it is
 * not all a number or not finite. */
static int strtod_of(const char *s, size_t n, double *d)
{
	char tmp[64], *t = tmp, *end;
	size_t i;
	int ok;
	if (!n)
		return -1;
	for (i = 0; i < n; i++) /* JSON's number grammar (and strtod's "NaN" is not a time) */
		if (!((s[i] >= '0' && s[i] <= '9') || s[i] == '-' || s[i] == '+' || s[i] == '.' || s[i] == 'e' ||
		      s[i] == 'E'))
			return -1;
	if (n >= sizeof tmp)
		t = cm_xmalloc(n + 1);
	memcpy(t, s, n);
	t[n] = 0;
	*d = strtod(t, &end);
	ok = end == t + n;
	if (t != tmp)
		free(t);
	if (!ok || *d != *d || *d - *d != 0) /* not all of it, NaN, or infinite */
		return -1;
	return 0;
}

/* cm_pf_us_to_ns from the double D. */
static int ns_of_double(double d, int64_t *ns)
{
	/* The number's double (strtod rounds correctly, as every JSON reader
	 * does) times 1000, exactly, to the nearest integer, a half to even:
	 * a double d = m * 2^e, so d * 1000 = m * 1000 * 2^e, in 128 bits.
	 * This is the nanosecond a producer meant when it wrote ns / 1000 as
	 * a double (Kineto, the merge), and what Perfetto's JSON import makes
	 * of the text (it multiplies the double by 1000.0 in doubles, which
	 * rounds the same way wherever the result passes 2^53, every
	 * absolute time of a trace). */
	double fr;
	unsigned __int128 m, q, r, half;
	int e, neg;
	neg = d < 0;
	fr = frexp(neg ? -d : d, &e); /* d = fr * 2^e, fr in [0.5, 1) */
	m = (unsigned __int128)ldexp(fr, 53) * 1000u; /* d * 1000 = m * 2^(e - 53) */
	e -= 53;
	if (m == 0) {
		q = 0;
	} else if (e >= 0) {
		if (e > 63)
			return -1;
		q = m << e;
		if (q >> e != m)
			return -1;
	} else if (e <= -120) {
		q = 0; /* far below a nanosecond */
	} else {
		q = m >> -e;
		r = m & (((unsigned __int128)1 << -e) - 1);
		half = (unsigned __int128)1 << (-e - 1);
		if (r > half || (r == half && (q & 1)))
			q++;
	}
	if (q > (unsigned __int128)INT64_MAX + neg)
		return -1;
	*ns = neg ? (int64_t)(0 - (uint64_t)q) : (int64_t)q;
	return 0;
}

int cm_pf_us_to_ns(const char *s, size_t n, int64_t *ns)
{
	double d = 0;
	int64_t x = INT64_MIN; /* no value: decimal_double sets it where it can */
	if (decimal_double(s, n, &d, &x)) {
		if (x != INT64_MIN)
			return *ns = x, 0;
	} else if (strtod_of(s, n, &d) < 0) {
		return -1;
	}
	return ns_of_double(d, ns);
}

int cm_pf_us_to_ns_strtod(const char *s, size_t n, int64_t *ns)
{
	double d;
	if (strtod_of(s, n, &d) < 0)
		return -1;
	return ns_of_double(d, ns);
}

