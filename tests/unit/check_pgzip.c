/* check_pgzip.c - the parallel gzip stream: sizes around the block boundary,
 * odd write sizes, 0 to 8 workers, every level class; each stream inflated
 * by zlib and compared, with its header, trailer and size checked; a sink
 * that fails stops the stream. */
#include "config.h"
#include "check_common.h"
#include "io/pgzip.h"

#include <stdint.h>
#include <zlib.h>

#define B CM_PGZ_BLOCK

/* The compressed stream, gathered by the sink. */
struct gather {
	unsigned char *p;
	size_t len, cap;
	int calls;
	int fail_at; /* the sink fails on this call (1-based); 0: never */
};

static int sink(void *ctx, const unsigned char *p, size_t n)
{
	struct gather *g = ctx;
	if (++g->calls == g->fail_at)
		return -1;
	ck_assert_int_eq(g->fail_at && g->calls > g->fail_at, 0); /* nothing after a failure */
	if (g->len + n > g->cap) {
		g->cap = 2 * (g->len + n);
		g->p = realloc(g->p, g->cap);
		ck_assert_ptr_nonnull(g->p);
	}
	memcpy(g->p + g->len, p, n);
	g->len += n;
	return 0;
}

/* N bytes of trace-like text that repeats at distances both shorter and
 * longer than a block (so the dictionary matters), with runs of random
 * bytes (so some blocks do not compress and deflate's output outgrows its
 * input).  Malloc'd; the same for the same N. */
static unsigned char *make_input(size_t n)
{
	unsigned char *p = malloc(n ? n : 1);
	uint64_t x = 0x9E3779B97F4A7C15u;
	size_t i = 0;
	ck_assert_ptr_nonnull(p);
	while (i < n) {
		int k;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		if (x % 97 == 0) { /* a run of noise */
			for (k = 0; k < 3000 && i < n; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				p[i++] = (unsigned char)x;
			}
		} else if (i > 40000 && x % 3 == 0) { /* a copy from up to 40000 back */
			size_t from = i - 1 - (size_t)(x >> 20) % 40000, len = 20 + (size_t)(x >> 40) % 200;
			for (k = 0; (size_t)k < len && i < n; k++)
				p[i] = p[from + (size_t)k], i++;
		} else {
			int m = snprintf((char *)p + i, n - i, "{\"ph\":\"X\",\"ts\":%llu,\"tid\":%u},",
					 (unsigned long long)(x >> 30), (unsigned)(x % 64));
			i += (size_t)m < n - i ? (size_t)m : n - i;
		}
	}
	return p;
}

/* Inflate the gzip stream G (one member, nothing after it) and check it
 * gives WANT[0..N): header as zlib writes it, CRC-32 and ISIZE. */
static void check_stream(const struct gather *g, const unsigned char *want, size_t n, int level)
{
	z_stream s;
	unsigned char *out = malloc(n + 1);
	unsigned long crc;
	int rc;
	ck_assert_ptr_nonnull(out);
	ck_assert_uint_ge(g->len, 18);
	ck_assert_int_eq(g->p[0], 0x1f);
	ck_assert_int_eq(g->p[1], 0x8b);
	ck_assert_int_eq(g->p[3], 0); /* no name, no extra */
	ck_assert_int_eq(g->p[8], level == 9 ? 2 : level < 2 ? 4 : 0);
	memset(&s, 0, sizeof s);
	ck_assert_int_eq(inflateInit2(&s, 15 + 16), Z_OK); /* gzip only: checks CRC and ISIZE */
	s.next_in = g->p;
	s.avail_in = (uInt)g->len;
	s.next_out = out;
	s.avail_out = (uInt)n + 1;
	rc = inflate(&s, Z_FINISH);
	ck_assert_msg(rc == Z_STREAM_END, "inflate: %d (%s)", rc, s.msg ? s.msg : "");
	ck_assert_uint_eq(s.avail_in, 0); /* one member: no trailing bytes */
	ck_assert_uint_eq(s.total_out, n);
	ck_assert_int_eq(memcmp(out, want, n), 0);
	inflateEnd(&s);
	/* the trailer by hand too: inflate would also accept a wrong one here
	 * only if both were wrong the same way */
	crc = crc32(0L, want, (uInt)n);
	ck_assert_uint_eq(g->p[g->len - 8] | g->p[g->len - 7] << 8 | g->p[g->len - 6] << 16 |
				  (unsigned long)g->p[g->len - 5] << 24,
			  crc);
	ck_assert_uint_eq(g->p[g->len - 4] | g->p[g->len - 3] << 8 | g->p[g->len - 2] << 16 |
				  (unsigned long)g->p[g->len - 1] << 24,
			  (unsigned long)(n & 0xffffffffu));
	free(out);
}

/* Write sizes: whole, 1-byte at the edges, odd primes, and more than a block. */
static const size_t chunks[][4] = {
	{SIZE_MAX, 0, 0, 0}, /* all at once */
	{1, 7, 4093, 0},
	{65521, 1, 131071, 0},
	{B - 1, 2, B + 3, 0},
	{300007, 0, 0, 0},
};

/* Sizes around the block boundary. */
static const size_t sizes[] = {0, 1, 100, B - 1, B, B + 1, 2 * B, 2 * B + 1, 7 * B + 12345, 3000000};

static const int threads[] = {0, 1, 2, 3, 8};

