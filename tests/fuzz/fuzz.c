/* fuzz.c - the driver of the fuzz harnesses (libFuzzer): run the engine on
 * the fuzzer's bytes and check the properties listed in fuzz.h.
 *
 * The engine runs in-process, as main.c runs it, on files: the fuzzer's
 * bytes go to a memfd opened by its /proc/self/fd name (a regular file, so
 * the merge reads it several times and may open it again, as it would a
 * trace on disk), the partner input is a fixture, the output goes to a
 * private directory.  Messages go to a memory stream in place of stderr, so
 * they can be counted; sanitizer reports are written to descriptor 2 itself
 * and still reach the terminal.  A property that fails aborts, which
 * libFuzzer reports as a crash and saves the input. */
#define _GNU_SOURCE /* memfd_create, memmem, open_memstream */
#include "config.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "cpu/cpuscan.h"
#include "fuzz.h"
#include "strict.h"
#include "io/input.h"
#include "json/jcheck.h"
#include "json/jscan.h"
#include "json/jval.h"
#include "base/pyval.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

#ifndef FUZZ_DATA
#define FUZZ_DATA "."
#endif

static int data_fd = -1;
static char data_path[64], partner_path[4096], out_tmpl[4096], out_dir[4096], out_path[4200];

/* A failed property: say which, then abort (libFuzzer keeps the input). */
#define PROPERTY(cond, ...)                                                                 \
	do {                                                                                \
		if (!(cond)) {                                                              \
			fprintf(real_stderr, "fuzz_%s: property failed: ", fuzz_target.name); \
			fprintf(real_stderr, __VA_ARGS__);                                  \
			fputc('\n', real_stderr);                                           \
			abort();                                                            \
		}                                                                           \
	} while (0)

static FILE *real_stderr;

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("FUZZ_DATA") ? getenv("FUZZ_DATA") : FUZZ_DATA;
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	(void)argc;
	(void)argv;
	real_stderr = fdopen(dup(2), "w");
	setvbuf(real_stderr, NULL, _IONBF, 0);
	data_fd = memfd_create("fuzz-input", 0);
	snprintf(data_path, sizeof data_path, "/proc/self/fd/%d", data_fd);
	snprintf(partner_path, sizeof partner_path, "%s/%s", dir, fuzz_target.partner);
	if (access(partner_path, R_OK) != 0) {
		fprintf(stderr, "fuzz_%s: cannot read %s (set FUZZ_DATA to the source tree)\n",
			fuzz_target.name, partner_path);
		exit(1);
	}
	snprintf(out_tmpl, sizeof out_tmpl, "%s/cuptimerge-fuzz.XXXXXX", tmp);
	if (data_fd < 0) {
		perror("fuzz setup");
		exit(1);
	}
	return 0;
}

/* The output directory of one input's runs: made before them, removed
 * after (empty by then, or a property has failed), so that a harness that
 * stops, however it stops between two inputs, leaves nothing in $TMPDIR
 * (one made at start-up and never removed was left by every run). */
static void out_dir_make(void)
{
	memcpy(out_dir, out_tmpl, sizeof out_dir);
	if (!mkdtemp(out_dir)) {
		perror("fuzz: mkdtemp");
		abort();
	}
	snprintf(out_path, sizeof out_path, "%s/out.json", out_dir);
}

struct run {
	int status;
	char *out;      /* the output file's bytes (status 0) */
	size_t out_len;
	char *msgs;     /* what went to stderr */
	size_t msgs_len;
};

/* Files in the output directory, "out.json" counted apart. */
static int leftovers(int *has_out)
{
	DIR *d = opendir(out_dir);
	struct dirent *e;
	int n = 0;
	*has_out = 0;
	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!strcmp(e->d_name, "out.json"))
			*has_out = 1;
		else
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *p = NULL;
	size_t cap = 0, n = 0, got;
	if (!f)
		return NULL;
	do {
		if (cap - n < 65536)
			p = realloc(p, cap = cap * 2 + 65536);
		got = fread(p + n, 1, cap - n, f);
		n += got;
	} while (got);
	fclose(f);
	*len = n;
	return p;
}

