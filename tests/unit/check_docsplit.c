/* check_docsplit.c - the splitter's bounds (json/docsplit.h): an element
 * of the array (or a key) longer than CUPTIMERGE_ELEM_MAX, or a member's
 * value longer than CUPTIMERGE_MEMBER_MAX, is refused, and one of exactly
 * the bound is taken, whatever the read size; the careful reader's watcher
 * refuses the same value at its first byte, with the message every reader
 * gives, and stops an endless one once it passes the bound. */
#include "config.h"
#include "check_common.h"
#include "io/input.h"
#include "json/docsplit.h"

/* The batch callback: count the elements (the buffer stays the
 * splitter's, which lets it go). */
static int count_batch(void *ctx, cm_buf *b)
{
	cm_docsplit_elem e;
	for (size_t at = 0; cm_docsplit_next(b, &at, &e);)
		(*(size_t *)ctx)++;
	return 0;
}

static int any_member(void *ctx, const char *key, size_t klen, const char *val, size_t vlen, int64_t end)
{
	(void)ctx, (void)key, (void)klen, (void)val, (void)vlen, (void)end;
	return 0;
}

/* Split TEXT, read in chunks of CHUNK bytes: the run's result; the
 * elements handed on in *N. */
static int split(const char *text, size_t chunk, size_t *n)
{
	cm_docsplit_sink sink = {any_member, count_batch, n, NULL, NULL, NULL, NULL, NULL, NULL};
	cm_input *in = cm_input_open(check_tmpfile(text), chunk);
	int rc;
	ck_assert_ptr_nonnull(in);
	*n = 0;
	rc = cm_docsplit_run(in, "traceEvents", 64, &sink, "test", NULL);
	cm_input_close(in);
	return rc;
}

/* "aaa..." of N bytes, quotes included (N >= 2), in a static buffer. */
static const char *str_of(size_t n)
{
	static char s[4096];
	ck_assert_uint_lt(n, sizeof s);
	memset(s, 'a', n);
	s[0] = s[n - 1] = '"';
	s[n] = 0;
	return s;
}

static const size_t chunks[] = {1, 2, 3, 7, 31, 64, 65, 1000, 65536};
#define NCHUNKS (sizeof chunks / sizeof *chunks)

/* The middle element, an object or a string, of exactly the bound is taken,
 * one byte more is refused: at every read size, so at a chunk's end, where
 * it is carried, and within one chunk longer than the bound. */
START_TEST(test_element_bound)
{
	char doc[8192];
	size_t n;
	setenv("CUPTIMERGE_ELEM_MAX", "100", 1);
	for (size_t c = 0; c < NCHUNKS; c++)
		for (int obj = 0; obj < 2; obj++)
			for (size_t len = 99; len <= 101; len++) {
				/* {"n":"aaa"} is 6 bytes around its string */
				if (obj)
					snprintf(doc, sizeof doc, "{\"traceEvents\": [{\"n\":1}, {\"n\":%s}, 7]}",
						 str_of(len - 6));
				else
					snprintf(doc, sizeof doc, "{\"traceEvents\": [{\"n\":1}, %s, 7]}", str_of(len));
				if (len <= 100) {
					ck_assert_msg(split(doc, chunks[c], &n) == CM_DOCSPLIT_OK,
						      "chunk %zu: %s element of %zu refused", chunks[c], obj ? "an object" : "a string", len);
					ck_assert_uint_eq(n, 3);
				} else {
					ck_assert_msg(split(doc, chunks[c], &n) == CM_DOCSPLIT_INVALID,
						      "chunk %zu: %s element of %zu taken", chunks[c], obj ? "an object" : "a string", len);
				}
			}
	unsetenv("CUPTIMERGE_ELEM_MAX");
}
END_TEST

/* A member's value and a key, likewise. */
START_TEST(test_member_and_key_bound)
{
	char doc[8192];
	size_t n;
	setenv("CUPTIMERGE_MEMBER_MAX", "200", 1);
	setenv("CUPTIMERGE_ELEM_MAX", "100", 1);
	for (size_t c = 0; c < NCHUNKS; c++)
		for (size_t len = 199; len <= 201; len++) {
			snprintf(doc, sizeof doc, "{\"x\": %s, \"traceEvents\": [1]}", str_of(len));
			ck_assert_int_eq(split(doc, chunks[c], &n), len <= 200 ? CM_DOCSPLIT_OK : CM_DOCSPLIT_INVALID);
			snprintf(doc, sizeof doc, "{\"traceEvents\": [1], %s: 1}", str_of(len - 100));
			ck_assert_int_eq(split(doc, chunks[c], &n), len <= 200 ? CM_DOCSPLIT_OK : CM_DOCSPLIT_INVALID);
		}
	unsetenv("CUPTIMERGE_MEMBER_MAX");
	unsetenv("CUPTIMERGE_ELEM_MAX");
}
END_TEST

/* The watcher, fed the text in pieces: 0 while every value is within its
 * bound; 1 for the one that is not, its first byte and the message. */
