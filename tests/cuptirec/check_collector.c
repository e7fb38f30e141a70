/* check_collector.c - the collector's pure parts, no GPU: encoder, writer, pool, maps. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>
#include <zlib.h>

/* the unit tests' harness: CHECK_MAIN, the per-test directory */
#include "../unit/check_common.h"

/* path-qualified: src/ has headers of the same names (window.h) */
#include "cuptirec/annot.h"
#include "cuptirec/clock.h"
#include "cuptirec/encode.h"
#include "cuptirec/jbuf.h"
#include "cuptirec/opts.h"
#include "cuptirec/pathpat.h"
#include "cuptirec/pool.h"
#include "cuptirec/sink.h"
#include "cuptirec/window.h"

#ifndef CREC_BUILDDIR
#define CREC_BUILDDIR "."
#endif
#ifndef CREC_FIXTUREDIR
#define CREC_FIXTUREDIR "tests/cuptirec"
#endif

/* ---- helpers ------------------------------------------------------------ */

/* The JSON text of B as a NUL-terminated string (B keeps owning it). */
static const char *jtext(crec_jbuf *b)
{
	crec_jbuf_put(b, "", 1);
	b->len--;
	return b->p;
}

/* Parse TEXT, failing the test with yajl's message when it is not JSON. */
static yajl_val parse(const char *text)
{
	char err[512] = "";
	yajl_val v = yajl_tree_parse(text, err, sizeof err);

	ck_assert_msg(v != NULL, "not JSON (%s): %.300s", err, text);
	return v;
}

/* Member KEY of object O (NULL when absent). */
static yajl_val member(yajl_val o, const char *key)
{
	const char *path[] = { key, NULL };

	return yajl_tree_get(o, path, yajl_t_any);
}

/* The text of number member KEY; fails when absent or not a number. */
static const char *num(yajl_val o, const char *key)
{
	yajl_val v = member(o, key);

	ck_assert_msg(v && YAJL_IS_NUMBER(v), "member %s missing or not a number", key);
	return YAJL_GET_NUMBER(v);
}

/* String member KEY; fails when absent or not a string. */
static const char *str(yajl_val o, const char *key)
{
	yajl_val v = member(o, key);

	ck_assert_msg(v && YAJL_IS_STRING(v), "member %s missing or not a string", key);
	return YAJL_GET_STRING(v);
}

/* One expected member of an object: its KEY, its type ('n': a number,
 * compared as its text; 's': a string) and its TEXT.  A table of them says
 * what an encoded record must hold, row by row. */
struct want {
	char type;
	const char *key, *text;
};
#define N(key, text) { 'n', (key), (text) }
#define S(key, text) { 's', (key), (text) }

/* Check each of the N members W lists in object O: present, of its type, with
 * its text; a failure names the caller's LINE and the member. */
static void expect_members(int line, yajl_val o, const struct want *w, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const char *got = w[i].type == 'n' ? num(o, w[i].key) : str(o, w[i].key);

		ck_assert_msg(strcmp(got, w[i].text) == 0, "line %d: member %s is \"%s\", wanted \"%s\"",
			      line, w[i].key, got, w[i].text);
	}
}

/* expect(O, N("key", "text"), S("key", "text"), ...): the table of members
 * object O must hold (expect_members). */
#define expect(o, ...)                                                              \
	expect_members(__LINE__, (o), (const struct want[]){ __VA_ARGS__ },          \
		       sizeof((const struct want[]){ __VA_ARGS__ }) / sizeof(struct want))

/* The string V holds, or "" when V is absent or not a string. */
static const char *sval(yajl_val v)
{
	const char *s = v && YAJL_IS_STRING(v) ? v->u.string : NULL;

	return s ? s : "";
}

/* Number of members of object O. */
static size_t nmembers(yajl_val o)
{
	ck_assert(YAJL_IS_OBJECT(o));
	return o->u.object.len;
}

/* Read a whole (possibly gzip) file; returns malloc'ed NUL-terminated text. */
static char *slurp(const char *path)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 16, len = 0;
	char *p = malloc(cap);
	int r;

	ck_assert_msg(f != NULL, "cannot open %s", path);
	while ((r = gzread(f, p + len, (unsigned)(cap - len - 1))) > 0) {
		len += (size_t)r;
		if (cap - len < 2)
			p = realloc(p, cap *= 2);
	}
	ck_assert_int_ge(r, 0);
	gzclose(f);
	p[len] = '\0';
	return p;
}

/* ---- jbuf ----------------------------------------------------------------- */

