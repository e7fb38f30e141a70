/* check_input.c - chunked reading (io/input.c): the chunks, offsets and
 * errors with read-ahead are those without, at every chunk size.
 *
 * Read-ahead hands chunks over from a thread of the input's own, in buffers
 * swapped into a ring; these tests read the same texts (plain, one gzip
 * member, two members) at chunk sizes from 1 byte up, with it and without,
 * and compare every chunk's length and offset and the text; a rewind in the
 * middle of a pass; a pipe, teed on its first pass and read ahead from its
 * copy on the second, and one rewound before its end (read no further
 * until a pass gets there); and a truncated gzip file, whose error must come after
 * every chunk before it, once, on the reading thread, and not at all when
 * the reader stops before it; a text that starts with a UTF-8 byte order
 * mark, handed out without it. */
#include "check_common.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "io/input.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <zlib.h>

/* A text of N bytes that no two offsets repeat for long, starting with '{'
 * as the input takes a text (inputdecode.c refuses any other first byte). */
static char *make_text(size_t n)
{
	char *t = malloc(n + 1);
	uint32_t x = 12345;
	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		t[i] = (char)(' ' + (x >> 16) % 90);
	}
	if (n)
		t[0] = '{';
	t[n] = 0;
	return t;
}

/* TEXT gzip-compressed into MEMBERS members (split at even lengths). */
static unsigned char *gzip_of(const char *text, size_t n, int members, size_t *zlen)
{
	size_t cap = n + 1024 * (size_t)members + 64, len = 0;
	unsigned char *out = malloc(cap);
	for (int m = 0; m < members; m++) {
		size_t a = n * (size_t)m / (size_t)members, b = n * (size_t)(m + 1) / (size_t)members;
		z_stream zs;
		memset(&zs, 0, sizeof zs);
		ck_assert_int_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
		zs.next_in = (unsigned char *)(uintptr_t)(text + a);
		zs.avail_in = (uInt)(b - a);
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
		len = cap - zs.avail_out;
		deflateEnd(&zs);
	}
	*zlen = len;
	return out;
}

/* One pass: every chunk's length and offset into LENS / OFFS (up to MAX),
 * the text into TEXT.  Returns the number of chunks; *RC the last result. */
static size_t read_pass(cm_input *in, char *text, size_t cap, size_t *lens, uint64_t *offs, size_t max, int *rc)
{
	const char *d;
	size_t n, k = 0, at = 0;
	/* the checks a chunk fail with ck_abort_msg: a passing ck_assert writes
	 * its place to libcheck's pipe, a million writes over the read sizes */
	while ((*rc = cm_input_next(in, &d, &n)) == 1) {
		if (at + n > cap)
			ck_abort_msg("chunk %zu: %zu bytes past the %zu of the text", k, at + n - cap, cap);
		memcpy(text + at, d, n);
		if (k < max) {
			lens[k] = n;
			offs[k] = cm_input_offset(in);
		}
		if (cm_input_offset(in) != at)
			ck_abort_msg("chunk %zu: offset %llu, wanted %zu", k, (unsigned long long)cm_input_offset(in), at);
		at += n;
		k++;
	}
	return k;
}

#define TEXT_BYTES 70001
#define MAXCHUNKS 80000
static const size_t sizes[] = {1, 2, 3, 5, 16, 31, 1000, 4096, 65536, 1 << 20};
enum { PLAIN, GZIP1, GZIP2, NKINDS };

/* The length of the text read at chunk size BS.  Below 16 bytes every
 * chunk is a handoff of the read-ahead thread for a byte or a few (and a
 * raw read of as many): 70,001 bytes there made 2.1 million handoffs, nearly
 * all of this test's time (two minutes on a loaded machine, once more under
 * ThreadSanitizer in CI).  The prime 8,191 still turns the two-slot ring
 * over thousands of times, ends the text mid-chunk at 2, 3 and 5 and puts
 * the second gzip member's magic across two raw reads at 1 byte; the sizes
 * from 16 up keep 70,001 bytes: more than two of inflate's 32 KiB windows,
 * and two chunks at 65,536. */
static size_t text_bytes(size_t bs) { return bs < 16 ? 8191 : TEXT_BYTES; }