/* Compress IN[0..N) at LEVEL with T workers, writing in the chunk pattern C;
 * returns the stream (the caller frees g.p). */
static struct gather run(const unsigned char *in, size_t n, int level, int t, const size_t *c)
{
	struct gather g = {0};
	cm_pgz *z = cm_pgz_new(level, t, sink, &g);
	size_t done = 0, k = 0;
	ck_assert_ptr_nonnull(z);
	while (done < n) {
		size_t want = c[k] ? c[k] : c[0], len = n - done < want ? n - done : want;
		ck_assert_int_eq(cm_pgz_write(z, in + done, len), CM_PGZ_OK);
		done += len;
		k = k + 1 < 4 && c[k + 1] ? k + 1 : 0;
	}
	ck_assert_int_eq(cm_pgz_finish(z), CM_PGZ_OK);
	cm_pgz_free(z);
	return g;
}

/* Loop index: size x chunk pattern x threads, at level 6. */
START_TEST(round_trip)
{
	size_t nsz = sizeof sizes / sizeof *sizes, nch = sizeof chunks / sizeof *chunks;
	size_t n = sizes[(size_t)_i % nsz];
	const size_t *c = chunks[(size_t)_i / nsz % nch];
	int t = threads[(size_t)_i / nsz / nch];
	unsigned char *in = make_input(n);
	struct gather g = run(in, n, 6, t, c);
	check_stream(&g, in, n, 6);
	free(g.p);
	free(in);
}
END_TEST

/* Every level class (stored, fast, default, best) across several blocks. */
START_TEST(levels)
{
	static const int lv[] = {0, 1, 6, 9};
	size_t n = 5 * B + 777;
	unsigned char *in = make_input(n);
	struct gather g = run(in, n, lv[_i], 3, chunks[1]);
	check_stream(&g, in, n, lv[_i]);
	free(g.p);
	free(in);
}
END_TEST

/* The dictionary carries matches across block cuts: the stream is within 1%
 * (plus a flush marker a block) of one zlib stream of the same input, and
 * the same whatever the thread count. */
START_TEST(dictionary_keeps_the_ratio)
{
	size_t n = 3000000;
	unsigned char *in = make_input(n);
	struct gather g1 = run(in, n, 6, 1, chunks[0]), g4 = run(in, n, 6, 4, chunks[2]);
	uLongf zlen = compressBound((uLong)n);
	unsigned char *zb = malloc(zlen);
	ck_assert_ptr_nonnull(zb);
	ck_assert_int_eq(compress2(zb, &zlen, in, (uLong)n, 6), Z_OK);
	ck_assert_uint_le(g1.len, zlen + zlen / 100 + 6 * (n / B + 1));
	ck_assert_uint_eq(g1.len, g4.len);
	ck_assert_int_eq(memcmp(g1.p, g4.p, g1.len), 0);
	free(zb);
	free(g1.p);
	free(g4.p);
	free(in);
}
END_TEST

/* A sink that fails stops the stream: the error comes back (from write or
 * finish), again on every later call, and the sink is not called again. */
START_TEST(sink_failure)
{
	size_t n = 20 * B;
	unsigned char *in = make_input(n);
	struct gather g = {0};
	cm_pgz *z;
	size_t done = 0;
	int rc = CM_PGZ_OK;
	g.fail_at = 1 + _i; /* the header, a block, a later block */
	z = cm_pgz_new(6, 2, sink, &g);
	ck_assert_ptr_nonnull(z);
	while (done < n && rc == CM_PGZ_OK) {
		rc = cm_pgz_write(z, in + done, 10007 < n - done ? 10007 : n - done);
		done += 10007;
	}
	if (rc == CM_PGZ_OK)
		rc = cm_pgz_finish(z);
	ck_assert_int_eq(rc, CM_PGZ_SINK);
	ck_assert_int_eq(cm_pgz_write(z, in, 10), CM_PGZ_SINK);
	ck_assert_int_eq(cm_pgz_finish(z), CM_PGZ_SINK);
	ck_assert_int_eq(g.calls, g.fail_at);
	cm_pgz_free(z);
	free(g.p);
	free(in);
}
END_TEST

/* Freed in the middle (a failed run): the workers stop, nothing hangs. */
START_TEST(free_mid_stream)
{
	size_t n = 40 * B;
	unsigned char *in = make_input(n);
	struct gather g = {0};
	cm_pgz *z = cm_pgz_new(6, 4, sink, &g);
	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(cm_pgz_write(z, in, n), CM_PGZ_OK);
	cm_pgz_free(z);
	cm_pgz_free(NULL);
	free(g.p);
	free(in);
}
END_TEST

static Suite *pgzip_suite(void)
{
	Suite *s = suite_create("pgzip");
	TCase *tc = tcase_create("core");
	int nrt = (int)(sizeof sizes / sizeof *sizes * (sizeof chunks / sizeof *chunks) *
			(sizeof threads / sizeof *threads));
	tcase_set_timeout(tc, 120); /* 250 streams; several seconds under ASan */
	tcase_add_loop_test(tc, round_trip, 0, nrt);
	tcase_add_loop_test(tc, levels, 0, 4);
	tcase_add_test(tc, dictionary_keeps_the_ratio);
	tcase_add_loop_test(tc, sink_failure, 0, 3);
	tcase_add_test(tc, free_mid_stream);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(pgzip_suite)