START_TEST(test_watch_names_it)
{
	static const struct {
		const char *doc;
		int64_t at;
		const char *msg;
	} cases[] = {
		{"{\"traceEvents\": [{\"n\":1}, {\"n\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}]}", 26,
		 "traceEvents[1] is longer than 50 bytes, the most an element may be (an event that never ends?)"},
		{"{\"x\": 1, \"user_annotations\": [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21]}", 29,
		 "member \"user_annotations\": its value is longer than 60 bytes, the most a member's value may be"},
		{"{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": 1}", 1,
		 "a key longer than 50 bytes, the most a key may be"},
		{"{\"traceEvents\": [{\"n\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}], \"x\": 1}", -1, NULL},
	};
	setenv("CUPTIMERGE_ELEM_MAX", "50", 1);
	setenv("CUPTIMERGE_MEMBER_MAX", "60", 1);
	for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
		for (size_t c = 0; c < NCHUNKS; c++) {
			cm_docsplit_rec *w = cm_docsplit_watch_new("traceEvents");
			const char *s = cases[k].doc;
			size_t len = strlen(s);
			char msg[200] = "";
			int64_t at = -1;
			int got = 0;
			for (size_t i = 0; i < len && !got; i += chunks[c])
				got = cm_docsplit_watch_feed(w, s + i, len - i < chunks[c] ? len - i : chunks[c], i, msg,
							     sizeof msg, &at);
			cm_docsplit_watch_free(w);
			ck_assert_msg(got == (cases[k].msg != NULL), "case %zu, chunk %zu: %d", k, chunks[c], got);
			if (got) {
				ck_assert_int_eq(at, cases[k].at);
				ck_assert_str_eq(msg, cases[k].msg);
			}
		}
	unsetenv("CUPTIMERGE_ELEM_MAX");
	unsetenv("CUPTIMERGE_MEMBER_MAX");
}
END_TEST

/* At the real bound, a string that never ends is refused in the chunk that
 * takes it past 16 MiB: the watcher keeps none of its bytes, so it is fed
 * the same 1 MiB chunk again and again. */
START_TEST(test_watch_endless)
{
	static const char head[] = "{\"traceEvents\": [{\"name\":\"";
	enum { MB = 1 << 20 };
	char *a = malloc(MB), msg[200];
	cm_docsplit_rec *w = cm_docsplit_watch_new("traceEvents");
	uint64_t at = sizeof head - 1;
	int64_t where = -1;
	int got = 0;
	size_t chunks_fed = 0;
	ck_assert_ptr_nonnull(a);
	memset(a, 'a', MB);
	ck_assert_int_eq(cm_docsplit_watch_feed(w, head, sizeof head - 1, 0, msg, sizeof msg, &where), 0);
	while (!got && chunks_fed < 1000) {
		got = cm_docsplit_watch_feed(w, a, MB, at, msg, sizeof msg, &where);
		at += MB;
		chunks_fed++;
	}
	cm_docsplit_watch_free(w);
	free(a);
	ck_assert_int_eq(got, 1);
	/* the element began at '{' (byte 17): with its 9 bytes before the
	 * 'a's, 16 chunks make it 16 MiB + 9, refused in the 16th */
	ck_assert_uint_eq(chunks_fed, 16);
	ck_assert_int_eq(where, 17);
	ck_assert_str_eq(msg, "traceEvents[0] is longer than 16 MiB, the most an element may be (an event that never ends?)");
}
END_TEST

/* Where the text fed to a watcher ends, inside a string or not, after a
 * backslash in one or not (the plan's cuts, batch/batchtok.h), at every
 * piece's end: as a byte-by-byte walk of the text says.  Strings in keys,
 * in member values and in elements, objects (the elements' blocks of 64
 * bytes) and a string as an element; then -1 once the top level's grammar
 * fails. */
START_TEST(test_watch_in_string)
{
	static const char *const docs[] = {
		"{\"k\\\"ey\\\\\": \"v\\\\\\\"a\\u00e9l\", \"traceEvents\": [{\"name\": \"a\\\\\\\\\\\"b,:{}[]\", \"args\": "
		"{\"x\\\\\": [\"\\\"\", 1, true]}}, \"elem \\\"string\\\\\", {\"n\": \"cccccccccccccccccccccccccccccccccccccc"
		"cccccccccccccccccccccccccccccccc\\\\\\\\\", \"m\": \"\\\"\\\"\\\"\"}], \"z\": {\"q\": \"\\\\\"}}",
		"{\"a\": 1, \"b\": [\"\\\\\", \"x\"], \"traceEvents\": []}",
	};
	for (size_t d = 0; d < sizeof docs / sizeof *docs; d++)
		for (size_t c = 0; c < NCHUNKS; c++) {
			cm_docsplit_rec *w = cm_docsplit_watch_new("traceEvents");
			const char *s = docs[d];
			size_t len = strlen(s), i, k;
			int in_str = 0, esc = 0;
			char msg[200];
			int64_t at;
			for (i = 0; i < len; i += chunks[c]) {
				size_t n = len - i < chunks[c] ? len - i : chunks[c];
				ck_assert_int_eq(cm_docsplit_watch_feed(w, s + i, n, i, msg, sizeof msg, &at), 0);
				for (k = i; k < i + n; k++) {
					if (esc)
						esc = 0;
					else if (in_str && s[k] == '\\')
						esc = 1;
					else if (s[k] == '"')
						in_str = !in_str;
				}
				ck_assert_msg(cm_docsplit_watch_in_string(w) == (in_str ? 1 | (esc ? 2 : 0) : 0),
					      "doc %zu, chunk %zu, at %zu: %d, wanted %d %d", d, chunks[c], i + n,
					      cm_docsplit_watch_in_string(w), in_str, esc);
			}
			ck_assert_int_eq(cm_docsplit_watch_feed(w, "x", 1, len, msg, sizeof msg, &at), 0);
			ck_assert_int_eq(cm_docsplit_watch_in_string(w), -1);
			cm_docsplit_watch_free(w);
		}
}
END_TEST

static Suite *docsplit_suite(void)
{
	Suite *s = suite_create("docsplit");
	TCase *tc = tcase_create("bounds");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_element_bound);
	tcase_add_test(tc, test_member_and_key_bound);
	tcase_add_test(tc, test_watch_names_it);
	tcase_add_test(tc, test_watch_endless);
	tcase_add_test(tc, test_watch_in_string);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(docsplit_suite)