static const struct {
	const char *in;
	size_t n;
	const char *out;
} esc_cases[] = {
	{ "plain", 5, "\"plain\"" },
	{ "a\"b\\c", 5, "\"a\\\"b\\\\c\"" },
	{ "\n\t\r\x01\x1f", 5, "\"\\n\\t\\r\\u0001\\u001f\"" },
	{ "caf\xc3\xa9", 5, "\"caf\xc3\xa9\"" },                 /* é passes */
	{ "\xf0\x9d\x84\x9e", 4, "\"\xf0\x9d\x84\x9e\"" },       /* U+1D11E passes */
	{ "x\xffy", 3, "\"x\\ufffdy\"" },                        /* stray byte */
	{ "\xc3", 1, "\"\\ufffd\"" },                             /* cut sequence */
	{ "\xc0\x80", 2, "\"\\ufffd\\ufffd\"" },                  /* overlong NUL */
	{ "\xed\xa0\x80", 3, "\"\\ufffd\\ufffd\\ufffd\"" },       /* surrogate */
	{ "\xf4\x90\x80\x80", 4, "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* > U+10FFFF */
	{ "a\0b", 3, "\"a\\u0000b\"" },                           /* embedded NUL */
};

START_TEST(test_jbuf_escape)
{
	crec_jbuf b = { 0 };
	char fixed[64];
	size_t n;

	crec_jbuf_str(&b, esc_cases[_i].in, esc_cases[_i].n);
	ck_assert_str_eq(jtext(&b), esc_cases[_i].out);
	n = crec_json_str_fixed(fixed, esc_cases[_i].in, esc_cases[_i].n);
	fixed[n] = '\0';
	ck_assert_str_eq(fixed, esc_cases[_i].out);
	/* and yajl, which validates UTF-8, accepts it */
	yajl_tree_free(parse(b.p));
	crec_jbuf_free(&b);
}
END_TEST

START_TEST(test_jbuf_ints)
{
	crec_jbuf b = { 0 };

	crec_jbuf_u64(&b, 0);
	crec_jbuf_lit(&b, " ");
	crec_jbuf_u64(&b, UINT64_MAX);
	crec_jbuf_lit(&b, " ");
	crec_jbuf_i64(&b, INT64_MIN);
	crec_jbuf_lit(&b, " ");
	crec_jbuf_i64(&b, -1);
	crec_jbuf_lit(&b, " ");
	crec_jbuf_i64(&b, INT64_MAX);
	ck_assert_str_eq(jtext(&b), "0 18446744073709551615 -9223372036854775808 -1 9223372036854775807");
	ck_assert_int_eq(b.failed, 0);
	crec_jbuf_free(&b);
}
END_TEST

START_TEST(test_jbuf_grows)
{
	crec_jbuf b = { 0 };
	int i;

	for (i = 0; i < 100000; i++)
		crec_jbuf_lit(&b, "0123456789");
	ck_assert_uint_eq(b.len, 1000000);
	ck_assert_int_eq(b.failed, 0);
	ck_assert_int_eq(memcmp(b.p + 999990, "0123456789", 10), 0);
	crec_jbuf_free(&b);
}
END_TEST

/* ---- path patterns, options ------------------------------------------------- */

/* crec_path_expand with pid PID, window SEQ, host "gpu01", no rank */
static int expand(const char *pattern, long pid, unsigned seq, char *out, size_t outsz)
{
	crec_path_vars v = { pid, seq, "gpu01", -1 };

	return crec_path_expand(pattern, &v, out, outsz);
}

/* Patterns expanded with a pid and a window number (host "gpu01", no
 * rank) into OUTSZ bytes: the name, or NULL where the expansion fails. */
static const struct {
	const char *pattern;
	long pid;
	unsigned seq;
	size_t outsz;
	const char *want;
} pathpats[] = {
	{ "w_%p.json", 1234, 0, 64, "w_1234.json" },
	{ "w_%p.json", 1234, 2, 64, "w_1234.2.json" },       /* a later window: .N before the extension */
	{ "w_%p.json.gz", 7, 1, 64, "w_7.1.json.gz" },       /* ... before both */
	{ "w_%p_%n.json", 7, 3, 64, "w_7_3.json" },          /* %n: no .N added */
	{ "trace", 7, 3, 64, "trace.3" },                    /* no extension: at the end */
	{ "100%%_%p", 9, 0, 64, "100%_9" },
	{ "bad_%d", 9, 0, 64, NULL },                        /* not a conversion */
	{ "%p%p%p%p%p%p%p%p", 1234567, 0, 40, NULL },        /* longer than the room */
	{ "12345678.json", 1, 1, 14, NULL },                 /* the .N makes it so */
};

START_TEST(test_pathpat)
{
	char out[64];
	int rc = expand(pathpats[_i].pattern, pathpats[_i].pid, pathpats[_i].seq, out, pathpats[_i].outsz);

	if (!pathpats[_i].want) {
		ck_assert_msg(rc == -1, "\"%s\" (pid %ld, window %u, %zu bytes) expanded to \"%s\", wanted a failure",
			      pathpats[_i].pattern, pathpats[_i].pid, pathpats[_i].seq, pathpats[_i].outsz, out);
		return;
	}
	ck_assert_msg(rc == 0, "\"%s\" (pid %ld, window %u) failed", pathpats[_i].pattern, pathpats[_i].pid,
		      pathpats[_i].seq);
	ck_assert_str_eq(out, pathpats[_i].want);
}
END_TEST

/* Patterns -o takes (crec_path_check: NULL, the pattern is good) and those
 * it refuses with a reason. */
static const struct {
	const char *pattern;
	int ok;
} pathchecks[] = {
	{ "ok_%p_%n_%%", 1 }, { "w_%h_%r_%p.json", 1 },
	{ "bad_%", 0 }, { "", 0 }, { "w_%R.json", 0 }, { "w_%H.json", 0 },
};

START_TEST(test_pathcheck)
{
	const char *why = crec_path_check(pathchecks[_i].pattern);

	ck_assert_msg((why == NULL) == pathchecks[_i].ok, "crec_path_check(\"%s\"): %s", pathchecks[_i].pattern,
		      why ? why : "taken, wanted a refusal");
}
END_TEST

/* %h and %r (issue 9): the host and the rank, from the caller's facts */
START_TEST(test_pathpat_host_rank)
{
	crec_path_vars v = { 42, 0, "gpu01", 3 };
	char out[64];

	ck_assert_int_eq(crec_path_expand("w_%h_%r_%p.json", &v, out, sizeof out), 0);
	ck_assert_str_eq(out, "w_gpu01_3_42.json");
	v.rank = -1;   /* no rank in the environment: a documented literal */
	ck_assert_int_eq(crec_path_expand("w_%h_%r.json", &v, out, sizeof out), 0);
	ck_assert_str_eq(out, "w_gpu01_norank.json");
	v.host = NULL; /* no host name */
	ck_assert_int_eq(crec_path_expand("%h/w.json", &v, out, sizeof out), 0);
	ck_assert_str_eq(out, "nohost/w.json");
	v.host = "gpu01";
	v.seq = 1;     /* the second window of a %h_%r pattern still gets .1 */
	v.rank = 7;
	ck_assert_int_eq(crec_path_expand("%h_%r.json.gz", &v, out, sizeof out), 0);
	ck_assert_str_eq(out, "gpu01_7.1.json.gz");
	ck_assert_int_eq(crec_path_expand("%h%h%h%h", &v, out, 20), -1);
}
END_TEST

/* The host name: gethostname's, with '/' made path-safe */
START_TEST(test_path_host)
{
	char h[256], want[256];
	size_t i;

	ck_assert_int_eq(crec_path_host(h, sizeof h), 0);
	ck_assert_int_eq(gethostname(want, sizeof want), 0);
	want[sizeof want - 1] = '\0';
	for (i = 0; want[i]; i++)
		if (want[i] == '/')
			want[i] = '_';
	ck_assert_str_eq(h, want);
	ck_assert_ptr_null(strchr(h, '/'));
	ck_assert_int_eq(crec_path_host(h, 1), -1);
}
END_TEST

/* The rank: RANK, then SLURM_PROCID, then OMPI_COMM_WORLD_RANK */
START_TEST(test_path_rank)
{
	static const char *const not_ranks[] = { "", "3x", "-1", "99999999999999999999" };
	const char *from = "x";
	size_t i;

	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("OMPI_COMM_WORLD_RANK");
	ck_assert_int_eq(crec_path_rank(&from), -1);
	ck_assert_ptr_null(from);
	setenv("OMPI_COMM_WORLD_RANK", "5", 1);
	ck_assert_int_eq(crec_path_rank(&from), 5);
	ck_assert_str_eq(from, "OMPI_COMM_WORLD_RANK");
	setenv("SLURM_PROCID", "12", 1);
	ck_assert_int_eq(crec_path_rank(&from), 12);
	ck_assert_str_eq(from, "SLURM_PROCID");
	setenv("RANK", "0", 1);
	ck_assert_int_eq(crec_path_rank(&from), 0);
	ck_assert_str_eq(from, "RANK");
	/* a value that is not a rank is passed over: the next variable counts */
	for (i = 0; i < sizeof not_ranks / sizeof not_ranks[0]; i++) {
		setenv("RANK", not_ranks[i], 1);
		ck_assert_msg(crec_path_rank(&from) == 12 && !strcmp(from, "SLURM_PROCID"),
			      "RANK=\"%s\" was taken for a rank", not_ranks[i]);
	}
	setenv("RANK", "007", 1);
	ck_assert_int_eq(crec_path_rank(NULL), 7);
	unsetenv("RANK");
	unsetenv("SLURM_PROCID");
	unsetenv("OMPI_COMM_WORLD_RANK");
}
END_TEST

/* --activities lists: the set, or -1 with the first word not known. */
static const struct {
	const char *text;
	int want;
	const char *bad;
} activity_lists[] = {
	{ "default", CREC_ACT_DEFAULT, NULL },
	{ "kernel, Runtime", CREC_ACT_KERNEL | CREC_ACT_RUNTIME, NULL }, /* blanks, any case */
	{ "default,-driver", CREC_ACT_DEFAULT & ~CREC_ACT_DRIVER, NULL },
	{ "all", CREC_ACT_ALL, NULL },
	{ "kernel,bogus", -1, "bogus" },
};

START_TEST(test_opts_activities)
{
	char bad[32] = "";

	ck_assert_msg(crec_parse_activities(activity_lists[_i].text, bad, sizeof bad) == activity_lists[_i].want,
		      "--activities=\"%s\" is not %d", activity_lists[_i].text, activity_lists[_i].want);
	if (activity_lists[_i].bad)
		ck_assert_str_eq(bad, activity_lists[_i].bad);
}
END_TEST

/* Numbers of seconds and sizes: rc 0 with the value, or -1. */
static const struct {
	const char *text;
	int rc;
	double want;
} seconds_texts[] = {
	{ "2.5", 0, 2.5 }, { "-1", -1, 0 }, { "1x", -1, 0 }, { "nan", -1, 0 },
};

static const struct {
	const char *text;
	int rc;
	size_t want;
} size_texts[] = {
	{ "4M", 0, 4u << 20 }, { "64KiB", 0, 65536 }, { "12", 0, 12 }, { "4Q", -1, 0 }, { "-4", -1, 0 },
};

START_TEST(test_opts_seconds)
{
	double v = -99;
	int rc = crec_parse_seconds(seconds_texts[_i].text, &v);

	ck_assert_msg(rc == seconds_texts[_i].rc && (rc < 0 || v == seconds_texts[_i].want),
		      "seconds \"%s\": rc %d, %g; wanted rc %d, %g", seconds_texts[_i].text, rc, v, seconds_texts[_i].rc,
		      seconds_texts[_i].want);
}
END_TEST

START_TEST(test_opts_size)
{
	size_t v = 99;
	int rc = crec_parse_size(size_texts[_i].text, &v);

	ck_assert_msg(rc == size_texts[_i].rc && (rc < 0 || v == size_texts[_i].want),
		      "size \"%s\": rc %d, %zu; wanted rc %d, %zu", size_texts[_i].text, rc, v, size_texts[_i].rc,
		      size_texts[_i].want);
}
END_TEST

/* ---- encoder ---------------------------------------------------------------- */

static int demangle_calls;

static const char *fake_demangle(void *ud, const char *m)
{
	demangle_calls++;
	return strcmp(m, "_Z6addonePfi") == 0 ? "addone(float*, int)" : NULL;
}

static const char *fake_api_name(void *ud, int driver, uint32_t cbid)
{
	if (!driver && cbid == 211)
		return "cudaLaunchKernel_v7000";
	if (!driver && cbid == 1000)
		return "cudaThing_ptsz_v7000";
	if (!driver && cbid == 1001)
		return "cudaOdd_vx";
	if (driver && cbid == 307)
		return "cuLaunchKernel";
	if (driver && cbid == 276)
		return "cuMemcpyHtoD_v2";
	return NULL;
}

static crec_enc new_enc(void)
{
	crec_enc e;

	memset(&e, 0, sizeof e);
	e.api_name = fake_api_name;
	e.demangle = fake_demangle;
	return e;
}

/* Encode REC; the event object must parse.  Returns the parsed tree (or NULL
 * when the encoder skipped the record, then nothing may have been written). */
static yajl_val enc1(crec_enc *e, const void *rec, crec_jbuf *b)
{
	b->len = 0;
	if (!crec_encode(e, rec, b)) {
		ck_assert_uint_eq(b->len, 0);
		return NULL;
	}
	return parse(jtext(b));
}

/* expect_enc(E, REC, B, N("key", "text"), S("key", "text"), ...): encode REC
 * (it must not be skipped) and check the members listed (expect), for a
 * record encoded again with a field or two changed. */
static void expect_enc_members(int line, crec_enc *e, const void *rec, crec_jbuf *b, const struct want *w, size_t n)
{
	yajl_val v = enc1(e, rec, b);

	ck_assert_msg(v != NULL, "line %d: the record was skipped", line);
	expect_members(line, v, w, n);
	yajl_tree_free(v);
}
#define expect_enc(e, rec, b, ...)                                                  \
	expect_enc_members(__LINE__, (e), (rec), (b), (const struct want[]){ __VA_ARGS__ }, \
			   sizeof((const struct want[]){ __VA_ARGS__ }) / sizeof(struct want))

START_TEST(test_encode_kernel)
{
	CUpti_ActivityKernel10 k;
	crec_enc e = new_enc();
	crec_jbuf b = { 0 };
	yajl_val v;

	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.deviceId = 3;
	k.contextId = 1;
	k.streamId = 7;
	k.correlationId = 4000000001u;
	k.graphNodeId = 0x1234567890ull;
	k.graphId = 42;
	k.start = 1759300079000100000ull;
	k.end = 1759300079000105000ull;
	k.name = "_Z6addonePfi";
	k.gridX = 256;
	k.gridY = 2;
	k.gridZ = 3;
	k.blockX = 128;
	k.blockY = 4;
	k.blockZ = 1;
	k.registersPerThread = 44;
	k.staticSharedMemory = 4096;
	k.dynamicSharedMemory = 65536;
	k.channelID = 17;
	k.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
	/* queued, submitted: CUPTI_TIMESTAMP_UNKNOWN (not collected) */
	v = enc1(&e, &k, &b);
	ck_assert_ptr_nonnull(v);
	/* "kind" first, so a streaming reader knows the shape at once */
	ck_assert(strncmp(b.p, "{\"kind\":\"kernel\",", 17) == 0);
	expect(v, S("kind", "kernel"), N("device_id", "3"), N("context_id", "1"),
		N("stream_id", "7"), N("correlation_id", "4000000001"),
		N("graph_node_id", "78187493520"), N("graph_id", "42"),
		N("start_ns", "1759300079000100000"), N("end_ns", "1759300079000105000"),
		N("grid_x", "256"), N("grid_y", "2"), N("grid_z", "3"), N("block_x", "128"),
		N("block_y", "4"), N("block_z", "1"), N("registers_per_thread", "44"),
		N("static_shared_memory", "4096"), N("dynamic_shared_memory", "65536"),
		N("channel_id", "17"), N("channel_type", "1"));
	/* not collected: left out rather than written as 0 */
	ck_assert_ptr_null(member(v, "queued_ns"));
	ck_assert_ptr_null(member(v, "submitted_ns"));
	ck_assert(YAJL_IS_NULL(member(v, "annotation")));
	ck_assert_str_eq(str(v, "name"), "addone(float*, int)");
	ck_assert_uint_eq(nmembers(v), 22);
	yajl_tree_free(v);

	/* queued and submitted when CUPTI has them (latency timestamps on),
	 * each on its own; the widest register count CUPTI can report */
	k.queued = 1759300079000090000ull;
	k.registersPerThread = 65535;
	v = enc1(&e, &k, &b);
	ck_assert_str_eq(num(v, "queued_ns"), "1759300079000090000");
	ck_assert_ptr_null(member(v, "submitted_ns"));
	ck_assert_str_eq(num(v, "registers_per_thread"), "65535");
	ck_assert_uint_eq(nmembers(v), 23);
	yajl_tree_free(v);
	k.submitted = 1759300079000095000ull;
	v = enc1(&e, &k, &b);
	ck_assert_str_eq(num(v, "queued_ns"), "1759300079000090000");
	ck_assert_str_eq(num(v, "submitted_ns"), "1759300079000095000");
	ck_assert_uint_eq(nmembers(v), 24);
	ck_assert_uint_eq(e.count[CREC_EV_KERNEL], 3);
	yajl_tree_free(v);

	/* a name the demangler leaves alone is kept, quotes escaped */
	k.name = "my \"kernel\"";
	expect_enc(&e, &k, &b, S("name", "my \"kernel\""));
	k.name = NULL;
	expect_enc(&e, &k, &b, S("name", ""));

	/* a kernel CUPTI never completed (forced flush) is skipped and counted */
	k.end = 0;
	ck_assert_ptr_null(enc1(&e, &k, &b));
	ck_assert_uint_eq(e.incomplete, 1);
	ck_assert_uint_eq(e.count[CREC_EV_KERNEL], 5);
	/* the device is noted for the window's device_properties */
	ck_assert_uint_eq(e.devices[0], 1ull << 3);
	ck_assert_uint_eq(e.devices[1] | e.devices[2] | e.devices[3], 0);
	crec_jbuf_free(&b);
}
END_TEST

/* The names of other copies: the kinds' words, or the unknown ones'. */
static const struct {
	uint8_t copy, src, dst;
	const char *name;
} memcpy_names[] = {
	{ CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, CUPTI_ACTIVITY_MEMORY_KIND_PINNED, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE,
	  "Memcpy HtoD (Pinned -> Device)" },
	{ CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN, 200, CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC,
	  "Memcpy <unknown> (Unrecognized -> Managed Static)" },
};

START_TEST(test_encode_memcpy_memset)
{
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemset4 s;
	crec_enc e = new_enc();
	crec_jbuf b = { 0 };
	yajl_val v;
	size_t i;

	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
	m.bytes = 262144;
	m.start = 100;
	m.end = 200;
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = 41;
	m.correlationId = 647;
	m.runtimeCorrelationId = 9;
	m.graphNodeId = 5;
	m.graphId = 6;
	v = enc1(&e, &m, &b);
	expect(v, S("kind", "gpu_memcpy"), N("device_id", "0"), N("context_id", "1"),
		N("stream_id", "41"), N("correlation_id", "647"), N("runtime_correlation_id", "9"),
		N("graph_node_id", "5"), N("graph_id", "6"), N("start_ns", "100"),
		N("end_ns", "200"), N("bytes", "262144"), N("copy_kind", "2"), N("src_kind", "3"),
		N("dst_kind", "1"), N("flags", "1"));
	ck_assert(YAJL_IS_NULL(member(v, "annotation")));
	/* Kineto's name: "Memcpy {kind} ({src} -> {dst})" */
	ck_assert_str_eq(str(v, "name"), "Memcpy DtoH (Device -> Pageable)");
	ck_assert_uint_eq(nmembers(v), 17);
	yajl_tree_free(v);
	for (i = 0; i < sizeof memcpy_names / sizeof memcpy_names[0]; i++) {
		m.copyKind = memcpy_names[i].copy;
		m.srcKind = memcpy_names[i].src;
		m.dstKind = memcpy_names[i].dst;
		expect_enc(&e, &m, &b, S("name", memcpy_names[i].name));
	}

	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0xab;
	s.bytes = 1ull << 40;
	s.start = 300;
	s.end = 301;
	s.deviceId = 1;
	s.contextId = 2;
	s.streamId = 13;
	s.correlationId = 77;
	s.flags = 1;
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	v = enc1(&e, &s, &b);
	expect(v, S("kind", "gpu_memset"), N("device_id", "1"), N("context_id", "2"),
		N("stream_id", "13"), N("correlation_id", "77"), N("graph_node_id", "0"),
		N("graph_id", "0"), N("start_ns", "300"), N("end_ns", "301"),
		N("bytes", "1099511627776"), N("value", "171"), N("memory_kind", "3"),
		N("flags", "1"));
	/* Kineto's name: "Memset ({memory kind})" */
	ck_assert_str_eq(str(v, "name"), "Memset (Device)");
	ck_assert_uint_eq(nmembers(v), 15);
	yajl_tree_free(v);
	s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
	expect_enc(&e, &s, &b, S("name", "Memset (Managed)"));
	ck_assert_uint_eq(e.count[CREC_EV_MEMCPY], 3);
	ck_assert_uint_eq(e.count[CREC_EV_MEMSET], 2);
	/* devices 0 (the copies) and 1 (the sets) */
	ck_assert_uint_eq(e.devices[0], 3);
	crec_jbuf_free(&b);
}
END_TEST

/* API records and the names they get from fake_api_name (in this order, the
 * runtime's first: the last row is the one encoded again without names). */
static const struct {
	CUpti_ActivityKind kind;
	uint32_t cbid;
	const char *ev_kind, *name;
} api_names[] = {
	/* only the version suffix goes; "_v" without digits stays; unknown to CUPTI */
	{ CUPTI_ACTIVITY_KIND_RUNTIME, 1000, "cuda_runtime", "cudaThing_ptsz" },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, 1001, "cuda_runtime", "cudaOdd_vx" },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, 999, "cuda_runtime", "cbid_999" },
	{ CUPTI_ACTIVITY_KIND_DRIVER, 307, "cuda_driver", "cuLaunchKernel" },
	{ CUPTI_ACTIVITY_KIND_DRIVER, 276, "cuda_driver", "cuMemcpyHtoD" },
};

