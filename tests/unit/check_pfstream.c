/* check_pfstream.c - the transcoder whole (pftrace/pftrace.h's cm_pft),
 * JSON text in, .pftrace bytes out: the same bytes however the document
 * is cut and on one thread or several (the passer's share), the errors of
 * a document it cannot write, and Python's NaN and Infinity.  The one
 * program that runs the transcoder whole, with its threads and its
 * testing switches (CUPTIMERGE_PFT_*), so that the pieces' programs stay
 * about one piece each. */
#include "config.h"
#include "check_common.h"
#include "pftrace/pftrace.h"
#include "base/diag.h"

/* The transcoder's sink: collect the bytes. */
static int collect(void *ctx, const void *p, size_t n)
{
	cm_buf_put(ctx, p, n);
	return 0;
}

/* Transcode DOC, fed in pieces of STEP bytes, into OUT on THREADS threads
 * (the workers, and from 2 the passer); the finish's rc. */
static int transcode_threads(const char *doc, size_t step, int threads, cm_buf *out)
{
	cm_pft *t = cm_pft_new(collect, out, "<test>");
	size_t n = strlen(doc), i;
	int rc = 0;
	cm_pft_threads(t, threads);
	for (i = 0; i < n && !rc; i += step)
		rc = cm_pft_write(t, doc + i, n - i < step ? n - i : step);
	if (!rc)
		rc = cm_pft_finish(t);
	cm_pft_free(t);
	return rc;
}

/* transcode_threads' on one thread, the transcoder's default. */
static int transcode(const char *doc, size_t step, cm_buf *out)
{
	return transcode_threads(doc, step, 1, out);
}

/* The passer's share (pfseg.c): a batch's packets written by the
 * sequential part (when the passer's queue is full; here every other
 * batch, CUPTIMERGE_PFT_SHARE_ALTERNATE) come out where the passer would
 * have put them: the bytes of one thread, with batches of 300 bytes of
 * text (some 500 of them), slices with args, ties, zero durations, flows
 * and held-back ends across the batches' edges; and with the passer alone
 * (CUPTIMERGE_PFT_PASSER_ONLY). */
START_TEST(passer_share)
{
	cm_buf doc = {0}, one = {0}, shared = {0}, passer = {0};
	uint64_t r = 0x5EED;
	cm_buf_lit(&doc, "{\"traceEvents\":[");
	for (int i = 0; i < 1500; i++) {
		char ev[256];
		int n;
		r = r * 6364136223846793005u + 1442695040888963407u;
		n = snprintf(ev, sizeof ev,
			     "%s{\"ph\":\"X\",\"name\":\"k%d\",\"cat\":\"c\",\"pid\":1,\"tid\":%d,\"ts\":%d.%03d,"
			     "\"dur\":%d,\"args\":{\"i\":%d}}",
			     i ? "," : "", (int)(r >> 60), (int)((r >> 58) % 3) + 1, 1000 + i / 2, (int)((r >> 20) % 1000),
			     (int)((r >> 40) % 4), i);
		cm_buf_put(&doc, ev, (size_t)n);
		if (i % 5 == 0) {
			n = snprintf(ev, sizeof ev,
				     ",{\"ph\":\"s\",\"id\":%d,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"pid\":1,\"tid\":%d,"
				     "\"ts\":%d.%03d}",
				     i, (int)((r >> 58) % 3) + 1, 1000 + i / 2, (int)((r >> 20) % 1000));
			cm_buf_put(&doc, ev, (size_t)n);
		}
	}
	cm_buf_lit(&doc, "]}");
	cm_buf_putc(&doc, 0);
	setenv("CUPTIMERGE_PFT_BATCH", "300", 1);
	ck_assert_int_eq(transcode_threads(doc.p, 4096, 1, &one), 0);
	setenv("CUPTIMERGE_PFT_SHARE_ALTERNATE", "1", 1);
	ck_assert_int_eq(transcode_threads(doc.p, 4096, 3, &shared), 0);
	unsetenv("CUPTIMERGE_PFT_SHARE_ALTERNATE");
	setenv("CUPTIMERGE_PFT_PASSER_ONLY", "1", 1);
	ck_assert_int_eq(transcode_threads(doc.p, 4096, 3, &passer), 0);
	unsetenv("CUPTIMERGE_PFT_PASSER_ONLY");
	unsetenv("CUPTIMERGE_PFT_BATCH");
	ck_assert_uint_gt(one.len, 30000);
	ck_bytes(&shared, one.p, one.len);
	ck_bytes(&passer, one.p, one.len);
	cm_buf_free(&doc);
	cm_buf_free(&one);
	cm_buf_free(&shared);
	cm_buf_free(&passer);
}
END_TEST

