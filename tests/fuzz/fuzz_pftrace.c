/* fuzz_pftrace.c - fuzz harness: the fuzzer's bytes are the JSON document
 * handed to the Perfetto transcoder (src/pftrace: cm_pft_new, cm_pft_write,
 * cm_pft_finish, what -o FILE.pftrace puts in the output path), read from
 * our own merged JSON and from any Kineto trace a user converts.
 *
 * No engine runs: the bytes go straight to the transcoder, four times, into
 * a sink that keeps what it is given:
 *   A. at 1 thread, in one piece;
 *   B. at 1 thread, in pieces whose sizes the input's first 16 bytes choose
 *      (piece K: 1 + byte[K mod 16] mod 37 bytes), so that the walk's piece
 *      boundaries fall inside keys, strings, numbers and elements;
 *   C. at 2 or 3 threads (from a hash of the input), in pieces of 1..4096
 *      bytes from the same hash: the workers walk chunks of their own
 *      (pfstream.c's guesses, the walk handed on);
 *   D. as A, with CUPTIMERGE_PFT_GENERIC=1 (no compact reading, numbers
 *      read again from their text: pfparse.c's other path).
 * All four use one batch span (CUPTIMERGE_PFT_BATCH: 24..535 bytes, or the
 * default 1 MiB, from the hash) and interning limit
 * (CUPTIMERGE_PFT_INTERN: 16..271 bytes, or the default), so that batches,
 * chunks and clearings come within reach of small inputs.  It aborts, and
 * libFuzzer keeps the input, when
 *   - the text is JSON as the program writes it (strict: yajl and
 *     json/jcheck.c, which every output passes), and the four runs differ
 *     in status, in their message, or (on success) in the bytes written:
 *     the bytes, and the refusal, depend on the text alone;
 *   - the text is not (the transcoder never meets it from the program; it
 *     must still fail cleanly), and two runs that succeeded wrote other
 *     bytes (which of its faults a run reports first may depend on the
 *     pieces and threads: a walk that meets the text's end, an element
 *     encoded before that);
 *   - a failed run does not report exactly one line, "cuptimerge: LABEL:"
 *     with an offset within the text, with status CM_EXIT_DATA (nothing
 *     else can fail here: the sink takes everything), or a run that
 *     succeeded reports anything;
 *   - what a run that succeeded wrote is not a perfetto.protos.Trace as
 *     the transcoder writes them: a sequence of TracePacket fields, each a
 *     well-formed message of the fields pfevent.h names, with their wire
 *     types, down to every nested message (check_trace below: valid
 *     varints, lengths within their message, no other field);
 * and ASan, UBSan (which stops at its first report here) and LeakSanitizer
 * report what they find (the threads are
 * joined by cm_pft_finish or cm_pft_free, so a leak check after each input
 * sees no thread's memory in flight).  The input is capped at 64 KiB; the
 * driver's -max_len (tests/fuzz/run.sh) keeps it to 16 KiB. */
#define _GNU_SOURCE /* open_memstream */
#include "config.h"
#include "base/diag.h"
#include "base/exitcode.h"
#include "json/jcheck.h"
#include "pftrace/pftrace.h"
#include "strict.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_parse.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__ubsan_default_options(void);

/* UBSan stops at its first report (the fuzz build's checks go on after
 * one, printing it once, which no property would notice), so that
 * libFuzzer keeps the input; UBSAN_OPTIONS still overrides it. */
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:print_stacktrace=1";
}

#define LABEL "fuzz.pftrace"

static FILE *real_stderr;

#define PROPERTY(cond, ...)                                                     \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(real_stderr, "fuzz_pftrace: property failed: "); \
			fprintf(real_stderr, __VA_ARGS__);                      \
			fputc('\n', real_stderr);                               \
			abort();                                                \
		}                                                               \
	} while (0)

/* ------------------------------------------------------------ the output
 *
 * The schema the transcoder writes (pfevent.h's field numbers): for each
 * message, its fields and their wire types; a length-delimited field is
 * either bytes (SUB -1) or a message of that number.  Nothing else may
 * appear. */
enum { M_TRACE, M_PACKET, M_EVENT, M_ANN, M_LEGACY, M_INTERNED, M_ISTR, M_TRACK, M_PROC, M_THREAD, M_COUNTER,
       M_CLOCKS, M_CLOCK, M_DEFAULTS, M_TEDEF, M_N };