START_TEST(test_encode_api)
{
	CUpti_ActivityAPI a;
	crec_enc e = new_enc();
	crec_jbuf b = { 0 };
	yajl_val v;
	size_t i;

	memset(&a, 0, sizeof a);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = 211;
	a.start = 1795974781931935681ull;
	a.end = 1795974781931943157ull;
	a.processId = 470;
	a.threadId = 4294967295u;   /* u32 max passes as unsigned */
	a.correlationId = 317;
	a.returnValue = 2;
	v = enc1(&e, &a, &b);
	expect(v, S("kind", "cuda_runtime"), N("cbid", "211"), N("start_ns", "1795974781931935681"),
		N("end_ns", "1795974781931943157"), N("process_id", "470"),
		N("thread_id", "4294967295"), N("correlation_id", "317"), N("return_value", "2"),
		S("name", "cudaLaunchKernel"));
	ck_assert_uint_eq(nmembers(v), 9);
	yajl_tree_free(v);

	/* the names of the other callbacks: a row each, encoded in turn */
	for (i = 0; i < sizeof api_names / sizeof api_names[0]; i++) {
		a.kind = api_names[i].kind;
		a.cbid = api_names[i].cbid;
		v = enc1(&e, &a, &b);
		ck_assert_msg(strcmp(str(v, "kind"), api_names[i].ev_kind) == 0 &&
				      strcmp(str(v, "name"), api_names[i].name) == 0,
			      "cbid %u: %s \"%s\", wanted %s \"%s\"", (unsigned)a.cbid, str(v, "kind"),
			      str(v, "name"), api_names[i].ev_kind, api_names[i].name);
		yajl_tree_free(v);
	}
	ck_assert_uint_eq(e.count[CREC_EV_RUNTIME], 4);
	ck_assert_uint_eq(e.count[CREC_EV_DRIVER], 2);

	/* without a name source every API record is cbid_N */
	e.api_name = NULL;
	expect_enc(&e, &a, &b, S("name", "cbid_276"));
	crec_jbuf_free(&b);
}
END_TEST