/* One run of the engine with chunks of BUFSIZE bytes. */
static void run_engine(size_t bufsize, struct run *r)
{
	struct cm_options opt;
	FILE *saved = stderr;
	int has_out;
	memset(&opt, 0, sizeof opt);
	memset(r, 0, sizeof *r);
	opt.gzip_level = -1;
	opt.bufsize = bufsize;
	opt.quiet = 1;
	opt.force = fuzz_target.role == FUZZ_CPU || fuzz_target.role == FUZZ_WINDOW;
	opt.have_now = 1;
	opt.now = 1764441600;
	opt.trace_name = "fuzz";
	opt.out_path = out_path;
	switch (fuzz_target.role) {
	case FUZZ_CPU: opt.cpu_path = data_path; opt.window_path = partner_path; break;
	case FUZZ_WINDOW: opt.cpu_path = partner_path; opt.window_path = data_path; break;
	case FUZZ_MAP: opt.cpu_path = partner_path; opt.map_path = data_path; break;
	case FUZZ_REPAIR: opt.cpu_path = data_path; opt.map_path = partner_path; break;
	}
	stderr = open_memstream(&r->msgs, &r->msgs_len);
	cm_diag_reset();
	r->status = cm_merge_run(&opt);
	fclose(stderr);
	stderr = saved;

	PROPERTY(r->status >= CM_EXIT_OK && r->status <= CM_EXIT_IO, "exit status %d", r->status);
	/* nothing here can fail to read or write: a status 3 is a second pass
	 * that read the text differently from yajl's ("changed between the
	 * passes"), as form feeds once made it (F11) */
	PROPERTY(r->status != CM_EXIT_IO, "status 3: %.*s", (int)(r->msgs_len < 2000 ? r->msgs_len : 2000),
		 r->msgs);
	PROPERTY(leftovers(&has_out) == 0, "a temporary file was left in %s (status %d)", out_dir,
		 r->status);
	if (r->status == CM_EXIT_OK) {
		PROPERTY(has_out, "status 0 but no output file");
		r->out = slurp(out_path, &r->out_len);
		PROPERTY(r->out != NULL, "cannot read the output");
	} else {
		size_t lines = 0;
		for (size_t i = 0; i < r->msgs_len; i++)
			lines += r->msgs[i] == '\n';
		PROPERTY(!has_out, "status %d but an output file", r->status);
		PROPERTY(lines == 1, "status %d with %zu message lines: %.*s", r->status, lines,
			 (int)(r->msgs_len < 2000 ? r->msgs_len : 2000), r->msgs);
	}
	unlink(out_path);
}

/* The bytes of the layout file F. */
static char *layout_bytes(FILE *f, size_t *n)
{
	char *p = NULL;
	size_t cap = 0, got;
	*n = 0;
	PROPERTY(fflush(f) == 0 && fseek(f, 0, SEEK_SET) == 0, "cannot read a layout");
	do {
		if (cap - *n < 4096)
			p = realloc(p, cap = cap * 2 + 4096);
		got = fread(p + *n, 1, cap - *n, f);
		*n += got;
	} while (got);
	return p;
}

/* The trace's layout (cpuscan.h) as the parallel scan's splitter notes it
 * with reads of 64 KiB, and as the careful scan's (CUPTIMERGE_CAREFUL's)
 * notes it with reads of SMALL bytes: for a trace both take, the same,
 * record for record.  The copy walks nothing else. */
static void check_layouts(size_t small)
{
	cm_cpuplan par, car;
	cm_input *in;
	FILE *saved = stderr;
	char *msgs = NULL, *a, *b;
	size_t msgs_len, na, nb;
	int prc = -1, crc = -1;
	stderr = open_memstream(&msgs, &msgs_len);
	cm_diag_reset();
	memset(&par, 0, sizeof par);
	memset(&car, 0, sizeof car);
	if ((in = cm_input_open_rewindable(data_path, 1 << 16))) {
		prc = cm_cpuscan_run_cut(in, &par, 2, NULL);
		cm_input_close(in);
	}
	if ((in = cm_input_open_rewindable(data_path, small))) {
		crc = cm_cpuscan_run_cut(in, &car, 0, NULL);
		cm_input_close(in);
	}
	fclose(stderr);
	stderr = saved;
	free(msgs);
	PROPERTY(prc == crc, "the parallel scan gives %d, the careful one %d", prc, crc);
	if (prc == 0) {
		PROPERTY(par.layout && car.layout, "a scan that took the trace noted no layout");
		a = layout_bytes(par.layout, &na);
		b = layout_bytes(car.layout, &nb);
		PROPERTY(na == nb && !memcmp(a, b, na),
			 "the careful scan's layout (%zu bytes, %zu-byte reads) is not the parallel scan's (%zu)", nb,
			 small, na);
		free(a);
		free(b);
	}
	cm_cpuplan_free(&par);
	cm_cpuplan_free(&car);
}

