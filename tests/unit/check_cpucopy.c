/* check_cpucopy.c - the copy of a CPU trace by its layout (cpu/cpucopy.c,
 * cpu/cpuwalk.c): the plan of the output's top level from the layout's tags
 * alone, the layout the careful scan notes against the parallel scan's, the
 * copy's bytes, and a doctored layout (cut short, records swapped), which
 * must fail the copy with status 3 after nothing but a prefix of the right
 * output. */
#include "config.h"
#include "check_common.h"
#include "cpu/cpucopy.h"
#include "cpu/cpucopy_int.h"
#include "cpu/cpuscan.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/doclayout.h"
#include "io/output.h"

#include <string.h>

static int no_hook(void *ctx, cm_evout *eo)
{
	(void)ctx;
	(void)eo;
	return 0;
}

static const char devices[] = "[{\"id\":0}]";

static cm_cpucopy_hooks hooks_with(const char *name, const char *dev)
{
	cm_cpucopy_hooks h = {.insert = no_hook, .append = no_hook, .trace_name = name, .devices = dev,
			      .devices_len = dev ? strlen(dev) : 0};
	return h;
}

/* The plan of the top level: what becomes of each member by its tag, with
 * no text at all. */
START_TEST(top_plan)
{
	cm_cpucopy_hooks h = hooks_with("t", devices), bare = hooks_with(NULL, NULL);
	struct cpucopy_top t = {.devices_due = 1};
	const int schema = CM_DOCLAYOUT_NAME + CM_CPUKEY_SCHEMA, name = CM_DOCLAYOUT_NAME + CM_CPUKEY_NAME,
		  devs = CM_DOCLAYOUT_NAME + CM_CPUKEY_DEVICES;
	/* the devices before the first member other than schemaVersion */
	ck_assert_int_eq(cpucopy_top_member(&t, schema, &h, CM_DEVPROPS_ABSENT), CP_COPY);
	ck_assert_int_eq(cpucopy_top_member(&t, schema, &h, CM_DEVPROPS_ABSENT), CP_COPY);
	ck_assert_int_eq(cpucopy_top_member(&t, CM_DOCLAYOUT_OTHER, &h, CM_DEVPROPS_ABSENT),
			 CP_DEVICES_BEFORE | CP_COPY);
	ck_assert_int_eq(cpucopy_top_member(&t, CM_DOCLAYOUT_OTHER, &h, CM_DEVPROPS_ABSENT), CP_COPY);
	/* every traceName replaced; the array walked */
	ck_assert_int_eq(cpucopy_top_member(&t, name, &h, CM_DEVPROPS_ABSENT), CP_NAME);
	ck_assert_int_eq(cpucopy_top_member(&t, CM_DOCLAYOUT_ARRAY, &h, CM_DEVPROPS_ABSENT), CP_ARRAY);
	ck_assert_int_eq(cpucopy_top_member(&t, name, &h, CM_DEVPROPS_ABSENT), CP_NAME);
	ck_assert_int_eq(cpucopy_top_end(&t, &h), 0);
	/* the array first: the devices before it */
	memset(&t, 0, sizeof t);
	t.devices_due = 1;
	ck_assert_int_eq(cpucopy_top_member(&t, CM_DOCLAYOUT_ARRAY, &h, CM_DEVPROPS_ABSENT),
			 CP_DEVICES_BEFORE | CP_ARRAY);
	ck_assert_int_eq(cpucopy_top_end(&t, &h), CP_ADD_NAME);
	/* a deviceProperties that lists none: replaced, each time */
	memset(&t, 0, sizeof t);
	ck_assert_int_eq(cpucopy_top_member(&t, devs, &h, CM_DEVPROPS_EMPTY), CP_DEVICES);
	ck_assert_int_eq(cpucopy_top_member(&t, devs, &h, CM_DEVPROPS_EMPTY), CP_DEVICES);
	ck_assert_int_eq(cpucopy_top_member(&t, devs, &h, CM_DEVPROPS_LISTED), CP_COPY);
	ck_assert_int_eq(cpucopy_top_member(&t, devs, &bare, CM_DEVPROPS_EMPTY), CP_COPY);
	ck_assert_int_eq(cpucopy_top_member(&t, name, &bare, CM_DEVPROPS_EMPTY), CP_COPY);
	ck_assert_int_eq(cpucopy_top_end(&t, &h), CP_ADD_EVENTS);
	/* only schemaVersion, or nothing: all of it added at the '}' */
	memset(&t, 0, sizeof t);
	t.devices_due = 1;
	ck_assert_int_eq(cpucopy_top_member(&t, schema, &h, CM_DEVPROPS_ABSENT), CP_COPY);
	ck_assert_int_eq(cpucopy_top_end(&t, &h), CP_ADD_DEVICES | CP_ADD_EVENTS | CP_ADD_NAME);
	memset(&t, 0, sizeof t);
	ck_assert_int_eq(cpucopy_top_end(&t, &bare), CP_ADD_EVENTS);
}
END_TEST