START_TEST(test_encode_other_kinds)
{
	CUpti_ActivityExternalCorrelation x;
	CUpti_ActivityOverhead3 o;
	CUpti_ActivitySynchronization2 s;
	CUpti_ActivityCudaEvent2 c;
	CUpti_ActivityAPI unknown;
	crec_enc e = new_enc();
	crec_jbuf b = { 0 };
	yajl_val v;

	memset(&x, 0, sizeof x);
	x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
	x.externalId = UINT64_MAX;
	x.correlationId = 15;
	v = enc1(&e, &x, &b);
	expect(v, S("kind", "external_correlation"), N("external_kind", "4"),
		N("external_id", "18446744073709551615"), N("correlation_id", "15"),
		S("name", "external_correlation"));
	ck_assert_uint_eq(nmembers(v), 5);
	yajl_tree_free(v);

	memset(&o, 0, sizeof o);
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD;
	o.objectId.pt.processId = 470;
	o.objectId.pt.threadId = 507;
	o.start = 10;
	o.end = 20;
	o.correlationId = 0;
	v = enc1(&e, &o, &b);
	expect(v, S("kind", "overhead"), N("overhead_kind", "458752"), N("object_kind", "2"),
		N("object_id", "507"), N("start_ns", "10"), N("end_ns", "20"),
		N("correlation_id", "0"));
	/* the reference merge recognises the trailing request by this name */
	ck_assert_str_eq(str(v, "name"), "Activity Buffer Request");
	ck_assert_uint_eq(nmembers(v), 8);
	yajl_tree_free(v);
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
	o.objectId.dcs.deviceId = 1;
	o.objectId.dcs.contextId = 2;
	o.objectId.dcs.streamId = 3;
	expect_enc(&e, &o, &b, S("name", "Buffer Flush"), N("object_id", "3"));
	ck_assert_str_eq(crec_overhead_name(12345), "Unknown");
	ck_assert_str_eq(crec_overhead_name(CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER), "Driver Compiler");

	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 5;
	s.end = 9;
	s.correlationId = 88;
	s.contextId = 1;
	s.streamId = 7;
	s.cudaEventId = UINT32_MAX;
	expect_enc(&e, &s, &b, S("kind", "cuda_sync"), N("sync_type", "3"), N("start_ns", "5"), N("end_ns", "9"),
		   N("correlation_id", "88"), N("stream_id", "7"), N("cuda_event_id", "4294967295"));

	memset(&c, 0, sizeof c);
	c.kind = CUPTI_ACTIVITY_KIND_CUDA_EVENT;
	c.correlationId = 3;
	c.contextId = 1;
	c.streamId = 7;
	c.eventId = 11;
	c.deviceId = 0;
	expect_enc(&e, &c, &b, S("kind", "cuda_event"), N("event_id", "11"), N("correlation_id", "3"));

	memset(&unknown, 0, sizeof unknown);
	unknown.kind = CUPTI_ACTIVITY_KIND_MEMORY;
	ck_assert_ptr_null(enc1(&e, &unknown, &b));
	ck_assert_uint_eq(e.unknown, 1);
	ck_assert_uint_eq(e.count[CREC_EV_EXTCORR], 1);
	ck_assert_uint_eq(e.count[CREC_EV_OVERHEAD], 2);
	ck_assert_uint_eq(e.count[CREC_EV_SYNC], 1);
	ck_assert_uint_eq(e.count[CREC_EV_EVENT], 1);
	crec_jbuf_free(&b);
}
END_TEST

/* cuda_sync's device_id (window format 2): the device of its context, from the
 * context -> device map kernels, copies, sets and CONTEXT records fill. */
START_TEST(test_encode_sync_device)
{
	static crec_ctxmap map;
	CUpti_ActivitySynchronization2 s;
	CUpti_ActivityKernel10 k;
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityContext3 c;
	crec_enc e = new_enc();
	crec_jbuf b = { 0 };
	yajl_val v;
	uint32_t i, dev;

	memset(&map, 0, sizeof map);
	e.ctxmap = &map;
	memset(&s, 0, sizeof s);
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	s.start = 5;
	s.end = 9;
	s.correlationId = 88;
	s.contextId = 1;
	s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
	/* nothing known of context 1 yet: no device_id rather than a guess */
	v = enc1(&e, &s, &b);
	ck_assert_str_eq(str(v, "kind"), "cuda_sync");
	ck_assert_ptr_null(member(v, "device_id"));
	ck_assert_uint_eq(nmembers(v), 10);
	yajl_tree_free(v);

	/* a kernel of context 1 on device 2 teaches it */
	memset(&k, 0, sizeof k);
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.contextId = 1;
	k.deviceId = 2;
	k.start = 1;
	k.end = 2;
	v = enc1(&e, &k, &b);
	yajl_tree_free(v);
	v = enc1(&e, &s, &b);
	expect(v, N("device_id", "2"), N("context_id", "1"), N("stream_id", "4294967295"));
	ck_assert_uint_eq(nmembers(v), 11);
	yajl_tree_free(v);

	/* the first pair seen for a context wins */
	memset(&m, 0, sizeof m);
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.contextId = 1;
	m.deviceId = 7;
	m.start = 1;
	m.end = 2;
	v = enc1(&e, &m, &b);
	yajl_tree_free(v);
	expect_enc(&e, &s, &b, N("device_id", "2"));

	/* a CONTEXT record writes nothing, is not an unknown kind, and names
	 * its context's device and the device itself */
	memset(&c, 0, sizeof c);
	c.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
	c.contextId = 5;
	c.deviceId = 1;
	ck_assert_ptr_null(enc1(&e, &c, &b));
	ck_assert_uint_eq(e.unknown, 0);
	ck_assert_uint_eq(e.devices[0], (1u << 1) | (1u << 2) | (1u << 7));
	s.contextId = 5;
	expect_enc(&e, &s, &b, N("device_id", "1"));
	ck_assert_uint_eq(e.count[CREC_EV_SYNC], 4);

	/* without a map: never a device_id */
	e.ctxmap = NULL;
	v = enc1(&e, &s, &b);
	ck_assert_ptr_null(member(v, "device_id"));
	yajl_tree_free(v);

	/* a device id beyond the tracked set is written, not noted */
	k.deviceId = CREC_MAX_DEVICES;
	expect_enc(&e, &k, &b, N("device_id", "256"));
	v = enc1(&e, &k, &b);
	yajl_tree_free(v);
	/* and nothing beyond the set is touched (the counters follow it) */
	ck_assert_uint_eq(e.count[CREC_EV_KERNEL], 3);
	ck_assert_uint_eq(e.devices[0], (1u << 1) | (1u << 2) | (1u << 7));
	ck_assert_uint_eq(e.devices[1] | e.devices[2] | e.devices[3], 0);
	k.deviceId = CREC_MAX_DEVICES - 1;
	v = enc1(&e, &k, &b);
	yajl_tree_free(v);
	ck_assert_uint_eq(e.devices[3], 1ull << 63);

	/* the map holds CREC_CTXMAP_CAP contexts, then takes no more */
	ck_assert_uint_eq(map.n, 2);
	for (i = 100; map.n < CREC_CTXMAP_CAP; i++)
		crec_ctxmap_put(&map, i, i % 8);
	crec_ctxmap_put(&map, 99999, 3);
	ck_assert_uint_eq(map.n, CREC_CTXMAP_CAP);
	ck_assert_int_eq(crec_ctxmap_get(&map, 99999, &dev), 0);
	ck_assert_int_eq(crec_ctxmap_get(&map, i - 1, &dev), 1);
	ck_assert_uint_eq(dev, (i - 1) % 8);
	ck_assert_int_eq(crec_ctxmap_get(&map, 5, &dev), 1);
	ck_assert_uint_eq(dev, 1);
	crec_jbuf_free(&b);
}
END_TEST

/* ---- clock ----------------------------------------------------------------------- */

START_TEST(test_clock_identity)
{
	crec_clock k;

	/* CUPTI on its default clock: a few µs apart from realtime */
	crec_clock_init(&k, 1759300079000000000ull, 1759300079000003000ull);
	ck_assert_int_eq(k.foreign, 0);
	ck_assert_uint_eq(crec_clock_map(&k, 1759300079123456789ull), 1759300079123456789ull);
	crec_clock_sample(&k, 1, 2);   /* ignored */
	ck_assert_uint_eq(crec_clock_map(&k, 42), 42);
	ck_assert_uint_eq(crec_clock_span_ns(&k), 0);
}
END_TEST

START_TEST(test_clock_foreign)
{
	const uint64_t r0 = 1759300079000000000ull, c0 = 5000000000000ull;
	crec_clock k;

	/* TSC-like: 2.5 ticks per ns */
	crec_clock_init(&k, c0, r0);
	ck_assert_int_eq(k.foreign, 1);
	/* one sample: offset only */
	ck_assert_uint_eq(crec_clock_map(&k, c0 + 1000), r0 + 1000);
	crec_clock_sample(&k, c0 + 2500000000ull, r0 + 1000000000ull);
	ck_assert_uint_eq(crec_clock_span_ns(&k), 1000000000ull);
	ck_assert_uint_eq(crec_clock_map(&k, c0), r0);
	ck_assert_uint_eq(crec_clock_map(&k, c0 + 1250000000ull), r0 + 500000000ull);
	ck_assert_uint_eq(crec_clock_map(&k, c0 + 2500000000ull), r0 + 1000000000ull);
	/* before the first sample (records queued before the window) */
	ck_assert_uint_eq(crec_clock_map(&k, c0 - 2500), r0 - 1000);
	/* CUPTI's "not recorded" stays 0 */
	ck_assert_uint_eq(crec_clock_map(&k, 0), 0);
	/* a sample that goes backwards is ignored */
	crec_clock_sample(&k, c0 - 10, r0 + 5);
	ck_assert_uint_eq(crec_clock_map(&k, c0 + 1250000000ull), r0 + 500000000ull);
}
END_TEST

START_TEST(test_encode_applies_clock)
{
	const uint64_t r0 = 1759300079000000000ull, c0 = 5000000000000ull;
	CUpti_ActivityAPI a;
	crec_enc e = new_enc();
	crec_jbuf b = { 0 };
	crec_clock k;
	yajl_val v;

	crec_clock_init(&k, c0, r0);
	crec_clock_sample(&k, c0 + 2000000, r0 + 1000000);  /* 2 ticks per ns */
	e.clock = &k;
	memset(&a, 0, sizeof a);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = 211;
	a.start = c0 + 200;
	a.end = c0 + 1000;
	v = enc1(&e, &a, &b);
	ck_assert_str_eq(num(v, "start_ns"), "1759300079000000100");
	ck_assert_str_eq(num(v, "end_ns"), "1759300079000000500");
	yajl_tree_free(v);
	crec_jbuf_free(&b);
}
END_TEST

