/* check_pgzip.c - the parallel gzip stream: sizes around the block boundary,
 * odd write sizes, 0 to 8 workers, every level class and both deflates (zlib,
 * and ISA-L for levels 1-3 where the build has it); each stream inflated by
 * zlib and compared, with its header, trailer and size checked; the ratio
 * against one stream of the same deflate; a sink that fails stops the
 * stream; streams on a shared crew give the bytes of streams of their
 * own, their blocks written by the crew's workers (a failing sink too);
 * the caller's waits for its workers and its sink's calls, counted for
 * -v. */
#include "config.h"
#include "check_common.h"
#include "io/pgzip.h"
#include "io/pgzcrew.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <zlib.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#endif

#define B CM_PGZ_BLOCK

/* The compressed stream, gathered by the sink. */
struct gather {
	unsigned char *p;
	size_t len, cap;
	int calls;   /* read by other threads with __atomic */
	int fail_at; /* the sink fails on this call (1-based); 0: never */
	int on_caller; /* calls made on the thread named by caller */
	pthread_t caller;
	int check_caller;
};

static int sink(void *ctx, const unsigned char *p, size_t n)
{
	struct gather *g = ctx;
	if (g->check_caller && pthread_equal(pthread_self(), g->caller))
		g->on_caller++;
	if (__atomic_add_fetch(&g->calls, 1, __ATOMIC_RELEASE) == g->fail_at)
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

/* The levels round_trip runs at: zlib's default, and the fast level
 * (ISA-L's deflate where the build has it, else zlib's). */
static const int rt_levels[] = {6, 1};

/* Loop index: size x chunk pattern x threads x level. */
START_TEST(round_trip)
{
	size_t nsz = sizeof sizes / sizeof *sizes, nch = sizeof chunks / sizeof *chunks;
	size_t nth = sizeof threads / sizeof *threads;
	size_t n = sizes[(size_t)_i % nsz];
	const size_t *c = chunks[(size_t)_i / nsz % nch];
	int t = threads[(size_t)_i / nsz / nch % nth];
	int level = rt_levels[(size_t)_i / nsz / nch / nth];
	unsigned char *in = make_input(n);
	struct gather g = run(in, n, level, t, c);
	check_stream(&g, in, n, level);
	free(g.p);
	free(in);
}
END_TEST

/* Every level class (stored, fast, default, best) and every level ISA-L
 * may take (1-3), across several blocks. */
static const int all_levels[] = {0, 1, 2, 3, 6, 9};

START_TEST(levels)
{
	size_t n = 5 * B + 777;
	unsigned char *in = make_input(n);
	struct gather g = run(in, n, all_levels[_i], 3, chunks[1]);
	check_stream(&g, in, n, all_levels[_i]);
	free(g.p);
	free(in);
}
END_TEST

/* Data that does not compress at all, over several blocks: stored blocks
 * (zlib's and ISA-L's fallbacks), each within the first output space pgzip.c
 * gives a block, so within a few bytes a block of the input.  Loop index:
 * the level. */
START_TEST(incompressible)
{
	static const int lv[] = {1, 3, 6};
	size_t n = 5 * B + 777, i;
	unsigned char *in = malloc(n);
	uint64_t x = 0x2545F4914F6CDD1Du;
	struct gather g;
	ck_assert_ptr_nonnull(in);
	for (i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		in[i] = (unsigned char)(x >> 32);
	}
	g = run(in, n, lv[_i], 3, chunks[0]);
	check_stream(&g, in, n, lv[_i]);
	ck_assert_uint_le(g.len, n + 18 + 64 * (n / B + 1));
	free(g.p);
	free(in);
}
END_TEST

/* The deflate each level uses: ISA-L for 1-3 exactly when the build has it. */
START_TEST(engine)
{
	int level;
	for (level = 0; level <= 9; level++) {
		const char *ver = NULL, *eng = cm_pgz_engine(level, &ver);
		ck_assert_ptr_nonnull(ver);
#ifdef HAVE_ISAL
		ck_assert_str_eq(eng, level >= 1 && level <= 3 ? "ISA-L" : "zlib");
#else
		ck_assert_str_eq(eng, "zlib");
#endif
		if (!strcmp(eng, "zlib"))
			ck_assert_str_eq(ver, zlibVersion());
	}
}
END_TEST

/* The size of IN[0..N) as one raw deflate stream at LEVEL, by the deflate
 * that pgzip uses for LEVEL. */
static size_t one_stream(const unsigned char *in, size_t n, int level)
{
	uLongf zlen = compressBound((uLong)n) + 1024;
	unsigned char *zb = malloc(zlen);
	ck_assert_ptr_nonnull(zb);
#ifdef HAVE_ISAL
	if (level >= 1 && level <= 3) {
		struct isal_zstream s;
		unsigned char *lb = malloc(ISAL_DEF_LVL3_DEFAULT); /* the largest of 1-3 */
		ck_assert_ptr_nonnull(lb);
		isal_deflate_init(&s);
		s.level = (uint32_t)level;
		s.level_buf = lb;
		s.level_buf_size = ISAL_DEF_LVL3_DEFAULT;
		s.gzip_flag = IGZIP_DEFLATE;
		s.end_of_stream = 1;
		s.next_in = (uint8_t *)in;
		s.avail_in = (uint32_t)n;
		s.next_out = zb;
		s.avail_out = (uint32_t)zlen;
		ck_assert_int_eq(isal_deflate(&s), COMP_OK);
		ck_assert_int_eq(s.internal_state.state, ZSTATE_END);
		zlen = s.total_out;
		free(lb);
		free(zb);
		return zlen;
	}
#endif
	/* compress2 adds zlib's 6-byte wrapper: a little slack for us */
	ck_assert_int_eq(compress2(zb, &zlen, in, (uLong)n, level), Z_OK);
	free(zb);
	return zlen;
}

/* The dictionary carries matches across block cuts: the stream is within 1%
 * (plus a flush marker a block) of one stream of the same input by the same
 * deflate, and the same bytes whatever the thread count.  Loop index: the
 * level (zlib's default; 1-3, ISA-L's where the build has it). */
START_TEST(dictionary_keeps_the_ratio)
{
	static const int lv[] = {6, 1, 2, 3};
	size_t n = 3000000;
	unsigned char *in = make_input(n);
	struct gather g1 = run(in, n, lv[_i], 1, chunks[0]), g4 = run(in, n, lv[_i], 4, chunks[2]);
	size_t one = one_stream(in, n, lv[_i]);
	ck_assert_msg(g1.len <= one + one / 100 + 6 * (n / B + 1), "level %d: %zu bytes, one stream %zu", lv[_i],
		      g1.len, one);
	ck_assert_uint_eq(g1.len, g4.len);
	ck_assert_int_eq(memcmp(g1.p, g4.p, g1.len), 0);
	free(g1.p);
	free(g4.p);
	free(in);
}
END_TEST

/* IN[0..N) to Z in writes of 10007 bytes, then the finish, stopping at
 * the first call that fails: what that call returned, or CM_PGZ_OK. */
static int write_until_failed(cm_pgz *z, const unsigned char *in, size_t n)
{
	size_t done = 0;
	int rc = CM_PGZ_OK;
	while (done < n && rc == CM_PGZ_OK) {
		rc = cm_pgz_write(z, in + done, 10007 < n - done ? 10007 : n - done);
		done += 10007;
	}
	return rc == CM_PGZ_OK ? cm_pgz_finish(z) : rc;
}

/* A sink that fails stops the stream: the error comes back (from write or
 * finish), again on every later call, and the sink is not called again. */
START_TEST(sink_failure)
{
	size_t n = 20 * B;
	unsigned char *in = make_input(n);
	struct gather g = {0};
	cm_pgz *z;
	g.fail_at = 1 + _i; /* the header, a block, a later block */
	z = cm_pgz_new(6, 2, sink, &g);
	ck_assert_ptr_nonnull(z);
	ck_assert_int_eq(write_until_failed(z, in, n), CM_PGZ_SINK);
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

/* Streams on a crew (cm_pgz_new_crew): NS streams of different inputs
 * written by turns (a burst of many blocks to one, then bytes to each in
 * turn), on a crew of 1 or 3 workers, at levels 1 and 6; each stream the
 * same bytes as a stream of its own, and whole.  The caller's reference
 * goes before the streams end (they hold the crew). */
#define NS 5
START_TEST(crew_streams)
{
	int t = _i & 1 ? 3 : 1, level = _i & 2 ? 6 : 1;
	size_t n[NS] = {0, 1, 3 * B + 7, 20 * B + 12345, 9 * B}, done[NS] = {0};
	unsigned char *in[NS];
	struct gather g[NS], own;
	cm_pgz *z[NS];
	cm_pgz_crew *crew = cm_pgz_crew_new(level, t);
	ck_assert_ptr_nonnull(crew);
	for (int i = 0; i < NS; i++) {
		in[i] = make_input(n[i]);
		memset(&g[i], 0, sizeof g[i]);
		z[i] = cm_pgz_new_crew(crew, sink, &g[i]);
		ck_assert_ptr_nonnull(z[i]);
	}
	/* most of stream 3 at once, as a split's copy writes a file */
	ck_assert_int_eq(cm_pgz_write(z[3], in[3], 15 * B), CM_PGZ_OK);
	done[3] = 15 * B;
	cm_pgz_crew_drop(crew);
	for (size_t step = 10007, left = 1; left;) {
		left = 0;
		for (int i = 0; i < NS; i++) {
			size_t len = n[i] - done[i] < step ? n[i] - done[i] : step;
			ck_assert_int_eq(cm_pgz_write(z[i], in[i] + done[i], len), CM_PGZ_OK);
			done[i] += len;
			left += n[i] - done[i];
		}
	}
	for (int i = 0; i < NS; i++) {
		ck_assert_int_eq(cm_pgz_finish(z[i]), CM_PGZ_OK);
		cm_pgz_free(z[i]);
		check_stream(&g[i], in[i], n[i], level);
		own = run(in[i], n[i], level, 2, chunks[1]);
		ck_assert_uint_eq(own.len, g[i].len);
		ck_assert_int_eq(memcmp(own.p, g[i].p, own.len), 0);
		free(own.p);
		free(g[i].p);
		free(in[i]);
	}
}
END_TEST

/* A crew's stream freed in the middle (a failed run) while another goes
 * on: its blocks leave the crew, nothing hangs, the other stays whole. */
START_TEST(crew_free_mid_stream)
{
	size_t n = 40 * B;
	unsigned char *in = make_input(n);
	struct gather g = {0}, h = {0};
	cm_pgz_crew *crew = cm_pgz_crew_new(6, 2);
	cm_pgz *z, *y;
	ck_assert_ptr_nonnull(crew);
	z = cm_pgz_new_crew(crew, sink, &g);
	y = cm_pgz_new_crew(crew, sink, &h);
	ck_assert_ptr_nonnull(z);
	ck_assert_ptr_nonnull(y);
	ck_assert_int_eq(cm_pgz_write(y, in, n / 2), CM_PGZ_OK);
	ck_assert_int_eq(cm_pgz_write(z, in, n), CM_PGZ_OK);
	cm_pgz_free(z);
	ck_assert_int_eq(cm_pgz_write(y, in + n / 2, n - n / 2), CM_PGZ_OK);
	ck_assert_int_eq(cm_pgz_finish(y), CM_PGZ_OK);
	cm_pgz_crew_drop(crew);
	cm_pgz_free(y);
	check_stream(&h, in, n, 6);
	cm_pgz_crew_drop(NULL);
	free(g.p);
	free(h.p);
	free(in);
}
END_TEST

/* A crew's stream whose sink fails (the header, a block, a later block):
 * the error comes back to the caller, from a write or the finish, and
 * again on every later call; the sink is not called after it.  Its
 * blocks are written by the crew's workers, never on the caller's
 * thread, which only hands them over. */
START_TEST(crew_sink_failure)
{
	size_t n = 20 * B;
	unsigned char *in = make_input(n);
	struct gather g = {0};
	cm_pgz_crew *crew = cm_pgz_crew_new(6, 3);
	cm_pgz *z;
	ck_assert_ptr_nonnull(crew);
	g.fail_at = (int[]){1, 2, 7}[_i];
	g.caller = pthread_self();
	g.check_caller = 1;
	z = cm_pgz_new_crew(crew, sink, &g);
	ck_assert_ptr_nonnull(z);
	cm_pgz_crew_drop(crew);
	ck_assert_int_eq(write_until_failed(z, in, n), CM_PGZ_SINK);
	ck_assert_int_eq(cm_pgz_write(z, in, 10), CM_PGZ_SINK);
	ck_assert_int_eq(cm_pgz_finish(z), CM_PGZ_SINK);
	cm_pgz_free(z);
	ck_assert_int_eq(g.calls, g.fail_at);
	ck_assert_int_eq(g.on_caller, 0);
	free(g.p);
	free(in);
}
END_TEST

/* A crew's stream left with blocks handed over (a --split file the copy
 * has moved on from) has them written without another call: by the
 * workers that deflate them, the header and the ten full blocks before
 * the one being filled (11 sink calls), while the caller writes to
 * another stream or to none; and the bytes are those of a stream of its
 * own. */
START_TEST(crew_left_stream_written)
{
	size_t n = 10 * B + 5;
	unsigned char *in = make_input(n);
	struct gather g = {0}, h = {0}, own;
	cm_pgz_crew *crew = cm_pgz_crew_new(1, 2);
	cm_pgz *z, *y;
	int waited = 0;
	ck_assert_ptr_nonnull(crew);
	z = cm_pgz_new_crew(crew, sink, &g);
	y = cm_pgz_new_crew(crew, sink, &h);
	ck_assert_ptr_nonnull(z);
	ck_assert_ptr_nonnull(y);
	cm_pgz_crew_drop(crew);
	ck_assert_int_eq(cm_pgz_write(z, in, n), CM_PGZ_OK);
	if (_i) /* then the other stream, 3 blocks */
		ck_assert_int_eq(cm_pgz_write(y, in, 3 * B + 1), CM_PGZ_OK);
	while (__atomic_load_n(&g.calls, __ATOMIC_ACQUIRE) < 11 && waited < 20000) {
		nanosleep(&(struct timespec){0, 1000000}, NULL);
		waited++;
	}
	ck_assert_int_eq(__atomic_load_n(&g.calls, __ATOMIC_ACQUIRE), 11);
	ck_assert_int_eq(cm_pgz_finish(z), CM_PGZ_OK);
	ck_assert_int_eq(cm_pgz_finish(y), CM_PGZ_OK);
	cm_pgz_free(z);
	cm_pgz_free(y);
	check_stream(&g, in, n, 1);
	own = run(in, n, 1, 2, chunks[0]);
	ck_assert_uint_eq(own.len, g.len);
	ck_assert_int_eq(memcmp(own.p, g.p, own.len), 0);
	free(own.p);
	free(g.p);
	free(h.p);
	free(in);
}
END_TEST

/* The sink of the stream of waits: the gather's, each call 2 ms long. */
static int slow_sink(void *ctx, const unsigned char *p, size_t n)
{
	nanosleep(&(struct timespec){0, 2000000}, NULL);
	return sink(ctx, p, n);
}

/* -v's figures (cm_pgz_waits): a caller that outruns its one worker (level
 * 9, 2 slots) waits for it; a sink of 2 ms a call has its calls counted
 * as writing on (with workers of its own every call is the caller's), at
 * least 2 ms each; the bytes are the same either way. */
START_TEST(waits)
{
	size_t n = 24 * B + 7;
	unsigned char *in = make_input(n);
	struct gather g = {0};
	cm_pgz *z = cm_pgz_new(_i ? 1 : 9, 1, _i ? slow_sink : sink, &g);
	double wait = -1, emit = -1;
	ck_assert_ptr_nonnull(z);
	cm_pgz_waits(z, &wait, &emit);
	ck_assert(wait == 0 && emit == 0);
	ck_assert_int_eq(cm_pgz_write(z, in, n), CM_PGZ_OK);
	ck_assert_int_eq(cm_pgz_finish(z), CM_PGZ_OK);
	cm_pgz_waits(z, &wait, &emit);
	if (_i)
		ck_assert_msg(emit >= 0.002 * g.calls, "%d calls of 2 ms written on in %.4f s", g.calls, emit);
	else
		ck_assert_msg(wait > 0, "the caller never waited for its worker (%.4f s writing on)", emit);
	cm_pgz_free(z);
	check_stream(&g, in, n, _i ? 1 : 9);
	free(g.p);
	free(in);
}
END_TEST

/* Compress IN[0..N) at level 1 with T workers, a block's worth a call,
 * sleeping 2 ms after each, so that every worker is asleep when the next
 * block is handed over (the .pftrace's passer feeds its gzip stream
 * slower than the workers deflate). */
static struct gather run_slowly(const unsigned char *in, size_t n, int t)
{
	struct gather g = {0};
	cm_pgz *z = cm_pgz_new(1, t, sink, &g);
	const struct timespec ms2 = {0, 2000000};
	size_t done = 0;
	ck_assert_ptr_nonnull(z);
	while (done < n) {
		size_t len = n - done < B ? n - done : B;
		ck_assert_int_eq(cm_pgz_write(z, in + done, len), CM_PGZ_OK);
		done += len;
		nanosleep(&ms2, NULL);
	}
	ck_assert_int_eq(cm_pgz_finish(z), CM_PGZ_OK);
	cm_pgz_free(z);
	return g;
}

/* The deflate workers woken only when the blocks queued outnumber those
 * awake (pgzip.c's "Waking"), and woken for every block
 * (CUPTIMERGE_GZIP_WAKE=all): every block is deflated either way, with
 * more workers than blocks in flight or fewer, written whole, a few bytes
 * a call, or a block at a time to workers asleep, and the stream is the
 * same bytes.  Loop index: threads x size x way of writing. */
START_TEST(wake_policies)
{
	static const int wt[] = {2, 8, 16};
	static const size_t wsz[] = {B + 1, 7 * B + 12345, 3000000};
	size_t n = wsz[(size_t)_i / 3 % 3];
	int t = wt[_i % 3], way = _i / 9;
	unsigned char *in = make_input(n);
	struct gather few, all;
	unsetenv("CUPTIMERGE_GZIP_WAKE");
	few = way < 2 ? run(in, n, 1, t, chunks[way]) : run_slowly(in, n, t);
	setenv("CUPTIMERGE_GZIP_WAKE", "all", 1);
	all = way < 2 ? run(in, n, 1, t, chunks[way]) : run_slowly(in, n, t);
	unsetenv("CUPTIMERGE_GZIP_WAKE");
	check_stream(&few, in, n, 1);
	ck_assert_uint_eq(few.len, all.len);
	ck_assert_msg(!memcmp(few.p, all.p, few.len), "the stream's bytes depend on how its workers are woken");
	free(few.p);
	free(all.p);
	free(in);
}
END_TEST

static Suite *pgzip_suite(void)
{
	Suite *s = suite_create("pgzip");
	TCase *tc = tcase_create("core");
	int nrt = (int)(sizeof sizes / sizeof *sizes * (sizeof chunks / sizeof *chunks) *
			(sizeof threads / sizeof *threads) * (sizeof rt_levels / sizeof *rt_levels));
	tcase_set_timeout(tc, 120); /* 500 streams; several seconds under ASan */
	tcase_add_loop_test(tc, round_trip, 0, nrt);
	tcase_add_loop_test(tc, levels, 0, (int)(sizeof all_levels / sizeof *all_levels));
	tcase_add_loop_test(tc, incompressible, 0, 3);
	tcase_add_test(tc, engine);
	tcase_add_loop_test(tc, dictionary_keeps_the_ratio, 0, 4);
	tcase_add_loop_test(tc, sink_failure, 0, 3);
	tcase_add_test(tc, free_mid_stream);
	tcase_add_loop_test(tc, crew_streams, 0, 4);
	tcase_add_test(tc, crew_free_mid_stream);
	tcase_add_loop_test(tc, crew_sink_failure, 0, 3);
	tcase_add_loop_test(tc, crew_left_stream_written, 0, 2);
	tcase_add_loop_test(tc, waits, 0, 2);
	tcase_add_loop_test(tc, wake_policies, 0, 9 * 3);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(pgzip_suite)