/* Python's json takes NaN, Infinity and -Infinity, which are not JSON. */
static int has_py_extension(const char *s, size_t n)
{
	return memmem(s, n, "NaN", 3) || memmem(s, n, "Infinity", 8);
}

/* 0 when the text may hold malformed UTF-8, which only the strict check
 * refuses (the Python parser works on bytes, after yajl).  A form feed or
 * vertical tab would stop that check before it could tell, but the Python
 * parser refuses those itself, so such a text counts as 1; a text the check
 * stops for its depth counts as 0 (not compared). */
static int utf8_ok(const char *s, size_t n)
{
	cm_jcheck c;
	cm_jcheck_begin(&c);
	for (size_t i = 0; i < n; i++)
		if (s[i] == '\f' || s[i] == '\v')
			return 1; /* not a UTF-8 question */
	return cm_jcheck_feed(&c, s, n) == n && c.need == 0;
}

/* The scanners against yajl on the raw bytes. */
static void check_scanners(const char *s, size_t n)
{
	int valid = fuzz_strict_valid(s, n);
	cm_arena *a = cm_arena_new();
	cm_jval *v = cm_jval_parse_py(a, s, n);
	size_t i = 0, k;
	cm_jscan sc;
	if (valid) {
		PROPERTY(v != NULL, "yajl accepts the text, the Python-json parser does not");
		while (i < n && cm_jscan_ws(s[i]))
			i++;
		k = i;
		cm_jscan_begin(&sc, s[i]);
		if (cm_jscan_feed(&sc, s, n, &k) || sc.scalar) {
			while (k < n && cm_jscan_ws(s[k]))
				k++;
			PROPERTY(k == n, "jscan ends the value at %zu, yajl at the end (%zu)", k, n);
		} else {
			PROPERTY(0, "jscan did not find the end of a valid value");
		}
	} else if (!has_py_extension(s, n) && utf8_ok(s, n)) {
		PROPERTY(v == NULL, "the Python-json parser accepts what yajl refuses");
	}
	cm_arena_free(a);
}

/* ------------------------------------------------------ documented ranges
 *
 * A window the merge took keeps to the ranges cuptimerge-window(5)
 * documents (issue 27: F18, F19): every end_ns, and the start_ns of the
 * kinds whose start is always read, lies less than 2^126 ns from 0; the
 * ids of external correlations, kernels, copies and sets (and the keys of
 * user_annotations) lie in [-2^63, 2^64), and no kind of id has both one
 * below 0 and one from 2^63 up.  Values are read as the merge reads them
 * (Python's int(), the last of a repeated key); those int() cannot take
 * are not the question here. */
enum { R_EXT, R_CORR, R_DEV, R_STREAM, R_N };

/* The last member KEY of object O, or NULL. */
static const cm_jval *member(const cm_jval *o, const char *key)
{
	const cm_jval *v = NULL;
	size_t n = strlen(key);
	for (const cm_jval *k = o->kids; k; k = k->next)
		if (k->key && k->klen == n && !memcmp(k->key, key, n))
			v = k;
	return v;
}

/* Python's _as_int(V): 1 and *X when it gives a value, 0 when it raises
 * OverflowError (an error of its own) or V is absent. */
static int as_int(const cm_jval *v, cm_int *x)
{
	*x = 0;
	if (!v)
		return 0;
	switch (v->type) {
	case CM_J_NUM: return cm_py_int_of_number(v->s, v->len, x) == CM_PY_OK;
	case CM_J_STR: {
		int rc = cm_py_int_of_str(v->s, v->len, x);
		if (rc == CM_PY_VALUE)
			*x = 0;
		return rc == CM_PY_OK || rc == CM_PY_VALUE;
	}
	case CM_J_TRUE: *x = 1; return 1;
	default: return 1;
	}
}

static int is_kind(const cm_jval *kind, const char *name)
{
	return kind && kind->type == CM_J_STR && kind->len == strlen(name) && !memcmp(kind->s, name, kind->len);
}

/* The time KEY of EV, if int() takes it, within 2^126 ns of 0. */
static void time_in_range(const cm_jval *ev, const char *key, uint64_t index)
{
	const cm_int lim = (cm_int)1 << 126;
	cm_int t;
	if (as_int(member(ev, key), &t))
		PROPERTY(t > -lim && t < lim, "status 0, but events[%llu].%s lies 2^126 ns or more from 0",
			 (unsigned long long)index, key);
}

/* An id of kind K (R_...) in [-2^63, 2^64), its sign noted in SIGNS. */
static void id_in_range(cm_int x, int k, unsigned *signs, const char *what)
{
	PROPERTY(x >= INT64_MIN && x <= (cm_int)UINT64_MAX, "status 0, but %s is beyond 64 bits", what);
	signs[k] |= x < 0 ? 1u : x > INT64_MAX ? 2u : 0u;
}