/* ---- pool and queue ----------------------------------------------------------------- */

START_TEST(test_pool_exhaustion)
{
	crec_pool *p = crec_pool_create(3, 4100);
	uint8_t *a, *b, *c, *d;

	ck_assert_ptr_nonnull(p);
	ck_assert_uint_eq(crec_pool_bufsize(p), 4096);   /* rounded to 8 */
	a = crec_pool_get(p);
	b = crec_pool_get(p);
	c = crec_pool_get(p);
	ck_assert(a && b && c && a != b && b != c && a != c);
	ck_assert_uint_eq((uintptr_t)a % 8, 0);
	ck_assert_uint_eq((uintptr_t)b % 8, 0);
	ck_assert_uint_eq(crec_pool_in_use(p), 3);
	/* empty: NULL (CUPTI then drops and counts), never a new allocation */
	d = crec_pool_get(p);
	ck_assert_ptr_null(d);
	ck_assert_ptr_null(crec_pool_get(p));
	ck_assert_uint_eq(crec_pool_misses(p), 2);
	memset(b, 0x5a, 4096);   /* the whole advertised size is usable */
	crec_pool_put(p, b);
	ck_assert_uint_eq(crec_pool_in_use(p), 2);
	d = crec_pool_get(p);
	ck_assert_ptr_eq(d, b);  /* recycled, not new */
	ck_assert_ptr_null(crec_pool_get(p));
	crec_pool_put(p, a);
	crec_pool_put(p, c);
	crec_pool_put(p, d);
	ck_assert_uint_eq(crec_pool_in_use(p), 0);
	crec_pool_destroy(p);
	ck_assert_ptr_null(crec_pool_create(0, 4096));
	ck_assert_ptr_null(crec_pool_create(2, 100));
}
END_TEST

static crec_pool *hp;
static int held, max_held;
static pthread_mutex_t held_mu = PTHREAD_MUTEX_INITIALIZER;

static void *hammer(void *arg)
{
	int i;

	for (i = 0; i < 20000; i++) {
		uint8_t *b = crec_pool_get(hp);
		if (!b)
			continue;
		pthread_mutex_lock(&held_mu);
		if (++held > max_held)
			max_held = held;
		pthread_mutex_unlock(&held_mu);
		/* a buffer must never be handed to two holders */
		ck_assert_int_eq(b[0], 0);
		b[0] = 1;
		b[0] = 0;
		pthread_mutex_lock(&held_mu);
		held--;
		pthread_mutex_unlock(&held_mu);
		crec_pool_put(hp, b);
	}
	return NULL;
}

START_TEST(test_pool_threads)
{
	pthread_t t[8];
	int i;

	uint8_t *bs[4];

	hp = crec_pool_create(4, 1024);
	for (i = 0; i < 4; i++) {   /* allocate all four and zero them */
		bs[i] = crec_pool_get(hp);
		ck_assert_ptr_nonnull(bs[i]);
		memset(bs[i], 0, 1024);
	}
	for (i = 0; i < 4; i++)
		crec_pool_put(hp, bs[i]);
	for (i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, hammer, NULL);
	for (i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	ck_assert_int_le(max_held, 4);
	ck_assert_uint_eq(crec_pool_in_use(hp), 0);
	crec_pool_destroy(hp);
}
END_TEST

START_TEST(test_queue)
{
	crec_queue *q = crec_queue_create(3);
	crec_item it = { .kind = CREC_ITEM_BUFFER }, out;
	struct timespec dl;
	int i;

	for (i = 0; i < 3; i++) {
		it.valid = (size_t)i;
		ck_assert_int_eq(crec_queue_push(q, &it), 0);
	}
	ck_assert_int_eq(crec_queue_push(q, &it), -1);   /* full: never blocks */
	for (i = 0; i < 3; i++) {
		ck_assert_int_eq(crec_queue_pop(q, &out, NULL), 0);
		ck_assert_uint_eq(out.valid, (size_t)i);     /* FIFO */
	}
	crec_deadline(&dl, 0.05);
	ck_assert_int_eq(crec_queue_pop(q, &out, &dl), -1);
	crec_deadline(&dl, 0.05);
	ck_assert_int_eq(crec_queue_wait_mark(q, 1, &dl), -1);
	crec_queue_ack(q, 2);
	crec_deadline(&dl, 0.05);
	ck_assert_int_eq(crec_queue_wait_mark(q, 1, &dl), 0);
	ck_assert_int_eq(crec_queue_wait_mark(q, 2, &dl), 0);
	crec_queue_destroy(q);
}
END_TEST

/* ---- annotations and thread map ------------------------------------------------- */

START_TEST(test_annot)
{
	crec_annot *a = crec_annot_create(2, 3);
	crec_jbuf b = { 0 };
	uint64_t outer, i1, i2, i3, i4;
	yajl_val v;

	outer = crec_annot_push(a, "outer \"x\"");  /* before the window, still open */
	ck_assert_uint_eq(outer, CREC_ANNOT_FIRST_ID);
	crec_annot_window_begin(a);
	i1 = crec_annot_push(a, "step");
	crec_annot_pop(a, i1);
	i2 = crec_annot_push(a, "step");   /* same name, new id */
	crec_annot_pop(a, i2);
	ck_assert_uint_eq(i1, CREC_ANNOT_FIRST_ID + 1);
	ck_assert_uint_eq(i2, CREC_ANNOT_FIRST_ID + 2);
	i3 = crec_annot_push(a, "third");  /* name table (2) is full */
	crec_annot_pop(a, i3);
	i4 = crec_annot_push(a, "step");   /* window table (3) is full */
	crec_annot_pop(a, i4);
	ck_assert_uint_eq(crec_annot_window_end(a, &b), 2);
	v = parse(jtext(&b));
	ck_assert_uint_eq(nmembers(v), 3);
	expect(v, S("1099511627776", "outer \"x\""), S("1099511627777", "step"),
		S("1099511627778", "step"));
	yajl_tree_free(v);

	/* the next window starts with the still-open outer annotation only */
	crec_annot_pop(a, 999);   /* unknown: harmless */
	crec_annot_window_begin(a);
	b.len = 0;
	ck_assert_uint_eq(crec_annot_window_end(a, &b), 0);
	ck_assert_str_eq(jtext(&b), "{\"1099511627776\": \"outer \\\"x\\\"\"}");
	crec_annot_pop(a, outer);
	crec_annot_window_begin(a);
	b.len = 0;
	crec_annot_window_end(a, &b);
	ck_assert_str_eq(jtext(&b), "{}");
	/* pushes outside a window are not listed */
	crec_annot_pop(a, crec_annot_push(a, "step"));
	crec_annot_window_begin(a);
	b.len = 0;
	crec_annot_window_end(a, &b);
	ck_assert_str_eq(jtext(&b), "{}");
	crec_jbuf_free(&b);
	crec_annot_destroy(a);
}
END_TEST

START_TEST(test_annot_long_name)
{
	crec_annot *a = crec_annot_create(4, 4);
	crec_jbuf b = { 0 };
	char name[CREC_ANNOT_NAME_MAX + 10];
	yajl_val v;

	/* 'a' then 2-byte é's across the cut: the cut must not split one */
	memset(name, 0, sizeof name);
	name[0] = 'a';
	for (size_t i = 1; i + 1 < sizeof name - 1; i += 2) {
		name[i] = (char)0xc3;
		name[i + 1] = (char)0xa9;
	}
	crec_annot_window_begin(a);
	crec_annot_push(a, name);
	crec_annot_push(a, NULL);
	crec_annot_window_end(a, &b);
	v = parse(jtext(&b));
	ck_assert_uint_eq(strlen(str(v, "1099511627776")), CREC_ANNOT_NAME_MAX - 1);
	ck_assert_str_eq(str(v, "1099511627777"), "");
	yajl_tree_free(v);
	crec_jbuf_free(&b);
	crec_annot_destroy(a);
}
END_TEST

START_TEST(test_tmap)
{
	crec_tmap *m = crec_tmap_create(3);
	crec_jbuf b = { 0 };
	yajl_val v, p;

	ck_assert_int_eq(crec_tmap_add(m, 2096292160, 470), 0);
	ck_assert_int_eq(crec_tmap_add(m, 2096292160, 470), 0);   /* unchanged */
	ck_assert_int_eq(crec_tmap_add(m, -585124160, 578), 0);
	ck_assert_int_eq(crec_tmap_add(m, 4000, 507), 0);          /* looks like a gettid */
	ck_assert_int_eq(crec_tmap_add(m, 77, 1), -1);             /* full */
	ck_assert_int_eq(crec_tmap_add(m, -585124160, 611), 1);    /* reused pthread_t */
	ck_assert_uint_eq(crec_tmap_count(m), 3);

	ck_assert_uint_eq(crec_tmap_write_json(m, 470, 0, 4194304, &b), 0);
	v = parse(jtext(&b));
	ck_assert_uint_eq(nmembers(v), 1);
	p = member(v, "470");
	ck_assert_uint_eq(nmembers(p), 3);
	expect(p, N("2096292160", "470"), N("-585124160", "611"), N("4000", "507"));
	yajl_tree_free(v);

	/* with gettid in the records, a key that could be a gettid is omitted */
	b.len = 0;
	ck_assert_uint_eq(crec_tmap_write_json(m, 470, 1, 4194304, &b), 1);
	v = parse(jtext(&b));
	p = member(v, "470");
	ck_assert_uint_eq(nmembers(p), 2);
	ck_assert_ptr_null(member(p, "4000"));
	yajl_tree_free(v);
	b.len = 0;
	ck_assert_uint_eq(crec_tmap_write_json(m, 470, 1, 3000, &b), 0);  /* 4000 > pid_max */

	crec_tmap_reset(m);
	b.len = 0;
	crec_tmap_write_json(m, 5, 1, 100, &b);
	ck_assert_str_eq(jtext(&b), "{\"5\": {}}");
	crec_jbuf_free(&b);
	crec_tmap_destroy(m);
}
END_TEST

/* ---- the window writer ----------------------------------------------------------- */

/* A hand-made "activity buffer": an array of record pointers, walked by
 * walk_next the way cuptiActivityGetNextRecord walks CUPTI's buffers. */
static int walk_next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	CUpti_Activity **recs = (CUpti_Activity **)(void *)buf;
	size_t n = valid / sizeof *recs, i = 0;

	if (*rec) {
		while (i < n && recs[i] != *rec)
			i++;
		i++;
	}
	if (i >= n)
		return 0;
	*rec = recs[i];
	return 1;
}