struct field {
	uint32_t num;
	int wire;  /* 0 varint, 1 fixed64, 2 length-delimited */
	int sub;   /* for wire 2: a message (M_...), or -1 for bytes */
};

static const struct field f_trace[] = {{1, 2, M_PACKET}, {0, 0, 0}};
static const struct field f_packet[] = {{8, 0, 0},	     {10, 0, 0},	{11, 2, M_EVENT},
					{12, 2, M_INTERNED}, {13, 0, 0},	{60, 2, M_TRACK},
					{6, 2, M_CLOCKS},    {58, 0, 0},	{59, 2, M_DEFAULTS},
					{0, 0, 0}};
static const struct field f_event[] = {{3, 0, 0},  {4, 2, M_ANN}, {9, 0, 0},  {10, 0, 0},
				       {11, 0, 0}, {6, 2, M_LEGACY}, {44, 1, 0}, {0, 0, 0}};
static const struct field f_ann[] = {{1, 0, 0}, {2, 0, 0},	   {3, 0, 0},	      {4, 0, 0},
				     {5, 1, 0}, {6, 2, -1}, {11, 2, M_ANN}, {12, 2, M_ANN}, {0, 0, 0}};
static const struct field f_legacy[] = {{2, 0, 0}, {6, 0, 0}, {12, 0, 0}, {0, 0, 0}};
static const struct field f_interned[] = {{1, 2, M_ISTR}, {2, 2, M_ISTR}, {3, 2, M_ISTR}, {0, 0, 0}};
static const struct field f_istr[] = {{1, 0, 0}, {2, 2, -1}, {0, 0, 0}};
static const struct field f_track[] = {{1, 0, 0},	{2, 2, -1}, {3, 2, M_PROC}, {4, 2, M_THREAD},
				       {5, 0, 0},	{8, 2, M_COUNTER}, {15, 0, 0}, {0, 0, 0}};
static const struct field f_proc[] = {{1, 0, 0}, {3, 0, 0}, {6, 2, -1}, {8, 2, -1}, {0, 0, 0}};
static const struct field f_thread[] = {{1, 0, 0}, {2, 0, 0}, {3, 0, 0}, {5, 2, -1}, {0, 0, 0}};
static const struct field f_counter[] = {{0, 0, 0}};
static const struct field f_clocks[] = {{1, 2, M_CLOCK}, {0, 0, 0}};
static const struct field f_clock[] = {{1, 0, 0}, {2, 0, 0}, {0, 0, 0}};
static const struct field f_defaults[] = {{58, 0, 0}, {11, 2, M_TEDEF}, {0, 0, 0}};
static const struct field f_tedef[] = {{11, 0, 0}, {0, 0, 0}};

static const struct field *const schema[M_N] = {f_trace,    f_packet, f_event,	 f_ann,	    f_legacy,
						f_interned, f_istr,   f_track,	 f_proc,    f_thread,
						f_counter,  f_clocks, f_clock,	 f_defaults, f_tedef};
static const char *const mname[M_N] = {"Trace",	       "TracePacket", "TrackEvent",	  "DebugAnnotation",
				       "LegacyEvent",  "InternedData", "an interned string", "TrackDescriptor",
				       "ProcessDescriptor", "ThreadDescriptor", "CounterDescriptor", "ClockSnapshot",
				       "Clock",	       "TracePacketDefaults", "TrackEventDefaults"};

/* A varint at P[*I..N): 0 and *V, *I past it; -1 when it runs past N or
 * past ten bytes, or its tenth byte holds more than bit 63. */
static int varint(const unsigned char *p, size_t n, size_t *i, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned k = 0; k < 10; k++) {
		if (*i >= n)
			return -1;
		unsigned char c = p[(*i)++];
		if (k == 9 && c > 1)
			return -1;
		x |= (uint64_t)(c & 0x7f) << (7 * k);
		if (!(c & 0x80))
			return *v = x, 0;
	}
	return -1;
}

/* P[0..N) is a message of type M, each of its messages too (depth: the
 * nesting, which the transcoder bounds by the JSON's, plus dotted keys). */