/* Loop index I: a chunk size and a kind of text. */
START_TEST(same_chunks_with_readahead)
{
	size_t bs = sizes[_i / NKINDS], tn = text_bytes(bs), zlen = 0, n0, n1;
	int kind = _i % NKINDS, rc0, rc1;
	char *text = make_text(tn), *got0 = malloc(tn), *got1 = malloc(tn);
	unsigned char *z = kind == PLAIN ? NULL : gzip_of(text, tn, kind == GZIP1 ? 1 : 2, &zlen);
	const char *path = kind == PLAIN ? check_tmpfile_bytes(text, tn) : check_tmpfile_bytes(z, zlen);
	size_t *l0 = malloc(MAXCHUNKS * sizeof *l0), *l1 = malloc(MAXCHUNKS * sizeof *l1);
	uint64_t *o0 = malloc(MAXCHUNKS * sizeof *o0), *o1 = malloc(MAXCHUNKS * sizeof *o1);
	cm_input *a = cm_input_open_rewindable(path, bs), *b = cm_input_open_rewindable(path, bs);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	cm_input_readahead(b, 1);
	n0 = read_pass(a, got0, tn, l0, o0, MAXCHUNKS, &rc0);
	n1 = read_pass(b, got1, tn, l1, o1, MAXCHUNKS, &rc1);
	ck_assert_int_eq(rc0, 0);
	ck_assert_int_eq(rc1, 0);
	ck_assert_uint_eq(n0, n1);
	for (size_t k = 0; k < n0 && k < MAXCHUNKS; k++) {
		if (l0[k] != l1[k] || o0[k] != o1[k])
			ck_abort_msg("chunk %zu: %zu bytes at %llu, with read-ahead %zu at %llu", k, l0[k],
				     (unsigned long long)o0[k], l1[k], (unsigned long long)o1[k]);
	}
	ck_assert(!memcmp(got0, text, tn));
	ck_assert(!memcmp(got1, text, tn));
	ck_assert_int_eq(cm_input_is_gzip(b), kind != PLAIN);
	ck_assert_uint_eq(cm_input_raw_done(b), kind == PLAIN ? tn : zlen);
	/* asked again at the end: the end again */
	{
		const char *d;
		size_t n;
		ck_assert_int_eq(cm_input_next(b, &d, &n), 0);
	}
	/* a rewind in the middle of the next pass, then a whole pass */
	ck_assert_int_eq(cm_input_rewind(b), 0);
	for (size_t k = 0; k < 3 && k < n0; k++) {
		const char *d;
		size_t n;
		ck_assert_int_eq(cm_input_next(b, &d, &n), 1);
	}
	ck_assert_int_eq(cm_input_rewind(b), 0);
	memset(got1, 0, tn);
	ck_assert_uint_eq(read_pass(b, got1, tn, l1, o1, MAXCHUNKS, &rc1), n0);
	ck_assert_int_eq(rc1, 0);
	ck_assert(!memcmp(got1, text, tn));
	cm_input_close(a);
	cm_input_close(b);
	unlink(path);
	free(text), free(got0), free(got1), free(z), free(l0), free(l1), free(o0), free(o1);
}
END_TEST

/* Chunks held (cm_input_hold) keep their bytes while the input reads on,
 * with read-ahead and without, plain and gzip: each chunk is held for a
 * while (up to HOLD_MAX chunks later, some past the end of the pass), its
 * bytes compared with the text when it is let go, in an order other than
 * the one they were taken in. */