/* Records that fit the CPU-trace fixture tests/cuptirec/cpu.json (pid 4242,
 * base 1759300074000000000 ns, aten::mm with External id 2 on tid 4242). */
static CUpti_ActivityAPI w_launch, w_worker_launch, w_getdev;
static CUpti_ActivityKernel10 w_kernel, w_worker_kernel, w_incomplete;
static CUpti_ActivityExternalCorrelation w_ext_op, w_ext_user;
static CUpti_ActivityOverhead3 w_overhead;
static CUpti_Activity *w_buf1[5], *w_buf2[4];

static void window_records(void)
{
	memset(&w_launch, 0, sizeof w_launch);
	w_launch.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	w_launch.cbid = 211;              /* cudaLaunchKernel */
	w_launch.start = 1759300079000020000ull;
	w_launch.end = 1759300079000025000ull;
	w_launch.processId = 4242;
	w_launch.threadId = 4242;
	w_launch.correlationId = 101;
	w_worker_launch = w_launch;       /* a worker thread, by its gettid */
	w_worker_launch.threadId = 4300;
	w_worker_launch.correlationId = 102;
	w_worker_launch.start += 100000;
	w_worker_launch.end += 100000;
	w_getdev = w_launch;              /* blocked by name in the merge */
	w_getdev.cbid = 17;
	w_getdev.correlationId = 103;

	memset(&w_kernel, 0, sizeof w_kernel);
	w_kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	w_kernel.deviceId = 0;
	w_kernel.contextId = 1;
	w_kernel.streamId = 7;
	w_kernel.correlationId = 101;
	w_kernel.start = 1759300079000030000ull;
	w_kernel.end = 1759300079000040000ull;
	w_kernel.name = "_Z6addonePfi";
	w_worker_kernel = w_kernel;
	w_worker_kernel.streamId = 13;
	w_worker_kernel.correlationId = 102;
	w_worker_kernel.start += 100000;
	w_worker_kernel.end += 100000;
	w_incomplete = w_kernel;
	w_incomplete.start = 0;

	memset(&w_ext_op, 0, sizeof w_ext_op);
	w_ext_op.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	w_ext_op.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
	w_ext_op.externalId = 2;          /* aten::mm */
	w_ext_op.correlationId = 101;
	w_ext_user = w_ext_op;
	w_ext_user.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
	w_ext_user.externalId = CREC_ANNOT_FIRST_ID;  /* our user annotation "my_region" */
	w_ext_user.correlationId = 102;

	memset(&w_overhead, 0, sizeof w_overhead);
	w_overhead.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	w_overhead.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	w_overhead.start = 1759300079000050000ull;
	w_overhead.end = 1759300079000051000ull;

	w_buf1[0] = (CUpti_Activity *)&w_ext_op;
	w_buf1[1] = (CUpti_Activity *)&w_launch;
	w_buf1[2] = (CUpti_Activity *)&w_getdev;
	w_buf1[3] = (CUpti_Activity *)&w_incomplete;
	w_buf1[4] = (CUpti_Activity *)&w_kernel;
	w_buf2[0] = (CUpti_Activity *)&w_ext_user;
	w_buf2[1] = (CUpti_Activity *)&w_worker_launch;
	w_buf2[2] = (CUpti_Activity *)&w_worker_kernel;
	w_buf2[3] = (CUpti_Activity *)&w_overhead;
}

/* Where and when the test window was recorded. */
static const crec_source w_source = {
	.host = "gpu01", .pid = 4242, .rank = 3, .rank_from = "RANK",
	.start_ns = 1759300079000000000ull, .end_ns = 1759300080000000000ull,
};

/* Write the test window into PATH; returns crec_window_close's result. */
static int write_test_window(const char *path, int gzip)
{
	char err[512] = "";
	crec_enc e = new_enc();
	crec_window *w;
	crec_trailer t = {
		.user_annotations = "{\"1099511627776\": \"my_region\"}",
		.thread_resource_map = "{\"4242\": {\"-268430796\": 4300}}",
		.start_ns = 1759300079000000000ull,
		.dropped_records = 3,
		.window_version = 2,
		.device_properties = "[{\"id\": 0, \"name\": \"NVIDIA H200\", \"numSms\": 132}]",
		.source = &w_source,
		.extra = "\"cuptirec\": {\"version\": \"test\"}",
	};
	int rc;

	window_records();
	w = crec_window_open(path, gzip, CREC_FIFO_WAIT_DEFAULT, err, sizeof err);
	ck_assert_msg(w != NULL, "open: %s", err);
	ck_assert_int_eq(crec_window_add_buffer(w, &e, (uint8_t *)w_buf1, sizeof w_buf1, walk_next), 4);
	ck_assert_int_eq(crec_window_add_buffer(w, &e, (uint8_t *)w_buf2, sizeof w_buf2, walk_next), 4);
	ck_assert_int_eq(crec_window_add_buffer(w, &e, (uint8_t *)w_buf2, 0, walk_next), 0);  /* empty */
	ck_assert_uint_eq(crec_window_events(w), 8);
	ck_assert_uint_eq(e.incomplete, 1);
	rc = crec_window_close(w, &t, err, sizeof err);
	ck_assert_msg(rc == 0, "close: %s", err);
	return rc;
}

/* Check the window file's content against the records written. */
static void check_test_window(const char *path)
{
	char *text = slurp(path);
	yajl_val v = parse(text), ev, e0, m;
	const char *order[] = { "{\"events\"", "\n\"user_annotations\"", "\n\"thread_resource_map\"",
				"\n\"start_ns\"", "\n\"dropped_records\"", "\n\"window_version\"",
				"\n\"device_properties\"", "\n\"source\"", "\n\"cuptirec\"" };
	const char *prev = text;
	size_t i;

	/* members in the streaming order of WINDOW-FORMAT.md, then ours */
	for (i = 0; i < sizeof order / sizeof order[0]; i++) {
		const char *at = strstr(text, order[i]);
		ck_assert_msg(at && at >= prev, "%s out of order", order[i]);
		prev = at;
	}
	ev = member(v, "events");
	ck_assert(YAJL_IS_ARRAY(ev));
	ck_assert_uint_eq(ev->u.array.len, 8);
	e0 = ev->u.array.values[0];
	ck_assert_str_eq(str(e0, "kind"), "external_correlation");
	ck_assert_str_eq(str(ev->u.array.values[1], "name"), "cudaLaunchKernel");
	ck_assert_str_eq(str(ev->u.array.values[3], "name"), "addone(float*, int)");
	ck_assert_str_eq(str(ev->u.array.values[7], "kind"), "overhead");
	m = member(v, "user_annotations");
	ck_assert_str_eq(str(m, "1099511627776"), "my_region");
	m = member(v, "thread_resource_map");
	ck_assert_str_eq(num(member(m, "4242"), "-268430796"), "4300");
	expect(v, N("start_ns", "1759300079000000000"), N("dropped_records", "3"),
		N("window_version", "2"));
	m = member(v, "device_properties");
	ck_assert(m && YAJL_IS_ARRAY(m));
	ck_assert_uint_eq(m->u.array.len, 1);
	ck_assert_str_eq(str(m->u.array.values[0], "name"), "NVIDIA H200");
	ck_assert_str_eq(num(m->u.array.values[0], "numSms"), "132");
	m = member(v, "source");
	ck_assert(m && YAJL_IS_OBJECT(m));
	expect(m, S("host", "gpu01"), N("pid", "4242"), N("rank", "3"), S("rank_from", "RANK"),
		N("start_ns", "1759300079000000000"), N("end_ns", "1759300080000000000"));
	yajl_tree_free(v);
	free(text);
}

/* An empty window with trailer T written to PATH and read back: its tree
 * (the caller frees it). */
static yajl_val empty_window(const char *path, const crec_trailer *t)
{
	char err[256] = "";
	crec_window *w = crec_window_open(path, 0, CREC_FIFO_WAIT_DEFAULT, err, sizeof err);
	yajl_val v;
	char *text;

	ck_assert_msg(w != NULL, "open: %s", err);
	ck_assert_msg(crec_window_close(w, t, err, sizeof err) == 0, "close: %s", err);
	text = slurp(path);
	v = parse(text);
	free(text);
	return v;
}

/* "source" without a rank or a host name leaves those members out, and a
 * host name is a JSON string whatever its bytes */