static void check_message(int m, const unsigned char *p, size_t n, size_t base, int depth)
{
	size_t i = 0;
	PROPERTY(depth < 100000, "messages nested %d deep at byte %zu", depth, base);
	while (i < n) {
		size_t at = i;
		uint64_t key, len, v;
		const struct field *f;
		PROPERTY(varint(p, n, &i, &key) == 0, "a %s's field key at byte %zu is no varint", mname[m], base + at);
		for (f = schema[m]; f->num; f++)
			if (f->num == key >> 3)
				break;
		PROPERTY(f->num && (int)(key & 7) == f->wire,
			 "a %s holds field %llu of wire type %d at byte %zu, which it does not have", mname[m],
			 (unsigned long long)(key >> 3), (int)(key & 7), base + at);
		switch (f->wire) {
		case 0:
			PROPERTY(varint(p, n, &i, &v) == 0, "a %s's field %u at byte %zu: no varint", mname[m], f->num,
				 base + at);
			break;
		case 1:
			PROPERTY(n - i >= 8, "a %s's fixed64 field %u at byte %zu runs past its end", mname[m], f->num,
				 base + at);
			i += 8;
			break;
		default:
			PROPERTY(varint(p, n, &i, &len) == 0 && len <= n - i,
				 "a %s's field %u at byte %zu: a length that is no varint or runs past its end", mname[m],
				 f->num, base + at);
			if (f->sub >= 0)
				check_message(f->sub, p + i, (size_t)len, base + i, depth + 1);
			i += (size_t)len;
		}
	}
}

static void check_trace(const char *p, size_t n)
{
	check_message(M_TRACE, (const unsigned char *)p, n, 0, 0);
}

/* ------------------------------------------------------------- the runs */

struct sink {
	char *p;
	size_t len, cap;
};

static int sink_put(void *ctx, const void *p, size_t n)
{
	struct sink *s = ctx;
	if (!n)
		return 0;
	if (s->cap - s->len < n) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap - s->len < n)
			cap *= 2;
		s->p = realloc(s->p, cap);
		if (!s->p)
			abort();
		s->cap = cap;
	}
	memcpy(s->p + s->len, p, n);
	s->len += n;
	return 0;
}

struct run {
	int rc, status;
	struct sink out;
	char *msgs;
	size_t msgs_len;
};

/* How a run gets its text: in one piece (PIECES NULL, SEED unused), the
 * sizes from the first 16 bytes (PIECES = the data), or from SEED. */
enum feed { WHOLE, FIRST_BYTES, HASHED };

static uint64_t next_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void transcode(const uint8_t *data, size_t size, int threads, enum feed feed, uint64_t seed, struct run *r)
{
	FILE *saved = stderr;
	cm_pft *t;
	size_t i = 0, k = 0;
	int rc = 0;
	memset(r, 0, sizeof *r);
	stderr = open_memstream(&r->msgs, &r->msgs_len);
	cm_diag_reset();
	t = cm_pft_new(sink_put, &r->out, LABEL);
	cm_pft_threads(t, threads);
	seed |= 1;
	while (rc == 0 && i < size) {
		size_t n = size - i;
		if (feed == FIRST_BYTES)
			n = 1 + data[k % (size < 16 ? size : 16)] % 37;
		else if (feed == HASHED)
			n = 1 + next_rand(&seed) % (next_rand(&seed) % 4 ? 64 : 4096);
		if (n > size - i)
			n = size - i;
		rc = cm_pft_write(t, data + i, n);
		i += n;
		k++;
	}
	if (rc == 0)
		rc = cm_pft_finish(t);
	cm_pft_free(t);
	fclose(stderr);
	stderr = saved;
	r->rc = rc;
	r->status = cm_diag_status();
}

/* A run's properties alone: what it reported. */
static void check_run(const struct run *r, size_t size, const char *what)
{
	size_t lines = 0;
	for (size_t i = 0; i < r->msgs_len; i++)
		lines += r->msgs[i] == '\n';
	if (r->rc == 0) {
		PROPERTY(r->msgs_len == 0, "%s: succeeded, but said: %.300s", what, r->msgs);
		PROPERTY(r->status == 0, "%s: succeeded with status %d", what, r->status);
		return;
	}
	PROPERTY(r->rc == -1, "%s: returned %d", what, r->rc);
	PROPERTY(lines == 1 && r->msgs[r->msgs_len - 1] == '\n', "%s: failed, saying %zu lines: %.300s", what, lines,
		 r->msgs);
	PROPERTY(r->status == CM_EXIT_DATA, "%s: failed with status %d: %.300s", what, r->status, r->msgs);
	PROPERTY(!strncmp(r->msgs, "cuptimerge: " LABEL ":", strlen("cuptimerge: " LABEL ":")),
		 "%s: a message not of the form 'cuptimerge: " LABEL ":...': %.300s", what, r->msgs);
	/* an offset within the text, where there is one */
	const char *p = r->msgs + strlen("cuptimerge: " LABEL ":");
	if (*p >= '0' && *p <= '9') {
		unsigned long long off = strtoull(p, NULL, 10);
		PROPERTY(off <= size, "%s: the offset %llu lies beyond the text (%zu bytes): %.300s", what, off, size,
			 r->msgs);
	}
}

