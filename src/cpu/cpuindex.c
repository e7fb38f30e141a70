/* cpuindex.c - the External-id index applied, on several threads.
 *
 * The candidates are read back once the window has been read: millions of
 * records (about 120 MB for the 1 GB pair), each looked up at random in a
 * table of the window's ids.  On one thread that was 0.11-0.15 s of the
 * serial part of a 16-core run, so the file is cut into contiguous parts
 * of records, a thread each, and what one reader would have made is put
 * together from what the parts made:
 *
 *   - "The last candidate of an id wins": a part takes its records in
 *     order, so within a part the last one wins; across parts, each entry
 *     it writes is tagged with the part's number, and an entry is only
 *     written over by its own part or a later one (compare and swap, since
 *     two parts may meet on an id: the ids are mostly increasing through
 *     the trace, so they seldom do).
 *   - The threads are numbered in the order of their first use.  Each part
 *     numbers them in its own list; the parts' lists, taken in part order
 *     into the plan's list, number them as one reader would, and a last
 *     walk over the table, by slices of it on the same threads, rewrites
 *     each entry's (part, number in the part) as the number in the plan.
 *   - The first bad candidate is reported: each part stops at its first
 *     one, and the pool reports the first failing part's error only.
 *   - PLAN->indexed: an entry goes from 0 to a thread once, in one part.
 *
 * With an operator callback (a window of version 2) the candidates go to
 * it in trace order, so one thread does all, without tags. */
#include "config.h"
#include "cpu/cpuindex.h"
#include "base/diag.h"
#include "base/opool.h"
#include "base/extindex.h"
#include "base/exitcode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Records read back at a time; the index entry of the one PREFETCH ahead
 * is asked for while this one is looked up (the lookups land at random in
 * a table of tens of MB: without it each waited on memory). */
#define APPLY_CHUNK 4096
#define APPLY_PREFETCH 16
/* Fewer records are read by one thread.  (The unit tests build this file
 * again with 1, and with tags that hold 8 threads a part, so that small
 * cases take every path.) */
#ifndef CM_CPUINDEX_PARALLEL_MIN
#define CM_CPUINDEX_PARALLEL_MIN 65536
#endif

/* A tagged entry, while the parts run: the part's number + 1 above
 * PART_SHIFT bits, the thread's number in the part's list below. */
#define PART_SHIFT 24
#ifndef CM_CPUINDEX_LOCAL_MAX
#define CM_CPUINDEX_LOCAL_MAX ((1u << PART_SHIFT) - 1)
#endif
#define LOCAL_MASK ((1u << PART_SHIFT) - 1) /* a tagged entry's thread number */
#define PARTS_MAX 255

struct part {
	cm_input *in;
	cm_cpuplan *plan;      /* the direct part's: threads go in its list */
	cm_idmap *ext;
	cm_cpuindex_op_fn op;  /* the direct part's */
	cm_cpuindex_ann_fn ann; /* ... with its names (plan->ann_names) */
	void *op_ctx;
	int fd;
	uint64_t from, to;     /* the records [from, to) */
	uint32_t tag;          /* (number + 1) << PART_SHIFT; 0: the direct part */
	cm_ext_threads threads; /* a tagged part's own list */
	uint64_t found;        /* entries that went from 0 */
	/* the last walk: this part's slice of the table, and each part's
	 * numbers in the plan's list */
	int slice, slices;
	uint32_t **to_plan;
};

/* Read records [AT, AT + N) into BUF.  0, or -1 after a report. */
static int read_records(int fd, unsigned char *buf, uint64_t at, size_t n)
{
	size_t want = n * CM_CAND_REC, got = 0;
	while (got < want) {
		ssize_t r = pread(fd, buf + got, want - got, (off_t)(at * CM_CAND_REC + got));
		if (r <= 0)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file%s%s", r < 0 ? ": " : "",
					r < 0 ? strerror(errno) : "");
		got += (size_t)r;
	}
	return 0;
}

/* The next name of PLAN->ann_names into NAME: 1 when it is a string, 0
 * when not, -1 after a report. */
static int next_name(cm_cpuplan *plan, cm_buf *name)
{
	uint32_t len;
	name->len = 0;
	if (!plan->ann_names || fread(&len, 4, 1, plan->ann_names) != 1)
		goto bad;
	if (len == CM_ANN_NOT_STR)
		return 0;
	if (len)
		cm_buf_grow(name, len);
	if (len && fread(name->p, 1, len, plan->ann_names) != len)
		goto bad;
	name->len = len;
	return 1;
bad:
	return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file");
}