START_TEST(test_window_source)
{
	static const char *const none[] = { "rank", "rank_from", "host" };
	crec_source src = { .host = NULL, .pid = 77, .rank = -1, .start_ns = 5, .end_ns = 9 };
	crec_trailer t = { .source = &src };
	char path[300];
	yajl_val v, m;
	size_t i;

	snprintf(path, sizeof path, "%s/s.json", check_tmpdir);
	v = empty_window(path, &t);
	m = member(v, "source");
	ck_assert(m && YAJL_IS_OBJECT(m));
	ck_assert_uint_eq(m->u.object.len, 3);
	expect(m, N("pid", "77"), N("start_ns", "5"), N("end_ns", "9"));
	for (i = 0; i < sizeof none / sizeof none[0]; i++)
		ck_assert_ptr_null(member(m, none[i]));
	yajl_tree_free(v);

	src.host = "a\"b\\c";
	src.rank = 0;
	src.rank_from = "SLURM_PROCID";
	v = empty_window(path, &t);
	m = member(v, "source");
	expect(m, S("host", "a\"b\\c"), N("rank", "0"), S("rank_from", "SLURM_PROCID"));
	yajl_tree_free(v);

	t.source = NULL; /* no "source" at all: the window of before */
	v = empty_window(path, &t);
	ck_assert_ptr_null(member(v, "source"));
	/* nor a version or device properties: a version-1 window */
	ck_assert_ptr_null(member(v, "window_version"));
	ck_assert_ptr_null(member(v, "device_properties"));
	yajl_tree_free(v);
}
END_TEST

/* The test window written under each name, with -z or without: its first
 * bytes say plain JSON or gzip (readers sniff them), and it reads back as
 * written.  Issue 28 P11: a name ending in .gz means gzip even without -z
 * (gzip = 0), as it does for cuptimerge -o; the README's own example relied
 * on it. */
static const struct {
	const char *name;
	int gzip;    /* crec_window_open's: -z */
	int is_gzip; /* the file's: 1f 8b, else '{' */
} window_files[] = {
	{ "w.json", 0, 0 },
	{ "w.json.gz", 1, 1 },
	{ "named.json.gz", 0, 1 },
};

START_TEST(test_window_file)
{
	char path[300];
	unsigned char magic[2];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s", check_tmpdir, window_files[_i].name);
	write_test_window(path, window_files[_i].gzip);
	f = fopen(path, "rb");
	ck_assert(fread(magic, 1, 2, f) == 2);
	fclose(f);
	if (window_files[_i].is_gzip)
		ck_assert_msg(magic[0] == 0x1f && magic[1] == 0x8b, "%s (gzip %d) is not gzip", path,
			      window_files[_i].gzip);
	else
		ck_assert_msg(magic[0] == '{', "%s (gzip %d) is not plain JSON", path, window_files[_i].gzip);
	check_test_window(path);
}
END_TEST

/* Which names mean gzip: as cuptimerge -o, the case counts. */
static const struct {
	const char *name;
	int is_gz;
} gz_names[] = {
	{ "a.json.gz", 1 }, { "a.json.GZ", 0 }, { "a.json", 0 }, { ".gz", 1 }, { "gz", 0 }, { "a.gzip", 0 },
};

START_TEST(test_path_is_gz)
{
	ck_assert_msg(crec_path_is_gz(gz_names[_i].name) == gz_names[_i].is_gz, "crec_path_is_gz(\"%s\") is not %d",
		      gz_names[_i].name, gz_names[_i].is_gz);
}
END_TEST

/* Fill RECS/PTRS with N runtime records with correlation ids 0..N-1. */
static void many_records(CUpti_ActivityAPI *recs, CUpti_Activity **ptrs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		memset(&recs[i], 0, sizeof recs[i]);
		recs[i].kind = CUPTI_ACTIVITY_KIND_RUNTIME;
		recs[i].cbid = 211;
		recs[i].correlationId = (uint32_t)i;
		recs[i].start = 1000 + (uint64_t)i;
		recs[i].end = 2000 + (uint64_t)i;
		ptrs[i] = (CUpti_Activity *)&recs[i];
	}
}

START_TEST(test_window_big)
{
	/* many buffers of many records: chunked output, gzip across chunks */
	static CUpti_ActivityAPI recs[5000];
	static CUpti_Activity *ptrs[5000];
	char path[300], err[256];
	crec_enc e = new_enc();
	crec_trailer t = { 0 };
	crec_window *w;
	yajl_val v, ev;
	char *text;
	int k;

	many_records(recs, ptrs, 5000);
	snprintf(path, sizeof path, "%s/big.json.gz", check_tmpdir);
	w = crec_window_open(path, 1, CREC_FIFO_WAIT_DEFAULT, err, sizeof err);
	ck_assert_ptr_nonnull(w);
	for (k = 0; k < 20; k++)
		ck_assert_int_eq(crec_window_add_buffer(w, &e, (uint8_t *)ptrs, sizeof ptrs, walk_next), 5000);
	ck_assert_int_eq(crec_window_close(w, &t, err, sizeof err), 0);
	text = slurp(path);
	ck_assert_uint_gt(strlen(text), 8000000);
	v = parse(text);
	ev = member(v, "events");
	ck_assert_uint_eq(ev->u.array.len, 100000);
	ck_assert_str_eq(num(ev->u.array.values[99999], "correlation_id"), "4999");
	ck_assert(YAJL_IS_OBJECT(member(v, "user_annotations")));
	ck_assert(YAJL_IS_OBJECT(member(v, "thread_resource_map")));
	yajl_tree_free(v);
	free(text);
}
END_TEST

START_TEST(test_window_truncated)
{
	/* a killed process: what reached the disk has no trailer, and readers
	 * must see that (the empty file of a very early kill too) */
	static CUpti_ActivityAPI recs[5000];
	static CUpti_Activity *ptrs[5000];
	char path[300], err[256], *text, perr[256];
	crec_enc e = new_enc();
	crec_window *w;

	many_records(recs, ptrs, 5000);
	snprintf(path, sizeof path, "%s/cut.json", check_tmpdir);
	w = crec_window_open(path, 0, CREC_FIFO_WAIT_DEFAULT, err, sizeof err);
	ck_assert_int_eq(crec_window_add_buffer(w, &e, (uint8_t *)ptrs, sizeof ptrs, walk_next), 5000);
	crec_window_abandon(w);
	text = slurp(path);
	ck_assert_uint_gt(strlen(text), 100000);
	ck_assert(strncmp(text, "{\"events\": [\n", 13) == 0);
	ck_assert_ptr_null(yajl_tree_parse(text, perr, sizeof perr));
	free(text);
}
END_TEST

START_TEST(test_window_errors)
{
	char err[512] = "", path[300];
	crec_trailer t = { 0 };
	crec_window *w;
	crec_sink *s;

	snprintf(path, sizeof path, "%s/no/such/dir/w.json", check_tmpdir);
	ck_assert_ptr_null(crec_window_open(path, 0, CREC_FIFO_WAIT_DEFAULT, err, sizeof err));
	ck_assert_ptr_nonnull(strstr(err, "No such file or directory"));
	ck_assert_ptr_nonnull(strstr(err, path));

	/* a full disk is an error at close (or earlier), never silence */
	if (access("/dev/full", W_OK) != 0)
		return;
	w = crec_window_open("/dev/full", 0, CREC_FIFO_WAIT_DEFAULT, err, sizeof err);
	ck_assert_ptr_nonnull(w);
	err[0] = '\0';
	ck_assert_int_eq(crec_window_close(w, &t, err, sizeof err), -1);
	ck_assert_ptr_nonnull(strstr(err, "No space left on device"));
	s = crec_sink_open("/dev/full", 1, err, sizeof err);
	ck_assert_ptr_nonnull(s);
	{
		static char big[1 << 20];
		uint32_t x = 2463534242u;
		int i, failed = 0;
		for (i = 0; i < (int)sizeof big; i++) {   /* xorshift: incompressible */
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			big[i] = (char)x;
		}
		for (i = 0; i < 4 && !failed; i++)
			failed = crec_sink_write(s, big, sizeof big) != 0;
		ck_assert_int_eq(failed, 1);
		ck_assert_int_eq(crec_sink_write(s, "x", 1), -1);   /* sticky */
	}
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), -1);
}
END_TEST

/* F20: the collector runs inside the user's program, which may have closed
 * its standard error; the window must not take descriptor 2, or all the
 * program writes there lands in the window.  Libcheck runs each test in a
 * child, and 2 comes back all the same. */
START_TEST(test_sink_not_on_closed_stderr)
{
	char err[512] = "", path[300], buf[16];
	int saved = dup(2), fd;
	crec_sink *s;
	FILE *f;
	size_t n;

	ck_assert_int_ge(saved, 3);
	snprintf(path, sizeof path, "%s/closed2.json", check_tmpdir);
	close(2);
	s = crec_sink_open(path, 0, err, sizeof err);
	fd = fcntl(2, F_GETFD);   /* still closed: the sink is elsewhere */
	errno = 0;
	n = (size_t)write(2, "X", 1); /* what the program writes goes nowhere */
	dup2(saved, 2);
	close(saved);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(fd, -1);
	ck_assert_int_eq((int)n, -1);
	ck_assert_int_eq(errno, EBADF);
	ck_assert_int_eq(crec_sink_write(s, "abc", 3), 0);
	ck_assert_int_eq(crec_sink_close(s, err, sizeof err), 0);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	ck_assert_int_eq((int)n, 3);
	ck_assert(memcmp(buf, "abc", 3) == 0);

	/* the helper the thread recorder uses too: 0..2 move up, close-on-exec */
	close(0);
	fd = crec_fd_above_std(open(path, O_RDONLY));
	ck_assert_int_ge(fd, 3);
	ck_assert_int_eq(fcntl(0, F_GETFD), -1);
	ck_assert_int_eq(fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	ck_assert_int_eq(crec_fd_above_std(fd), fd);
	close(fd);
	ck_assert_int_eq(crec_fd_above_std(-1), -1);
}
END_TEST

/* ---- readable by cuptimerge ------------------------------------------------------------ */

/* Run ARGV (NULL-terminated) with stdout and stderr to LOG; returns its exit
 * status (or 128 + signal). */
static int run_prog(char *const argv[], const char *log)
{
	pid_t pid = fork();
	int st;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], argv);
		_exit(126);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Find in the merged trace V the X event of category CAT named NAME;
 * returns it or NULL. */