/* The document cut anywhere gives the same bytes; other members are
 * skipped, whatever their values; a key with escapes is still found. */
START_TEST(stream)
{
	static const char doc[] = " {\"a\":[1,{\"traceEvents\":2}],\"n\":-1.5e3,\"s\":\"x]}\\\"\",\"traceEvents\":["
				  "{\"ph\":\"X\",\"name\":\"k\",\"pid\":1,\"tid\":2,\"ts\":1.5,\"dur\":2,"
				  "\"args\":{\"a.b\":[1,\"t\"],\"c\":null}},"
				  "{\"ph\":\"s\",\"id\":7,\"cat\":\"ac2g\",\"name\":\"ac2g\",\"pid\":1,\"tid\":2,\"ts\":1.5}"
				  " ] , \"z\":true}\n";
	cm_buf whole = {0}, esc = {0};
	size_t step;
	ck_assert_int_eq(transcode(doc, sizeof doc, &whole), 0);
	ck_assert_uint_gt(whole.len, 40);
	for (step = 1; step <= 31; step++) {
		cm_buf b = {0};
		ck_assert_int_eq(transcode(doc, step, &b), 0);
		ck_bytes(&b, whole.p, whole.len);
		cm_buf_free(&b);
	}
	{
		/* the same with the key written \u0074raceEvents */
		/* room for the 5 more bytes of the escape */
		char *d = memcpy(malloc(sizeof doc + 5), doc, sizeof doc), *k = strstr(d, "\"traceEvents\":[");
		cm_buf want = {0};
		memmove(k + 6, k + 1, strlen(k + 1) + 1);
		memcpy(k + 1, "\\u0074", 6);
		ck_assert_int_eq(transcode(d, 3, &esc), 0);
		ck_bytes(&esc, whole.p, whole.len);
		cm_buf_free(&want);
		free(d);
	}
	cm_buf_free(&whole);
	cm_buf_free(&esc);
}
END_TEST

/* A document that stops short, or an event the format cannot hold, is
 * an error (reported). */
START_TEST(stream_errors)
{
	cm_buf b = {0};
	cm_diag_set_quiet(1);
	ck_assert_int_eq(transcode("{\"traceEvents\":[{\"ph\":\"i\",\"pid\":1,\"tid\":1,\"ts\":1}", 4, &b), -1);
	ck_assert_int_eq(transcode("{\"traceEvents\":[{\"ph\":\"P\",\"pid\":1,\"tid\":1,\"ts\":1}]}", 4, &b), -1);
	ck_assert_int_eq(transcode("[]", 1, &b), -1);
	ck_assert_int_eq(transcode("{\"traceEvents\":{}}", 1, &b), -1);
	ck_assert_int_eq(transcode("{} x", 1, &b), -1);
	ck_assert_int_eq(transcode("{}", 1, &b), 0);
	cm_buf_free(&b);
}
END_TEST

/* DOC with every "@" replaced by LIT, in B (a string). */
static void with_literal(cm_buf *b, const char *doc, const char *lit)
{
	b->len = 0;
	for (; *doc; doc++)
		if (*doc == '@')
			cm_buf_puts(b, lit);
		else
			cm_buf_putc(b, *doc);
	cm_buf_putc(b, 0);
}