static void check_window_ranges(const char *s, size_t n)
{
	static const char *const names[R_N] = {"External ids", "correlation ids", "device ids", "stream ids"};
	cm_arena *a = cm_arena_new();
	const cm_jval *w = cm_jval_parse_py(a, s, n), *evs, *ua;
	unsigned signs[R_N] = {0};
	uint64_t index = 0;
	cm_int x;
	if (!w || w->type != CM_J_OBJ || !(evs = member(w, "events")) || evs->type != CM_J_ARR) {
		cm_arena_free(a);
		return;
	}
	for (const cm_jval *ev = evs->kids; ev; ev = ev->next, index++) {
		const cm_jval *kind;
		int activity;
		if (ev->type != CM_J_OBJ)
			continue;
		kind = member(ev, "kind");
		activity = is_kind(kind, "kernel") || is_kind(kind, "gpu_memcpy") || is_kind(kind, "gpu_memset");
		time_in_range(ev, "end_ns", index);
		if (activity || is_kind(kind, "overhead"))
			time_in_range(ev, "start_ns", index);
		if (is_kind(kind, "external_correlation") && as_int(member(ev, "correlation_id"), &x) && x != 0) {
			id_in_range(x, R_CORR, signs, "a correlation_id");
			if (as_int(member(ev, "external_id"), &x))
				id_in_range(x, R_EXT, signs, "an external_id");
		}
		if (activity) {
			if (as_int(member(ev, "device_id"), &x))
				id_in_range(x, R_DEV, signs, "a device_id");
			if (as_int(member(ev, "stream_id"), &x))
				id_in_range(x, R_STREAM, signs, "a stream_id");
		}
		if ((activity || is_kind(kind, "cuda_runtime") || is_kind(kind, "cuda_driver")) &&
		    as_int(member(ev, "correlation_id"), &x) && x >= INT64_MIN && x <= (cm_int)UINT64_MAX)
			signs[R_CORR] |= x < 0 ? 1u : x > INT64_MAX ? 2u : 0u;
	}
	if ((ua = member(w, "user_annotations")) && ua->type == CM_J_OBJ)
		for (const cm_jval *k = ua->kids; k; k = k->next)
			if (cm_py_int_of_str(k->key, k->klen, &x) == CM_PY_OK)
				id_in_range(x, R_EXT, signs, "a user_annotations key");
	for (int k = 0; k < R_N; k++)
		PROPERTY(signs[k] != 3, "status 0, but the window's %s are both below 0 and from 2^63 up", names[k]);
	cm_arena_free(a);
}

/* The chunk size of the second run, from the input itself, so a crash
 * reproduces from the saved input alone: 1..31 bytes for inputs up to 4 KiB,
 * 32..4095 above (a byte at a time through 16 KiB costs more executions per
 * second than the extra chunk edges find). */
static size_t small_bufsize(const uint8_t *data, size_t size)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 16777619u;
	return size <= 4096 ? 1 + h % 31 : 32 + h % 4064;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run big, small;
	size_t bs;
	if (size > 65536)
		return -1; /* keep runs short; small inputs reach everything */
	if (ftruncate(data_fd, 0) < 0 || pwrite(data_fd, data, size, 0) != (ssize_t)size)
		abort();
	check_scanners((const char *)data, size);
	out_dir_make();
	run_engine(1 << 16, &big); /* more than the largest input: one chunk */
	bs = small_bufsize(data, size);
	run_engine(bs, &small);
	if (fuzz_target.role == FUZZ_CPU || fuzz_target.role == FUZZ_REPAIR)
		check_layouts(bs);
	PROPERTY(big.status == small.status, "status %d with 64 KiB reads, %d with %zu-byte reads", big.status,
		 small.status, bs);
	if (big.status == CM_EXIT_OK) {
		PROPERTY(big.out_len == small.out_len && !memcmp(big.out, small.out, big.out_len),
			 "the output differs between 64 KiB and %zu-byte reads", bs);
		PROPERTY(fuzz_strict_valid(big.out, big.out_len), "the output is not valid JSON");
		if (fuzz_target.role == FUZZ_WINDOW)
			check_window_ranges((const char *)data, size);
	}
	free(big.out);
	free(small.out);
	free(big.msgs);
	free(small.msgs);
	PROPERTY(rmdir(out_dir) == 0, "cannot remove %s: a file left in it?", out_dir);
	return 0;
}