static yajl_val find_x(yajl_val v, const char *cat, const char *name)
{
	yajl_val te = member(v, "traceEvents");
	size_t i;

	for (i = 0; te && i < te->u.array.len; i++) {
		yajl_val e = te->u.array.values[i];
		if (!strcmp(sval(member(e, "cat")), cat) && !strcmp(sval(member(e, "name")), name) &&
		    !strcmp(sval(member(e, "ph")), "X"))
			return e;
	}
	return NULL;
}

/* Count flow events of phase PH with id ID. */
static int count_flow(yajl_val v, const char *ph, long long id)
{
	yajl_val te = member(v, "traceEvents");
	size_t i;
	int n = 0;

	for (i = 0; i < te->u.array.len; i++) {
		yajl_val e = te->u.array.values[i], fid = member(e, "id");
		if (!strcmp(sval(member(e, "ph")), ph) && fid && YAJL_IS_INTEGER(fid) && YAJL_GET_INTEGER(fid) == id)
			n++;
	}
	return n;
}

static void merge_with_cuptimerge(int gzip)
{
	char tool[512], win[300], out[300], log[300], cpu[512];
	yajl_val v, e;
	char *text;

	snprintf(tool, sizeof tool, "%s/src/cuptimerge", CREC_BUILDDIR);
	if (access(tool, X_OK) != 0) {
		fprintf(stderr, "check_collector: %s not built yet; merge check skipped\n", tool);
		return;
	}
	snprintf(cpu, sizeof cpu, "%s/cpu.json", CREC_FIXTUREDIR);
	snprintf(win, sizeof win, "%s/w.json%s", check_tmpdir, gzip ? ".gz" : "");
	snprintf(out, sizeof out, "%s/merged.json", check_tmpdir);
	snprintf(log, sizeof log, "%s/log", check_tmpdir);
	write_test_window(win, gzip);
	{
		char *argv[] = { tool, "-o", out, "-w", win, cpu, NULL };
		int rc = run_prog(argv, log);
		text = slurp(log);
		ck_assert_msg(rc == 0, "cuptimerge exit %d: %s", rc, text);
		free(text);
	}
	text = slurp(out);
	v = parse(text);
	/* the main-thread launch sits on aten::mm's thread (External id 2) */
	e = find_x(v, "cuda_runtime", "cudaLaunchKernel");
	ck_assert_ptr_nonnull(e);
	/* both launches are there; cudaGetDevice is not */
	ck_assert_ptr_null(find_x(v, "cuda_runtime", "cudaGetDevice"));
	{
		yajl_val te = member(v, "traceEvents");
		int main_row = 0, worker_row = 0;
		size_t i;
		for (i = 0; i < te->u.array.len; i++) {
			yajl_val x = te->u.array.values[i], t = member(x, "tid");
			if (strcmp(sval(member(x, "cat")), "cuda_runtime"))
				continue;
			ck_assert(YAJL_IS_INTEGER(t));
			if (YAJL_GET_INTEGER(t) == 4242)
				main_row++;
			else if (YAJL_GET_INTEGER(t) == 4300)
				worker_row++;
			else
				ck_abort_msg("cuda_runtime event on unexpected tid %lld", YAJL_GET_INTEGER(t));
		}
		ck_assert_int_eq(main_row, 1);
		ck_assert_int_eq(worker_row, 1);
	}
	/* kernels on the device rows, demangled, linked to launches by flows */
	e = find_x(v, "kernel", "addone(float*, int)");
	ck_assert_ptr_nonnull(e);
	ck_assert_int_eq(count_flow(v, "s", 101), 1);
	ck_assert_int_eq(count_flow(v, "f", 101), 1);
	ck_assert_int_eq(count_flow(v, "s", 102), 1);
	ck_assert_int_eq(count_flow(v, "f", 102), 1);
	/* the user annotation became a GPU span over the worker's kernel */
	ck_assert_ptr_nonnull(find_x(v, "gpu_user_annotation", "my_region"));
	yajl_tree_free(v);
	free(text);
}

/* The launcher hands its collector options to the library as CUPTIREC_*
 * variables; --latency-timestamps is CUPTIREC_LATENCY_TIMESTAMPS=1.  The
 * command prints what it was given (the launcher needs the built collector to
 * load, so this lives here rather than with the launcher's CUPTI-free tests). */
START_TEST(test_launcher_latency_option)
{
	char tool[512], lib[512], log[300], *text;
	char *with[] = { tool, "-q", "--latency-timestamps", "--", "/bin/sh", "-c",
			 "echo \"lt=${CUPTIREC_LATENCY_TIMESTAMPS-unset}\"", NULL };
	char *without[] = { tool, "-q", "--", "/bin/sh", "-c", "echo \"lt=${CUPTIREC_LATENCY_TIMESTAMPS-unset}\"",
			    NULL };

	snprintf(tool, sizeof tool, "%s/cuptirec", CREC_BUILDDIR);
	snprintf(lib, sizeof lib, "%s/.libs/libcuptirec.so", CREC_BUILDDIR);
	snprintf(log, sizeof log, "%s/log", check_tmpdir);
	if (access(tool, X_OK) != 0 || access(lib, R_OK) != 0) {
		fprintf(stderr, "check_collector: launcher or collector not built; option check skipped\n");
		return;
	}
	unsetenv("CUPTIREC_LATENCY_TIMESTAMPS");
	ck_assert_int_eq(run_prog(with, log), 0);
	text = slurp(log);
	ck_assert_str_eq(text, "lt=1\n");
	free(text);
	ck_assert_int_eq(run_prog(without, log), 0);
	text = slurp(log);
	ck_assert_str_eq(text, "lt=unset\n");
	free(text);
}
END_TEST

START_TEST(test_cuptimerge_reads_window)
{
	merge_with_cuptimerge(0);
}
END_TEST

START_TEST(test_cuptimerge_reads_gzip_window)
{
	merge_with_cuptimerge(1);
}
END_TEST

START_TEST(test_cuptimerge_rejects_truncated)
{
	char tool[512], win[300], out[300], log[300], cpu[512], err[256];
	crec_enc e = new_enc();
	crec_window *w;
	int rc;

	snprintf(tool, sizeof tool, "%s/src/cuptimerge", CREC_BUILDDIR);
	if (access(tool, X_OK) != 0)
		return;
	window_records();
	snprintf(cpu, sizeof cpu, "%s/cpu.json", CREC_FIXTUREDIR);
	snprintf(win, sizeof win, "%s/cut.json", check_tmpdir);
	snprintf(out, sizeof out, "%s/merged.json", check_tmpdir);
	snprintf(log, sizeof log, "%s/log", check_tmpdir);
	w = crec_window_open(win, 0, CREC_FIFO_WAIT_DEFAULT, err, sizeof err);
	crec_window_add_buffer(w, &e, (uint8_t *)w_buf1, sizeof w_buf1, walk_next);
	crec_window_abandon(w);
	{
		char *argv[] = { tool, "-o", out, "-w", win, cpu, NULL };
		rc = run_prog(argv, log);
	}
	ck_assert_int_ne(rc, 0);   /* a partial window is an error, not a short one */
}
END_TEST

static Suite *cuptirec_suite(void)
{
	Suite *s = suite_create("cuptirec");
	TCase *tc;

	tc = tcase_create("jbuf");
	tcase_add_loop_test(tc, test_jbuf_escape, 0, (int)(sizeof esc_cases / sizeof esc_cases[0]));
	tcase_add_test(tc, test_jbuf_ints);
	tcase_add_test(tc, test_jbuf_grows);
	tcase_add_loop_test(tc, test_pathpat, 0, (int)(sizeof pathpats / sizeof pathpats[0]));
	tcase_add_loop_test(tc, test_pathcheck, 0, (int)(sizeof pathchecks / sizeof pathchecks[0]));
	tcase_add_test(tc, test_pathpat_host_rank);
	tcase_add_test(tc, test_path_host);
	tcase_add_test(tc, test_path_rank);
	tcase_add_loop_test(tc, test_opts_activities, 0, (int)(sizeof activity_lists / sizeof activity_lists[0]));
	tcase_add_loop_test(tc, test_opts_seconds, 0, (int)(sizeof seconds_texts / sizeof seconds_texts[0]));
	tcase_add_loop_test(tc, test_opts_size, 0, (int)(sizeof size_texts / sizeof size_texts[0]));
	suite_add_tcase(s, tc);

	tc = tcase_create("encode");
	tcase_add_test(tc, test_encode_kernel);
	tcase_add_test(tc, test_encode_memcpy_memset);
	tcase_add_test(tc, test_encode_api);
	tcase_add_test(tc, test_encode_other_kinds);
	tcase_add_test(tc, test_encode_sync_device);
	tcase_add_test(tc, test_clock_identity);
	tcase_add_test(tc, test_clock_foreign);
	tcase_add_test(tc, test_encode_applies_clock);
	suite_add_tcase(s, tc);

	tc = tcase_create("pool");
	tcase_add_test(tc, test_pool_exhaustion);
	tcase_add_test(tc, test_pool_threads);
	tcase_add_test(tc, test_queue);
	tcase_add_test(tc, test_annot);
	tcase_add_test(tc, test_annot_long_name);
	tcase_add_test(tc, test_tmap);
	suite_add_tcase(s, tc);

	tc = tcase_create("writer");
	tcase_add_checked_fixture(tc, check_tmpdir_setup, check_tmpdir_teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, test_window_file, 0, (int)(sizeof window_files / sizeof window_files[0]));
	tcase_add_loop_test(tc, test_path_is_gz, 0, (int)(sizeof gz_names / sizeof gz_names[0]));
	tcase_add_test(tc, test_window_source);
	tcase_add_test(tc, test_window_big);
	tcase_add_test(tc, test_window_truncated);
	tcase_add_test(tc, test_window_errors);
	tcase_add_test(tc, test_sink_not_on_closed_stderr);
	tcase_add_test(tc, test_cuptimerge_reads_window);
	tcase_add_test(tc, test_launcher_latency_option);
	tcase_add_test(tc, test_cuptimerge_reads_gzip_window);
	tcase_add_test(tc, test_cuptimerge_rejects_truncated);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(cuptirec_suite)