/* Python's literals NaN, Infinity and -Infinity, which Perfetto's JSON
 * import (v55.3) cannot read, as it cannot read 1e400: an arg or a "C"
 * event's value ends the event's args (values) there, in an object and
 * an array too, the same bytes as 1e400 there (tests/e2e/pffuzz.sh checks
 * those against the JSON import); a ts, a dur or another member of the
 * event is refused in one line that names it (the import refuses the
 * whole trace). */
START_TEST(python_literals)
{
	static const char doc[] =
		"{\"traceEvents\":["
		"{\"ph\":\"X\",\"name\":\"a\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":5,\"args\":{\"k\":1,\"n\":@,\"z\":2}},"
		"{\"ph\":\"X\",\"name\":\"b\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,"
		"\"args\":{\"o\":{\"x\":2.5,\"y\":@,\"w\":3},\"z\":2}},"
		"{\"ph\":\"X\",\"name\":\"b\",\"cat\":\"c\",\"pid\":1,\"tid\":1,\"ts\":2,\"dur\":1,"
		"\"args\":{\"a\":[1,@,2],\"z\":2}},"
		"{\"ph\":\"i\",\"s\":\"t\",\"name\":\"c\",\"pid\":1,\"tid\":1,\"ts\":3,\"args\":{\"k\":4,\"u\":1.5,\"t\":@}},"
		"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":4,\"args\":{\"a\":1,\"b\":@,\"c\":3}},"
		"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":5,\"args\":{\"a\":@,\"b\":2}},"
		"{\"ph\":\"C\",\"name\":\"ctr\",\"pid\":1,\"ts\":6,\"args\":{\"a\":7,\"b\":8}}"
		"]}";
	static const char *const lits[] = {"NaN", "Infinity", "-Infinity"};
	static const char *const times[] = {
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":@,\"dur\":5}]}",
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":@}]}",
		"{\"traceEvents\":[{\"ph\":\"i\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":@}]}",
		"{\"traceEvents\":[{\"ph\":\"C\",\"name\":\"a\",\"pid\":1,\"ts\":@,\"args\":{\"v\":1}}]}",
		"{\"traceEvents\":[{\"ph\":\"X\",\"name\":\"a\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"id\":@}]}",
	};
	static const char *const what[] = {"\"X\" event whose ts", "\"X\" event whose dur", "\"i\" event whose ts",
					   "\"C\" event whose ts", "\"X\" event whose id"};
	cm_buf text = {0}, want = {0}, got = {0};
	char err[512], line[256];
	size_t i, j;
	with_literal(&text, doc, "1e400");
	ck_assert_int_eq(transcode(text.p, 4096, &want), 0);
	for (i = 0; i < 3; i++) {
		with_literal(&text, doc, lits[i]);
		for (j = 1; j <= 3; j += 2) { /* (one thread and three) */
			got.len = 0;
			ck_assert_int_eq(transcode_threads(text.p, 7, (int)j, &got), 0);
			ck_bytes(&got, want.p, want.len);
		}
	}
	for (i = 0; i < 3; i++)
		for (j = 0; j < sizeof times / sizeof *times; j++) {
			FILE *f = tmpfile();
			int saved = dup(2);
			size_t n;
			ck_assert_ptr_nonnull(f);
			fflush(stderr);
			dup2(fileno(f), 2);
			with_literal(&text, times[j], lits[i]);
			got.len = 0;
			ck_assert_int_eq(transcode(text.p, 4096, &got), -1);
			fflush(stderr);
			dup2(saved, 2);
			close(saved);
			rewind(f);
			n = fread(err, 1, sizeof err - 1, f);
			fclose(f);
			err[n] = 0;
			snprintf(line, sizeof line,
				 "cuptimerge: <test>:16: a %s is %s cannot be written as Perfetto protobuf (Perfetto refuses the trace)\n",
				 what[j], lits[i]);
			ck_assert_str_eq(err, line);
		}
	cm_buf_free(&text);
	cm_buf_free(&want);
	cm_buf_free(&got);
}
END_TEST

static Suite *make_suite(void)
{
	Suite *s = suite_create("pfstream");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, stream);
	tcase_add_test(tc, passer_share);
	tcase_add_test(tc, stream_errors);
	tcase_add_test(tc, python_literals);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(make_suite)