#define HOLD_MAX 40
START_TEST(held_chunks_keep_their_bytes)
{
	size_t bs = sizes[_i / (NKINDS * 2)], zlen = 0, k = 0, nheld = 0;
	int kind = _i / 2 % NKINDS, ra = _i % 2, rc;
	char *text = make_text(TEXT_BYTES);
	unsigned char *z = kind == PLAIN ? NULL : gzip_of(text, TEXT_BYTES, kind == GZIP1 ? 1 : 2, &zlen);
	const char *path = kind == PLAIN ? check_tmpfile_bytes(text, TEXT_BYTES) : check_tmpfile_bytes(z, zlen);
	struct {
		void *hold;
		const char *d;
		size_t n;
		uint64_t off, until;
	} held[HOLD_MAX + 1];
	cm_input *in = cm_input_open_rewindable(path, bs);
	const char *d;
	size_t n;
	uint32_t x = 777;
	ck_assert_ptr_nonnull(in);
	cm_input_readahead(in, ra);
	for (int pass = 0; pass < 2; pass++) {
		for (;;) {
			rc = cm_input_next(in, &d, &n);
			/* let go of those whose time came, the latest taken first */
			for (size_t h = nheld; h-- > 0;) {
				if (held[h].until > k && rc == 1)
					continue;
				if (memcmp(held[h].d, text + held[h].off, held[h].n))
					ck_abort_msg("chunk at %llu (%zu bytes): changed while held",
						     (unsigned long long)held[h].off, held[h].n);
				cm_input_release(held[h].hold);
				held[h] = held[--nheld];
			}
			if (rc != 1)
				break;
			x = x * 1103515245u + 12345u;
			if ((x >> 16) % 3 && nheld < HOLD_MAX) {
				held[nheld].hold = cm_input_hold(in);
				held[nheld].d = d;
				held[nheld].n = n;
				held[nheld].off = cm_input_offset(in);
				held[nheld].until = k + (x >> 8) % HOLD_MAX;
				nheld++;
			}
			k++;
		}
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(nheld, 0);
		ck_assert_int_eq(cm_input_rewind(in), 0);
	}
	cm_input_close(in);
	unlink(path);
	free(text), free(z);
}
END_TEST

/* A pipe: the first pass is teed (no read-ahead on a pipe), the second
 * reads the copy ahead. */
START_TEST(pipe_then_its_copy)
{
	char *text = make_text(TEXT_BYTES), *got = malloc(TEXT_BYTES);
	size_t *l = malloc(MAXCHUNKS * sizeof *l);
	uint64_t *o = malloc(MAXCHUNKS * sizeof *o);
	int fds[2], rc, saved = dup(0);
	pid_t pid;
	cm_input *in;
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		ck_assert_int_eq(write(fds[1], text, TEXT_BYTES), TEXT_BYTES);
		_exit(0);
	}
	close(fds[1]);
	dup2(fds[0], 0);
	close(fds[0]);
	in = cm_input_open_rewindable("-", 4096);
	cm_input_readahead(in, 1);
	ck_assert_uint_eq(read_pass(in, got, TEXT_BYTES, l, o, MAXCHUNKS, &rc), (TEXT_BYTES + 4095) / 4096);
	ck_assert_int_eq(rc, 0);
	ck_assert(!memcmp(got, text, TEXT_BYTES));
	ck_assert_int_eq(cm_input_rewind(in), 0);
	memset(got, 0, TEXT_BYTES);
	read_pass(in, got, TEXT_BYTES, l, o, MAXCHUNKS, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert(!memcmp(got, text, TEXT_BYTES));
	cm_input_close(in);
	waitpid(pid, NULL, 0);
	dup2(saved, 0);
	free(text), free(got), free(l), free(o);
}
END_TEST

/* A pipe rewound before its end (a pass that met bad JSON, before the
 * careful reader's): nothing more is read then, the next pass reads the
 * copy and goes on in the pipe, and a pass after that reads the whole
 * copy, at offsets too.  The writer sends the text's first half, then
 * waits for a byte on a second pipe before it sends the rest: a rewind
 * that drained the pipe would wait for ever (the alarm ends the test;
 * the drain was a pipe of /dev/zero spooled for ever).  Loop index: plain,
 * gzip. */