/* P[0..N) and Q[0..N) hold the same bytes (either NULL when N is 0). */
static int same_bytes(const char *p, const char *q, size_t n)
{
	return !n || !memcmp(p, q, n);
}

/* Two runs gave the same (for a text that is not JSON: the same bytes
 * when both succeeded). */
static void check_same(const struct run *a, const struct run *b, int json, const char *what)
{
	if (!json) {
		if (a->rc == 0 && b->rc == 0)
			PROPERTY(a->out.len == b->out.len && same_bytes(a->out.p, b->out.p, a->out.len),
				 "%s: other bytes (%zu) than in one piece at 1 thread (%zu), from a text that is not JSON",
				 what, b->out.len, a->out.len);
		return;
	}
	PROPERTY(a->rc == b->rc && a->status == b->status, "%s: status %d (%d), not %d (%d) as in one piece at 1 thread",
		 what, b->status, b->rc, a->status, a->rc);
	PROPERTY(a->msgs_len == b->msgs_len && same_bytes(a->msgs, b->msgs, a->msgs_len),
		 "%s: says '%.300s', in one piece at 1 thread '%.300s'", what, b->msgs, a->msgs);
	if (a->rc == 0)
		PROPERTY(a->out.len == b->out.len && same_bytes(a->out.p, b->out.p, a->out.len),
			 "%s: other bytes (%zu) than in one piece at 1 thread (%zu)", what, b->out.len, a->out.len);
}

static void run_free(struct run *r)
{
	free(r->out.p);
	free(r->msgs);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	real_stderr = fdopen(dup(2), "w");
	setvbuf(real_stderr, NULL, _IONBF, 0);
	cm_diag_init("cuptimerge");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run a, b, c, d;
	uint64_t h = 1469598103934665603u;
	char batch[32], intern[32];
	int threads, json;
	if (size > 65536)
		return -1;
	json = fuzz_strict_valid((const char *)data, size);
	for (size_t i = 0; i < size; i++)
		h = (h ^ data[i]) * 1099511628211u;
	/* the batch span and the interning limit, the same for all four runs */
	snprintf(batch, sizeof batch, "%u", h % 8 ? 24 + (unsigned)(h >> 8) % 512 : 1u << 20);
	snprintf(intern, sizeof intern, "%u", (h >> 20) % 4 ? 4u << 20 : 16 + (unsigned)(h >> 24) % 256);
	setenv("CUPTIMERGE_PFT_BATCH", batch, 1);
	setenv("CUPTIMERGE_PFT_INTERN", intern, 1);
	unsetenv("CUPTIMERGE_PFT_GENERIC");
	threads = 2 + (int)((h >> 40) % 2);
	transcode(data, size, 1, WHOLE, 0, &a);
	check_run(&a, size, "in one piece at 1 thread");
	if (a.rc == 0)
		check_trace(a.out.p, a.out.len);
	transcode(data, size, 1, FIRST_BYTES, 0, &b);
	check_run(&b, size, "in pieces of the first bytes' sizes at 1 thread");
	check_same(&a, &b, json, "in pieces of the first bytes' sizes at 1 thread");
	transcode(data, size, threads, HASHED, h, &c);
	check_run(&c, size, threads == 2 ? "at 2 threads" : "at 3 threads");
	check_same(&a, &c, json, threads == 2 ? "at 2 threads" : "at 3 threads");
	setenv("CUPTIMERGE_PFT_GENERIC", "1", 1);
	transcode(data, size, 1, WHOLE, 0, &d);
	unsetenv("CUPTIMERGE_PFT_GENERIC");
	check_run(&d, size, "with CUPTIMERGE_PFT_GENERIC=1");
	check_same(&a, &d, json, "with CUPTIMERGE_PFT_GENERIC=1");
	run_free(&a);
	run_free(&b);
	run_free(&c);
	run_free(&d);
	return 0;
}