/* A trace whose every part the layout places: blanks everywhere, a key with
 * an escape (traceName, replaced), an empty deviceProperties (replaced), a
 * bracket inside a string, a member after the array. */
static const char trace[] =
	" { \"schemaVersion\" : 1 ,\n"
	"  \"deviceProperties\":[ ],\n"
	"  \"trace\\u004eame\": \"old\",\n"
	"  \"traceEvents\": [\n"
	"    {\"ph\":\"M\",\"name\":\"a\"} ,\n"
	"    {\"ph\":\"X\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"x\":[1,\"]}\"]}},\n"
	"    {\"ph\":\"i\",\"name\":\"c\"}\n"
	"  ] ,\n"
	"  \"distributedInfo\": {\"rank\": 0 }\n"
	"}\n";

/* Worked out by hand: the blanks of the top level gone, the elements with
 * the input's separators, the two values replaced. */
static const char expected[] =
	"{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0}],\"trace\\u004eame\":\"t\",\"traceEvents\":["
	"{\"ph\":\"M\",\"name\":\"a\"} ,\n"
	"    {\"ph\":\"X\",\"cat\":\"cpu_op\",\"pid\":1,\"tid\":1,\"ts\":1,\"dur\":1,\"args\":{\"x\":[1,\"]}\"]}},\n"
	"    {\"ph\":\"i\",\"name\":\"c\"}"
	"],\"distributedInfo\":{\"rank\": 0 }}";

/* The bytes of F from its start (the position is kept). */
static char *file_bytes(FILE *f, size_t *n)
{
	long end;
	char *p;
	ck_assert_int_eq(fflush(f), 0);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	end = ftell(f);
	p = malloc((size_t)end + 1);
	ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
	ck_assert_uint_eq(fread(p, 1, (size_t)end, f), (size_t)end);
	*n = (size_t)end;
	return p;
}