START_TEST(pipe_rewound_before_its_end)
{
	char *text = make_text(TEXT_BYTES), *got = malloc(TEXT_BYTES);
	size_t *l = malloc(MAXCHUNKS * sizeof *l), zlen = TEXT_BYTES, n;
	uint64_t *o = malloc(MAXCHUNKS * sizeof *o);
	unsigned char *z = _i ? gzip_of(text, TEXT_BYTES, 1, &zlen) : (unsigned char *)text;
	int fds[2], go[2], rc, saved = dup(0);
	const char *d;
	pid_t pid;
	cm_input *in;
	ck_assert_int_eq(pipe(fds), 0);
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	if (pid == 0) {
		char c;
		close(fds[0]);
		close(go[1]);
		if (write(fds[1], z, zlen / 2) != (ssize_t)(zlen / 2) || read(go[0], &c, 1) != 1 ||
		    write(fds[1], z + zlen / 2, zlen - zlen / 2) != (ssize_t)(zlen - zlen / 2))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	close(go[0]);
	dup2(fds[0], 0);
	close(fds[0]);
	alarm(10);
	in = cm_input_open_rewindable("-", 1000);
	cm_input_readahead(in, 1);
	for (int k = 0; k < 3; k++) /* three chunks of the first half */
		ck_assert_int_eq(cm_input_next(in, &d, &n), 1);
	ck_assert_int_eq(cm_input_rewind(in), 0);
	ck_assert_int_eq(cm_input_next(in, &d, &n), 1); /* again, from the copy */
	ck_assert(!memcmp(d, text, n));
	ck_assert(!cm_input_can_pread(in)); /* the copy is not whole */
	ck_assert_int_eq(cm_input_rewind(in), 0);
	ck_assert_int_eq(write(go[1], "", 1), 1);
	close(go[1]);
	memset(got, 0, TEXT_BYTES);
	read_pass(in, got, TEXT_BYTES, l, o, MAXCHUNKS, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert(!memcmp(got, text, TEXT_BYTES));
	ck_assert_int_eq(cm_input_rewind(in), 0);
	ck_assert_int_eq(cm_input_next(in, &d, &n), 1);
	ck_assert_int_eq(cm_input_can_pread(in), !_i); /* the whole copy, plain */
	ck_assert_int_eq(cm_input_rewind(in), 0);
	memset(got, 0, TEXT_BYTES);
	read_pass(in, got, TEXT_BYTES, l, o, MAXCHUNKS, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert(!memcmp(got, text, TEXT_BYTES));
	alarm(0);
	cm_input_close(in);
	ck_assert_int_eq(waitpid(pid, &rc, 0), pid);
	ck_assert(WIFEXITED(rc) && WEXITSTATUS(rc) == 0);
	dup2(saved, 0);
	if (_i)
		free(z);
	free(text), free(got), free(l), free(o);
}
END_TEST

/* A gzip file cut short: the chunks before the cut, then the error, on this
 * thread (deferred here into a slot, so that the test can read it), once;
 * and no error at all for a reader that closes the input before the cut.
 * Loop index: the chunk size. */
START_TEST(truncated_gzip)
{
	size_t bs = sizes[_i], tn = text_bytes(bs), zlen, n, at = 0;
	char *text = make_text(tn), *got = calloc(1, tn);
	unsigned char *z = gzip_of(text, tn, 1, &zlen);
	const char *path = check_tmpfile_bytes(z, zlen - 20), *d;
	cm_diag_slot slot = {0, NULL};
	cm_input *in;
	int rc;
	cm_diag_defer(&slot);
	for (int ra = 0; ra < 2; ra++) {
		in = cm_input_open_rewindable(path, bs);
		cm_input_readahead(in, ra);
		at = 0;
		while ((rc = cm_input_next(in, &d, &n)) == 1) {
			memcpy(got + at, d, n);
			at += n;
		}
		ck_assert_int_eq(rc, -1);
		ck_assert_int_eq(slot.status, CM_EXIT_DATA);
		ck_assert_ptr_nonnull(strstr(slot.line, "truncated gzip data"));
		ck_assert(at > 0 && at < tn);
		ck_assert(!memcmp(got, text, at));
		cm_diag_drop(&slot);
		cm_input_close(in);
		ck_assert_int_eq(slot.status, 0); /* nothing more on close */
		/* a reader that stops after one chunk hears nothing */
		in = cm_input_open_rewindable(path, bs);
		cm_input_readahead(in, ra);
		ck_assert_int_eq(cm_input_next(in, &d, &n), 1);
		usleep(20000); /* the read-ahead thread meets the cut meanwhile */
		cm_input_close(in);
		ck_assert_int_eq(slot.status, 0);
	}
	cm_diag_defer(NULL);
	unlink(path);
	free(text), free(got), free(z);
}
END_TEST

/* A text that starts with a UTF-8 byte order mark (issue 27 F27): handed
 * out without it, at every chunk size, plain and gzip, with read-ahead and
 * without, its offsets counting its three bytes; again after a rewind.
 * Loop index I: a chunk size and a kind of text. */
START_TEST(byte_order_mark_skipped)
{
	size_t bs = sizes[_i / 2], tn = text_bytes(bs), zlen = 0, n, at;
	int gz = _i % 2;
	char *text = make_text(tn), *got = malloc(tn);
	char *withbom = malloc(tn + 3);
	unsigned char *z;
	const char *path, *d;
	memcpy(withbom, "\xef\xbb\xbf", 3);
	memcpy(withbom + 3, text, tn);
	z = gz ? gzip_of(withbom, tn + 3, 1, &zlen) : NULL;
	path = gz ? check_tmpfile_bytes(z, zlen) : check_tmpfile_bytes(withbom, tn + 3);
	for (int ra = 0; ra < 2; ra++) {
		cm_input *in = cm_input_open_rewindable(path, bs);
		cm_input_readahead(in, ra);
		for (int pass = 0; pass < 2; pass++) {
			int rc;
			at = 0;
			while ((rc = cm_input_next(in, &d, &n)) == 1) {
				if (cm_input_offset(in) != at + 3 || at + n > tn)
					ck_abort_msg("a chunk of %zu at offset %llu, after %zu bytes of text", n,
						     (unsigned long long)cm_input_offset(in), at);
				memcpy(got + at, d, n);
				at += n;
			}
			ck_assert_int_eq(rc, 0);
			ck_assert_uint_eq(at, tn);
			ck_assert(!memcmp(got, text, tn));
			ck_assert_int_eq(cm_input_rewind(in), 0);
		}
		cm_input_close(in);
	}
	unlink(path);
	free(text), free(got), free(withbom), free(z);
}
END_TEST

/* A text whose first byte past white space and a byte order mark is not
 * '{' or '[' is refused at that byte, at its offset, before a chunk that
 * holds it is handed out (chunks of white space go first at small chunk
 * sizes), with read-ahead or without, plain or gzip (a pipe of zeros
 * was read whole first).  Loop index: the chunk size, then plain/gzip. */
START_TEST(refused_at_first_byte)
{
	static const char text[] = "\xef\xbb\xbf \r\n\t\x01{}";
	size_t bs = sizes[_i / 2], zlen, n;
	unsigned char *z = gzip_of(text, sizeof text - 1, 1, &zlen);
	const char *path = _i % 2 ? check_tmpfile_bytes(z, zlen) : check_tmpfile_bytes(text, sizeof text - 1), *d;
	cm_diag_slot slot = {0, NULL};
	cm_input *in;
	cm_diag_defer(&slot);
	for (int ra = 0; ra < 2; ra++) {
		in = cm_input_open_rewindable(path, bs);
		cm_input_readahead(in, ra);
		size_t before = 0;
		int rc;
		while ((rc = cm_input_next(in, &d, &n)) == 1) /* white space only */
			for (size_t k = 0; k < n; k++, before++)
				ck_assert(strchr(" \r\n\t", d[k]) && d[k]);
		ck_assert_int_eq(rc, -1);
		ck_assert_uint_le(before, 4);
		ck_assert_int_eq(slot.status, CM_EXIT_DATA);
		ck_assert_ptr_nonnull(strstr(slot.line, ":7: invalid JSON: the text starts with byte 0x01, where '{' must be"));
		cm_diag_drop(&slot);
		cm_input_close(in);
	}
	unlink(path);
	free(z);
}
END_TEST

static Suite *input_suite(void)
{
	Suite *s = suite_create("input");
	TCase *tc = tcase_create("readahead");
	int nsizes = (int)(sizeof sizes / sizeof *sizes);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, same_chunks_with_readahead, 0, nsizes * NKINDS);
	tcase_add_test(tc, pipe_then_its_copy);
	tcase_add_loop_test(tc, pipe_rewound_before_its_end, 0, 2);
	tcase_add_loop_test(tc, held_chunks_keep_their_bytes, 0, nsizes * NKINDS * 2);
	tcase_add_loop_test(tc, byte_order_mark_skipped, 0, nsizes * 2);
	/* the last size holds the whole file in one chunk: the cut is met
	 * before anything is handed out */
	tcase_add_loop_test(tc, truncated_gzip, 0, nsizes - 2);
	tcase_add_loop_test(tc, refused_at_first_byte, 0, nsizes * 2);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(input_suite)