/* A user annotation candidate REC to P's ANN, with its name (read
 * whatever becomes of it, so that the names keep step).  0, or -1. */
static int annotation(struct part *p, const unsigned char *rec, cm_buf *name)
{
	int64_t id, pid, tid;
	double ts, end;
	int s = next_name(p->plan, name);
	if (s < 0)
		return -1;
	if (rec[48] & CM_CAND_BAD)
		return 0;
	memcpy(&id, rec, 8);
	memcpy(&pid, rec + 8, 8);
	memcpy(&tid, rec + 16, 8);
	memcpy(&ts, rec + 32, 8);
	memcpy(&end, rec + 40, 8);
	return p->ann(p->op_ctx, pid, tid, ts, end, id, !s ? NULL : name->p ? name->p : "", name->len);
}

/* Write thread V (tagged) of part P into entry T, unless a later part has
 * written it. */
static void put_tagged(struct part *p, struct cm_ext_thread *t, uint32_t v)
{
	uint32_t old = __atomic_load_n(&t->thread, __ATOMIC_RELAXED);
	do {
		if (old > (p->tag | LOCAL_MASK))
			return;
	} while (!__atomic_compare_exchange_n(&t->thread, &old, v, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	p->found += old == 0;
}

/* One part: its records in order.  0; -1 after a report (the first bad
 * candidate of the part); -2 when the part met more threads than a tag
 * holds. */
static int part_run(struct part *p)
{
	unsigned char *buf = cm_xmalloc((size_t)APPLY_CHUNK * CM_CAND_REC);
	cm_buf name = {0};
	int rc = 0;
	if (p->ann && p->plan->ann_names && fseeko(p->plan->ann_names, 0, SEEK_SET) != 0)
		rc = (cm_error(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno)), -1);
	for (uint64_t at = p->from; at < p->to && !rc; at += APPLY_CHUNK) {
		size_t have = p->to - at < APPLY_CHUNK ? (size_t)(p->to - at) : APPLY_CHUNK;
		if (read_records(p->fd, buf, at, have) < 0) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < have; i++) {
			const unsigned char *rec = buf + i * CM_CAND_REC;
			int64_t id, pid, tid;
			uint64_t index;
			uint32_t n;
			struct cm_ext_thread *t;
			if (i + APPLY_PREFETCH < have) {
				memcpy(&id, rec + APPLY_PREFETCH * CM_CAND_REC, 8);
				cm_idmap_prefetch(p->ext, id);
			}
			memcpy(&id, rec, 8);
			memcpy(&pid, rec + 8, 8);
			memcpy(&tid, rec + 16, 8);
			if (p->op && rec[48] == CM_CAND_CPU_OP) {
				double ts, end;
				memcpy(&ts, rec + 32, 8);
				memcpy(&end, rec + 40, 8);
				if ((rc = p->op(p->op_ctx, pid, tid, ts, end, id)) < 0)
					break;
			}
			if (p->ann && !(rec[48] & CM_CAND_CPU_OP) && (rc = annotation(p, rec, &name)) < 0)
				break;
			if (!(t = cm_idmap_get(p->ext, id)))
				continue;
			if (rec[48] & CM_CAND_BAD) {
				memcpy(&index, rec + 24, 8);
				cm_error(CM_EXIT_DATA, cm_input_name(p->in), -1,
					 "traceEvents[%llu]: pid or tid does not fit in 64 bits", (unsigned long long)index);
				rc = -1;
				break;
			}
			if (!p->tag) {
				p->found += !t->thread;
				t->thread = cm_ext_threads_number(&p->plan->ext_threads, pid, tid);
				continue;
			}
			if ((n = cm_ext_threads_number(&p->threads, pid, tid)) > CM_CPUINDEX_LOCAL_MAX) {
				rc = -2;
				break;
			}
			put_tagged(p, t, p->tag | n);
		}
	}
	free(buf);
	cm_buf_free(&name);
	return rc;
}

/* The last walk: a tagged entry's number in the plan's list. */
static int untag(void *ctx, int64_t id, void *val)
{
	struct part *p = ctx;
	struct cm_ext_thread *t = val;
	(void)id;
	if (t->thread)
		t->thread = p->to_plan[(t->thread >> PART_SHIFT) - 1][(t->thread & LOCAL_MASK) - 1];
	return 0;
}

/* The parts as cm_opool_run_each runs them: the records, or the last walk
 * (the part's slice of the table). */
static int part_records(void *part) { return part_run(part); }