/* F's content becomes P[0..N). */
static void file_set(FILE *f, const char *p, size_t n)
{
	ck_assert_int_eq(ftruncate(fileno(f), 0), 0);
	ck_assert_int_eq(fseek(f, 0, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(p, 1, n, f), n);
	ck_assert_int_eq(fflush(f), 0);
}

/* The layout's bytes P[0..N) less its marks (doclayout.h), when it has them. */
static size_t doc_bytes(const char *p, size_t n)
{
	uint64_t tail[2];
	if (n < sizeof tail)
		return n;
	memcpy(tail, p + n - sizeof tail, sizeof tail);
	if (tail[1] != CM_DOCLAYOUT_MAGIC)
		return n;
	ck_assert_uint_le(sizeof tail + tail[0] * sizeof(cm_doclayout_mark), n);
	return n - sizeof tail - (size_t)tail[0] * sizeof(cm_doclayout_mark);
}

/* Scan PATH (JOBS workers; 0: the careful scan) with reads of BUFSIZE. */
static void scan(const char *path, int jobs, size_t bufsize, cm_cpuplan *plan)
{
	cm_input *in = cm_input_open_rewindable(path, bufsize);
	ck_assert_ptr_nonnull(in);
	ck_assert_int_eq(cm_cpuscan_run_cut(in, plan, jobs, NULL), 0);
	ck_assert_int_eq(plan->careful, jobs == 0);
	cm_input_close(in);
}

/* Copy PATH by PLAN with reads of BUFSIZE into *OUT (the event buffer:
 * nothing here is large enough to be flushed).  The copy's result. */
static int copy(const char *path, const cm_cpuplan *plan, size_t bufsize, const cm_cpucopy_hooks *h, cm_buf *out)
{
	cm_input *in = cm_input_open_rewindable(path, bufsize);
	cm_evout eo = {NULL, {0}, 1};
	int rc;
	ck_assert_ptr_nonnull(in);
	cm_diag_reset();
	rc = cm_cpucopy_run(in, plan, h, &eo);
	ck_assert_ptr_null(eo.out); /* nothing flushed: all of it is in the buffer */
	*out = eo.buf;
	cm_input_close(in);
	return rc;
}

/* The careful scan notes the layout the parallel one does, and the copy by
 * either is the text worked out by hand, at every read size. */
START_TEST(layouts_and_copy)
{
	const char *path = check_tmpfile(trace);
	cm_cpucopy_hooks h = hooks_with("t", devices);
	for (size_t bs = 1; bs <= 40; bs++) {
		cm_cpuplan par, car;
		char *a, *b;
		size_t na, nb;
		cm_buf out;
		scan(path, 2, bs, &par);
		scan(path, 0, bs, &car);
		ck_assert_int_eq(par.devprops, CM_DEVPROPS_EMPTY);
		a = file_bytes(par.layout, &na);
		b = file_bytes(car.layout, &nb);
		ck_assert_msg(na == nb && !memcmp(a, b, na), "read size %zu: the careful layout differs", bs);
		free(a);
		free(b);
		ck_assert_int_eq(copy(path, &par, bs, &h, &out), 0);
		ck_assert_msg(out.len == strlen(expected) && !memcmp(out.p, expected, out.len),
			      "read size %zu (parallel): %.*s", bs, (int)out.len, out.p);
		cm_buf_free(&out);
		ck_assert_int_eq(copy(path, &car, bs, &h, &out), 0);
		ck_assert_msg(out.len == strlen(expected) && !memcmp(out.p, expected, out.len),
			      "read size %zu (careful): %.*s", bs, (int)out.len, out.p);
		cm_buf_free(&out);
		cm_cpuplan_free(&par);
		cm_cpuplan_free(&car);
	}
	unlink(path);
}
END_TEST

/* What a trace without traceEvents or traceName gets, after the one
 * member that goes before the devices. */
START_TEST(members_added)
{
	const char *path = check_tmpfile("{\"schemaVersion\":1, \"x\" : [ 1 ,2]}");
	cm_cpucopy_hooks h = hooks_with("t", devices);
	cm_cpuplan plan;
	cm_buf out;
	const char *want = "{\"schemaVersion\":1,\"deviceProperties\":[{\"id\":0}],\"x\":[ 1 ,2],"
			   "\"traceEvents\":[],\"traceName\":\"t\"}";
	scan(path, 2, 7, &plan);
	ck_assert_int_eq(copy(path, &plan, 7, &h, &out), 0);
	ck_assert_str_eq((cm_buf_putc(&out, 0), out.p), want);
	cm_buf_free(&out);
	cm_cpuplan_free(&plan);
	unlink(path);
}
END_TEST

/* The layout as varints. */
static size_t decode(const char *p, size_t n, uint64_t *v)
{
	size_t k = 0;
	for (size_t i = 0; i < n; k++) {
		unsigned shift = 0;
		v[k] = 0;
		do
			v[k] |= (uint64_t)(p[i] & 0x7f) << shift, shift += 7;
		while (p[i++] & 0x80);
	}
	return k;
}

static void encode(const uint64_t *v, size_t k, cm_buf *b)
{
	b->len = 0;
	for (size_t i = 0; i < k; i++)
		cm_buf_put_varint(b, v[i]);
}

/* The copy by PLAN (its layout doctored) fails with status 3, having
 * written only a prefix of the right output. */
static void fails(const char *path, const cm_cpuplan *plan, const cm_cpucopy_hooks *h, const char *what)
{
	cm_buf out;
	for (size_t bs = 1; bs <= 64; bs += 9) {
		int rc = copy(path, plan, bs, h, &out);
		ck_assert_msg(rc == -1 && cm_diag_status() == CM_EXIT_IO, "%s (read size %zu): rc %d, status %d",
			      what, bs, rc, cm_diag_status());
		ck_assert_msg(out.len <= strlen(expected) && (!out.len || !memcmp(out.p, expected, out.len)),
			      "%s (read size %zu): other bytes written: %.*s", what, bs, (int)out.len, out.p);
		cm_buf_free(&out);
	}
}

/* The copy by PLAN with the layout's records W[0..K) (encoded in B) fails
 * as fails() says. */
static void fails_with(const char *path, const cm_cpuplan *plan, const cm_cpucopy_hooks *h, const uint64_t *w,
		       size_t k, cm_buf *b, const char *what)
{
	encode(w, k, b);
	file_set(plan->layout, b->p, b->len);
	fails(path, plan, h, what);
}

/* A layout cut short anywhere, or with two records swapped, fails the
 * copy: status 3 ("changed between the passes"), nothing but a prefix of
 * the right bytes written (the output file does not appear). */
START_TEST(doctored_layout)
{
	const char *path = check_tmpfile(trace);
	cm_cpucopy_hooks h = hooks_with("t", devices);
	cm_cpuplan plan;
	char *orig;
	size_t n, k;
	uint64_t v[128], w[128];
	cm_buf b = {0};
	scan(path, 2, 64, &plan);
	orig = file_bytes(plan.layout, &n);
	n = doc_bytes(orig, n); /* the marks: see parts_doctored */
	k = decode(orig, n, v);
	/* { schemaVersion(5) deviceProperties(5) traceName(5) array(4) 3 elements(6) 0 ] distributedInfo(5) 0 } */
	ck_assert_uint_eq(k, 1 + 5 + 5 + 5 + 4 + 6 + 2 + 5 + 2);
	ck_assert_uint_eq(v[16], CM_DOCLAYOUT_ARRAY);
	/* cut short, at every byte */
	for (size_t cut = 0; cut < n; cut++) {
		char what[96];
		file_set(plan.layout, orig, cut);
		snprintf(what, sizeof what, "the layout cut to %zu of %zu bytes", cut, n);
		fails(path, &plan, &h, what);
	}
	/* elements 0 and 1 swapped (their gaps and lengths) */
	memcpy(w, v, k * sizeof *v);
	w[20] = v[22], w[21] = v[23], w[22] = v[20], w[23] = v[21];
	fails_with(path, &plan, &h, w, k, &b, "elements 0 and 1 swapped");
	/* elements 1 and 2 swapped */
	memcpy(w, v, k * sizeof *v);
	w[22] = v[24], w[23] = v[25], w[24] = v[22], w[25] = v[23];
	fails_with(path, &plan, &h, w, k, &b, "elements 1 and 2 swapped");
	/* the first two members swapped (their records: tag, key, key length,
	 * value, value length) */
	memcpy(w, v, k * sizeof *v);
	memcpy(w + 1, v + 6, 5 * sizeof *v);
	memcpy(w + 6, v + 1, 5 * sizeof *v);
	fails_with(path, &plan, &h, w, k, &b, "members 0 and 1 swapped");
	/* the array's end and the last member's record swapped */
	memcpy(w, v, k * sizeof *v);
	memcpy(w + 26, v + 28, 5 * sizeof *v);
	memcpy(w + 31, v + 26, 2 * sizeof *v);
	fails_with(path, &plan, &h, w, k, &b, "the ']' after the member after it");
	/* and the layout as it was still copies */
	file_set(plan.layout, orig, n);
	{
		cm_buf out;
		ck_assert_int_eq(copy(path, &plan, 5, &h, &out), 0);
		ck_assert_uint_eq(out.len, strlen(expected));
		cm_buf_free(&out);
	}
	free(orig);
	cm_buf_free(&b);
	cm_cpuplan_free(&plan);
	unlink(path);
}
END_TEST

/* Copy PATH by PLAN with reads of BUFSIZE through an output file (the
 * parts go to the output, past the event buffer), its bytes into *OUT.
 * The copy's result; on a failure no file is left. */
static int copy_out(const char *path, const cm_cpuplan *plan, size_t bufsize, const cm_cpucopy_hooks *h, cm_buf *out)
{
	char opath[64];
	cm_input *in = cm_input_open_rewindable(path, bufsize);
	cm_evout eo = {NULL, {0}, 1};
	FILE *f;
	int rc;
	snprintf(opath, sizeof opath, "/tmp/check_cpucopy_out.%ld", (long)getpid());
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(eo.out = cm_output_open(opath, -1, 1));
	cm_diag_reset();
	rc = cm_cpucopy_run(in, plan, h, &eo);
	if (rc == 0)
		rc = cm_evout_flush(&eo);
	if (cm_output_close(eo.out, rc == 0) != 0)
		rc = -1;
	cm_buf_free(&eo.buf);
	cm_input_close(in);
	memset(out, 0, sizeof *out);
	if (rc == 0) {
		char tmp[4096];
		size_t got;
		ck_assert_ptr_nonnull(f = fopen(opath, "rb"));
		while ((got = fread(tmp, 1, sizeof tmp, f)) > 0)
			cm_buf_put(out, tmp, got);
		fclose(f);
		unlink(opath);
	} else {
		ck_assert_int_ne(access(opath, F_OK), 0);
	}
	return rc;
}

/* The elements past the metadata in parts on threads (cpucopypar.c), a
 * mark at every element (the testing aid CUPTIMERGE_COPY_STRIDE): the
 * marks where the elements are, and the copy the bytes worked out by hand
 * at every read size, on 2 and 3 threads and on one (the walk alone). */
START_TEST(parts_copy)
{
	const char *path;
	cm_cpucopy_hooks h = hooks_with("t", devices);
	uint64_t parts = 0;
	setenv("CUPTIMERGE_COPY_STRIDE", "1", 1); /* read once, at the first mark: this process's */
	path = check_tmpfile(trace);
	h.parts = &parts;
	for (size_t bs = 1; bs <= 40; bs += 3) {
		cm_cpuplan plan;
		cm_doclayout_mark *m;
		size_t nm;
		const char *first = strstr(trace, "\"traceEvents\": [") + 16;
		scan(path, 2, bs, &plan);
		ck_assert_int_eq(cm_doclayout_marks(plan.layout, &m, &nm), 0);
		/* before each of the 3 elements, and at the array's end */
		ck_assert_uint_eq(nm, 4);
		ck_assert_uint_eq(m[0].index, 0);
		ck_assert_uint_eq(m[0].pos, (uint64_t)(first - trace));
		ck_assert_uint_eq(m[1].pos, (uint64_t)(strstr(first, "} ,") - trace) + 1);
		ck_assert_uint_eq(m[3].index, 3);
		ck_assert_uint_eq(m[3].pos, (uint64_t)(strstr(trace, "\"c\"}") - trace) + 4);
		free(m);
		for (int threads = 1; threads <= 3; threads++) {
			cm_buf out;
			h.threads = threads;
			parts = 0;
			ck_assert_int_eq(copy_out(path, &plan, bs, &h, &out), 0);
			ck_assert_msg(out.len == strlen(expected) && !memcmp(out.p, expected, out.len),
				      "read size %zu, %d threads: %.*s", bs, threads, (int)out.len, out.p);
			/* element 2 alone: the metadata goes in before element
			 * 1 (after the leading "M" event), after its mark */
			ck_assert_uint_eq(parts, threads > 1 ? 1 : 0);
			cm_buf_free(&out);
		}
		cm_cpuplan_free(&plan);
	}
	unlink(path);
}
END_TEST

/* cm_cpucopy_enc's stand-in: each part's elements "PIECE:OFFSET:TEXT|",
 * padded to 8 bytes with blanks, handed on to LOG in order. */
struct fake_enc {
	cm_buf log;
	int begun, ended, ok, live;
};
static int fake_begin(void *ctx)
{
	((struct fake_enc *)ctx)->begun++;
	return 0;
}
static void *fake_new(void *ctx)
{
	__atomic_add_fetch(&((struct fake_enc *)ctx)->live, 1, __ATOMIC_RELAXED);
	return ctx;
}
static void fake_free(void *enc) { __atomic_sub_fetch(&((struct fake_enc *)enc)->live, 1, __ATOMIC_RELAXED); }
static int fake_part(void *enc, uint64_t piece, const char *text, const uint64_t *ab, size_t n, const char *label,
		     uint64_t off, cm_buf *out)
{
	(void)enc;
	(void)label;
	ck_assert_uint_eq(out->len % 8, 0);
	for (size_t i = 0; i < n; i++) {
		char head[64];
		cm_buf_put(out, head, (size_t)snprintf(head, sizeof head, "%llu:%llu:", (unsigned long long)piece,
						       (unsigned long long)(off + ab[2 * i])));
		cm_buf_put(out, text + ab[2 * i], (size_t)(ab[2 * i + 1] - ab[2 * i]));
		cm_buf_putc(out, '|');
	}
	while (out->len % 8)
		cm_buf_putc(out, ' ');
	return 0;
}
static int fake_hand(void *ctx, const void *p, size_t n)
{
	cm_buf_put(&((struct fake_enc *)ctx)->log, p, n);
	return 0;
}
static int fake_end(void *ctx, int ok)
{
	struct fake_enc *f = ctx;
	f->ended++;
	f->ok = ok;
	return 0;
}

/* The parts encoded (hooks->enc, a .pftrace merge's): the part's element
 * (element 2, its offset in the input) goes to the encoder, one begin and
 * one end around it, every encoder freed, and the text goes on without it
 * or the separator before it; on one thread too. */
START_TEST(parts_encoded)
{
	const char *path, *e2 = strstr(trace, "{\"ph\":\"i\"");
	const char *e2_out = strstr(expected, ",\n    {\"ph\":\"i\"");
	size_t e2_len = strlen(",\n    {\"ph\":\"i\",\"name\":\"c\"}"); /* (and its separator) */
	cm_cpucopy_hooks h = hooks_with("t", devices);
	struct fake_enc f;
	cm_cpucopy_enc enc = {&f, fake_begin, fake_new, fake_free, fake_part, fake_hand, fake_end};
	char want[64];
	uint64_t parts = 0;
	setenv("CUPTIMERGE_COPY_STRIDE", "1", 1);
	path = check_tmpfile(trace);
	h.parts = &parts;
	h.enc = &enc;
	snprintf(want, sizeof want, "0:%zu:{\"ph\":\"i\",\"name\":\"c\"}|", (size_t)(e2 - trace));
	for (size_t bs = 1; bs <= 40; bs += 13) {
		cm_cpuplan plan;
		scan(path, 2, bs, &plan);
		for (int threads = 1; threads <= 3; threads++) {
			cm_buf out;
			memset(&f, 0, sizeof f);
			h.threads = threads;
			parts = 0;
			ck_assert_int_eq(copy_out(path, &plan, bs, &h, &out), 0);
			/* the JSON less element 2 and its separator */
			ck_assert_msg(out.len == strlen(expected) - e2_len &&
					      !memcmp(out.p, expected, (size_t)(e2_out - expected)) &&
					      !memcmp(out.p + (e2_out - expected), e2_out + e2_len, strlen(e2_out + e2_len)),
				      "read size %zu, %d threads: %.*s", bs, threads, (int)out.len, out.p);
			ck_assert_uint_eq(parts, 1);
			ck_assert_int_eq(f.begun, 1);
			ck_assert_int_eq(f.ended, 1);
			ck_assert_int_eq(f.ok, 1);
			ck_assert_int_eq(f.live, 0);
			ck_assert_uint_eq(f.log.len % 8, 0);
			ck_assert_msg(f.log.len >= strlen(want) && !memcmp(f.log.p, want, strlen(want)),
				      "read size %zu, %d threads: %.*s", bs, threads, (int)f.log.len, f.log.p);
			cm_buf_free(&out);
			cm_buf_free(&f.log);
		}
		cm_cpuplan_free(&plan);
	}
	unlink(path);
}
END_TEST

/* A layout doctored inside the parts (the last element's length one
 * short, the marks kept): the copy in parts fails with status 3, as the
 * walk does, and leaves no file. */
START_TEST(parts_doctored)
{
	const char *path;
	cm_cpucopy_hooks h = hooks_with("t", devices);
	cm_cpuplan plan;
	char *orig, *bad;
	size_t n, doc, k, at;
	uint64_t v[128];
	cm_buf b = {0}, out;
	setenv("CUPTIMERGE_COPY_STRIDE", "1", 1);
	path = check_tmpfile(trace);
	h.threads = 2;
	scan(path, 2, 64, &plan);
	orig = file_bytes(plan.layout, &n);
	doc = doc_bytes(orig, n);
	k = decode(orig, doc, v);
	ck_assert_uint_eq(v[16], CM_DOCLAYOUT_ARRAY);
	/* element 2 (the part's) a byte short: its record stays a byte
	 * long, so the marks still point at record boundaries */
	ck_assert_uint_lt(v[25], 128);
	{
		uint64_t w[128];
		memcpy(w, v, k * sizeof *v);
		w[25] = v[25] - 1;
		encode(w, k, &b);
	}
	ck_assert_uint_eq(b.len, doc);
	bad = malloc(n);
	memcpy(bad, b.p, doc);
	memcpy(bad + doc, orig + doc, n - doc); /* the marks as they were */
	file_set(plan.layout, bad, n);
	at = 0;
	for (size_t bs = 1; bs <= 64; bs += 9, at++) {
		int rc = copy_out(path, &plan, bs, &h, &out);
		ck_assert_msg(rc == -1 && cm_diag_status() == CM_EXIT_IO, "read size %zu: rc %d, status %d", bs, rc,
			      cm_diag_status());
	}
	ck_assert_uint_gt(at, 0);
	free(bad);
	free(orig);
	cm_buf_free(&b);
	cm_cpuplan_free(&plan);
	unlink(path);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("cpucopy");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, top_plan);
	tcase_add_test(tc, layouts_and_copy);
	tcase_add_test(tc, members_added);
	tcase_add_test(tc, doctored_layout);
	tcase_add_test(tc, parts_copy);
	tcase_add_test(tc, parts_doctored);
	tcase_add_test(tc, parts_encoded);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(suite)