static int part_untag(void *part)
{
	struct part *p = part;
	return cm_idmap_each_slice(p->ext, p->slice, p->slices, untag, p);
}

/* The parts' lists into the plan's, in part order, and the entries
 * rewritten.  0. */
static int untag_all(struct part *parts, int n, cm_cpuplan *plan)
{
	uint32_t **to_plan = cm_xcalloc((size_t)n, sizeof *to_plan);
	int rc;
	for (int i = 0; i < n; i++) {
		to_plan[i] = cm_xcalloc(parts[i].threads.n + 1, sizeof **to_plan);
		for (uint32_t j = 0; j < parts[i].threads.n; j++)
			to_plan[i][j] = cm_ext_threads_number(&plan->ext_threads, parts[i].threads.v[j].pid,
							       parts[i].threads.v[j].tid);
	}
	for (int i = 0; i < n; i++) {
		parts[i].slice = i;
		parts[i].slices = n;
		parts[i].to_plan = to_plan;
	}
	rc = cm_opool_run_each(n, part_untag, parts, sizeof *parts);
	for (int i = 0; i < n; i++)
		free(to_plan[i]);
	free(to_plan);
	return rc;
}

/* Every entry written back to 0 (the tagged run gave up): the entries the
 * records name are the only ones it wrote. */
static void clear_all(struct part *parts, int n)
{
	unsigned char *buf = cm_xmalloc((size_t)APPLY_CHUNK * CM_CAND_REC);
	for (int i = 0; i < n; i++)
		for (uint64_t at = parts[i].from; at < parts[i].to; at += APPLY_CHUNK) {
			size_t have = parts[i].to - at < APPLY_CHUNK ? (size_t)(parts[i].to - at) : APPLY_CHUNK;
			if (read_records(parts[i].fd, buf, at, have) < 0)
				break; /* the direct run will meet it too, and report it */
			for (size_t j = 0; j < have; j++) {
				int64_t id;
				struct cm_ext_thread *t;
				memcpy(&id, buf + j * CM_CAND_REC, 8);
				if ((t = cm_idmap_get(parts[i].ext, id)))
					t->thread = 0;
			}
		}
	free(buf);
}

int cm_cpuindex_apply(cm_input *in, cm_cpuplan *plan, cm_idmap *ext, cm_cpuindex_op_fn op, cm_cpuindex_ann_fn ann,
		      void *op_ctx, int jobs)
{
	uint64_t n_rec = plan->n_ext_spill;
	int n = jobs < PARTS_MAX ? jobs : PARTS_MAX, rc;
	struct part *parts;
	if (!plan->ext_spill)
		return 0;
	if (fflush(plan->ext_spill) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	if (op || !cm_idmap_is_dense(ext) || n_rec < CM_CPUINDEX_PARALLEL_MIN || n < 2)
		n = 1;
	parts = cm_xcalloc((size_t)n, sizeof *parts);
	for (int i = 0; i < n; i++) {
		parts[i] = (struct part){.in = in, .plan = plan, .ext = ext, .op = op, .ann = op ? ann : NULL,
					 .op_ctx = op_ctx, .fd = fileno(plan->ext_spill)};
		parts[i].from = n_rec / (uint64_t)n * (uint64_t)i;
		parts[i].to = i == n - 1 ? n_rec : n_rec / (uint64_t)n * (uint64_t)(i + 1);
		parts[i].tag = n > 1 ? (uint32_t)(i + 1) << PART_SHIFT : 0;
	}
	rc = n > 1 ? cm_opool_run_each(n, part_records, parts, sizeof *parts) : part_run(&parts[0]);
	if (rc == -2) { /* a part met more threads than a tag holds: one reader */
		clear_all(parts, n);
		for (int i = 0; i < n; i++)
			cm_ext_threads_free(&parts[i].threads);
		parts[0] = (struct part){.in = in, .plan = plan, .ext = ext, .op = op, .ann = op ? ann : NULL,
					 .op_ctx = op_ctx, .fd = fileno(plan->ext_spill), .from = 0, .to = n_rec};
		n = 1;
		rc = part_run(&parts[0]);
	}
	if (rc == 0 && n > 1)
		rc = untag_all(parts, n, plan);
	for (int i = 0; i < n; i++) {
		plan->indexed += parts[i].found;
		cm_ext_threads_free(&parts[i].threads);
	}
	free(parts);
	if (rc < 0)
		return -1;
	fclose(plan->ext_spill);
	plan->ext_spill = NULL;
	if (plan->ann_names)
		fclose(plan->ann_names);
	plan->ann_names = NULL;
	return 0;
}
