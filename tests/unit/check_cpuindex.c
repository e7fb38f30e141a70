/* check_cpuindex.c - the External-id index applied (cpu/cpuindex.c): on
 * one thread and on several, it must give what one reader of the
 * candidates gives: each id the thread of its last candidate, the threads
 * numbered in the order of first use, the ids found counted, the first bad
 * candidate reported, and the operators handed over in trace order.
 *
 * The model below is that one reader, written plainly.  Built a second
 * time (check_cpuindex_small) with parts that go parallel from one record
 * and a tag that holds only eight threads a part, so that the small cases
 * take the parallel path and its way back to one reader. */
#include "config.h"
#include "check_common.h"
#include "base/diag.h"
#include "base/idmap.h"
#include "cpu/cpuindex.h"
#include "base/extindex.h"
#include "io/input.h"

/* A small deterministic generator (xorshift64), so a failure repeats. */
static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct cand {
	int64_t id, pid, tid;
	uint64_t index;
	double ts, end;
	unsigned char flags;
};

/* A trace's candidates: N of them, ids in [1, RANGE] (increasing with some
 * jitter when MOSTLY_UP, else at random), on NTHREADS threads (a run on one
 * thread, now and then another). */
static struct cand *make_cands(size_t n, int64_t range, int mostly_up, int nthreads, uint64_t seed)
{
	struct cand *c = calloc(n, sizeof *c);
	uint64_t s = seed;
	int th = 0;
	for (size_t i = 0; i < n; i++) {
		if (rng_next(&s) % 50 == 0)
			th = (int)(rng_next(&s) % (uint64_t)nthreads);
		if (mostly_up)
			c[i].id = 1 + (int64_t)((uint64_t)((double)i / (double)n * (double)range) +
						rng_next(&s) % 40) % range;
		else
			c[i].id = 1 + (int64_t)(rng_next(&s) % (uint64_t)range);
		c[i].pid = 100 + th % 3;
		c[i].tid = 1000 + th;
		c[i].index = i * 3 + 1;
		c[i].ts = (double)i;
		c[i].end = (double)i + 0.5;
		c[i].flags = rng_next(&s) % 2 ? CM_CAND_CPU_OP : 0;
	}
	return c;
}

/* The candidates' file, as the CPU scan writes it, into PLAN. */
static void write_cands(cm_cpuplan *plan, const struct cand *c, size_t n)
{
	memset(plan, 0, sizeof *plan);
	plan->ext_spill = tmpfile();
	ck_assert_ptr_nonnull(plan->ext_spill);
	for (size_t i = 0; i < n; i++) {
		unsigned char rec[CM_CAND_REC];
		memcpy(rec, &c[i].id, 8);
		memcpy(rec + 8, &c[i].pid, 8);
		memcpy(rec + 16, &c[i].tid, 8);
		memcpy(rec + 24, &c[i].index, 8);
		memcpy(rec + 32, &c[i].ts, 8);
		memcpy(rec + 40, &c[i].end, 8);
		rec[48] = c[i].flags;
		ck_assert_uint_eq(fwrite(rec, sizeof rec, 1, plan->ext_spill), 1);
	}
	plan->n_ext_spill = n;
}

/* The ids the window links: every id of [1, RANGE] whose hash says so. */
static int linked(int64_t id) { return (id * 2654435761u) % 7 < 5; }

static cm_idmap *make_ext(int64_t range)
{
	cm_idmap *ext;
	cm_pages_budget(64u << 20);
	ext = cm_idmap_new(sizeof(struct cm_ext_thread), 1, range, (uint64_t)range);
	ck_assert_ptr_nonnull(ext);
	for (int64_t id = 1; id <= range; id++)
		if (linked(id))
			cm_idmap_put(ext, id, NULL);
	return ext;
}

/* What one reader makes: for each id, the (pid, tid) of its last
 * candidate (pid -1: none), and the threads in order of first use. */
struct model {
	int64_t *pid, *tid;
	struct cm_ext_pt *threads;
	size_t nthreads;
	uint64_t found;
};

static void run_model(struct model *m, const struct cand *c, size_t n, int64_t range)
{
	m->pid = malloc((size_t)(range + 1) * sizeof *m->pid);
	m->tid = malloc((size_t)(range + 1) * sizeof *m->tid);
	m->threads = calloc(n + 1, sizeof *m->threads);
	m->nthreads = 0;
	m->found = 0;
	for (int64_t id = 0; id <= range; id++)
		m->pid[id] = -1;
	for (size_t i = 0; i < n; i++) {
		size_t t;
		if (!linked(c[i].id))
			continue;
		m->found += m->pid[c[i].id] == -1;
		m->pid[c[i].id] = c[i].pid;
		m->tid[c[i].id] = c[i].tid;
		for (t = 0; t < m->nthreads; t++)
			if (m->threads[t].pid == c[i].pid && m->threads[t].tid == c[i].tid)
				break;
		if (t == m->nthreads)
			m->threads[m->nthreads++] = (struct cm_ext_pt){c[i].pid, c[i].tid};
	}
}

static void free_model(struct model *m)
{
	free(m->pid);
	free(m->tid);
	free(m->threads);
}

/* Apply on JOBS threads and compare with the model. */
static void check_apply(size_t n, int64_t range, int mostly_up, int nthreads, int jobs, uint64_t seed)
{
	struct cand *c = make_cands(n, range, mostly_up, nthreads, seed);
	cm_idmap *ext = make_ext(range);
	cm_cpuplan plan;
	struct model m;
	run_model(&m, c, n, range);
	write_cands(&plan, c, n);
	ck_assert_int_eq(cm_cpuindex_apply(NULL, &plan, ext, NULL, NULL, NULL, jobs), 0);
	ck_assert_ptr_null(plan.ext_spill); /* read and closed */
	ck_assert_uint_eq(plan.indexed, m.found);
	ck_assert_uint_eq(plan.ext_threads.n, m.nthreads);
	for (size_t t = 0; t < m.nthreads; t++) {
		ck_assert_int_eq(plan.ext_threads.v[t].pid, m.threads[t].pid);
		ck_assert_int_eq(plan.ext_threads.v[t].tid, m.threads[t].tid);
	}
	for (int64_t id = 1; id <= range; id++) {
		const struct cm_ext_thread *t = cm_idmap_get(ext, id);
		if (!linked(id)) {
			ck_assert_ptr_null(t);
			continue;
		}
		ck_assert_ptr_nonnull(t);
		if (m.pid[id] == -1) {
			ck_assert_uint_eq(t->thread, 0);
			continue;
		}
		ck_assert_uint_ge(t->thread, 1);
		ck_assert_uint_le(t->thread, plan.ext_threads.n);
		ck_assert_int_eq(plan.ext_threads.v[t->thread - 1].pid, m.pid[id]);
		ck_assert_int_eq(plan.ext_threads.v[t->thread - 1].tid, m.tid[id]);
	}
	free_model(&m);
	cm_cpuplan_free(&plan);
	cm_idmap_free(ext);
	free(c);
}

/* Ids at random: the parts meet on most ids, the later part must win. */
START_TEST(random_ids)
{
	static const int jobs[] = {1, 2, 3, 8};
	check_apply(200000, 30000, 0, 7, jobs[_i], 88172645463325252ull + (uint64_t)_i);
}
END_TEST

/* Ids going up, as a trace's counters do: the parts meet at their edges. */
START_TEST(increasing_ids)
{
	static const int jobs[] = {1, 2, 5, 16};
	check_apply(150000, 100000, 1, 40, jobs[_i], 1234567ull + (uint64_t)_i);
}
END_TEST

/* Many threads: past what a small build's tag holds (it goes back to one
 * reader), and many for the full build's lists. */
START_TEST(many_threads)
{
	check_apply(100000, 20000, 0, 5000, 4, 99ull);
}
END_TEST

/* A few candidates: on one thread whatever the jobs (in the full build),
 * the same answers. */
START_TEST(few_candidates)
{
	check_apply(50, 40, 0, 3, 4, 7ull);
	check_apply(1, 1, 0, 1, 4, 8ull);
}
END_TEST

/* Bad candidates (a pid or tid beyond 64 bits): the first one of a linked
 * id, in trace order, is reported, whatever part it fell in; those of ids
 * not linked are not errors. */
START_TEST(first_bad_reported)
{
	const size_t n = 120000;
	const int64_t range = 20000;
	struct cand *c = make_cands(n, range, 1, 3, 4242ull);
	cm_idmap *ext = make_ext(range);
	cm_cpuplan plan;
	cm_diag_slot slot = {0};
	char want[96];
	size_t first = n / 3 + 17, later = n - 50;
	static const int jobs[] = {1, 4};
	/* an unlinked id's bad candidate, early: no error */
	for (int64_t id = 1; id <= range; id++)
		if (!linked(id)) {
			c[5].id = id;
			c[5].flags |= CM_CAND_BAD;
			break;
		}
	while (!linked(c[first].id))
		first++;
	while (!linked(c[later].id))
		later++;
	c[first].flags |= CM_CAND_BAD;
	c[later].flags |= CM_CAND_BAD;
	write_cands(&plan, c, n);
	cm_input *in = cm_input_open(check_tmpfile("{}"), 0);
	ck_assert_ptr_nonnull(in);
	cm_diag_defer(&slot);
	ck_assert_int_eq(cm_cpuindex_apply(in, &plan, ext, NULL, NULL, NULL, jobs[_i]), -1);
	cm_diag_defer(NULL);
	cm_input_close(in);
	ck_assert_ptr_nonnull(slot.line);
	snprintf(want, sizeof want, "traceEvents[%llu]: pid or tid does not fit in 64 bits",
		 (unsigned long long)c[first].index);
	ck_assert_msg(strstr(slot.line, want) != NULL, "got \"%s\", want \"%s\"", slot.line, want);
	free(slot.line);
	cm_cpuplan_free(&plan);
	cm_idmap_free(ext);
	free(c);
}
END_TEST

/* With an operator callback, every cpu_op candidate that fits goes to it,
 * in trace order, on any number of jobs; and the index is the same. */
struct ops_seen {
	const struct cand *c;
	size_t n, at;
	int in_order;
};

static int note_op(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext)
{
	struct ops_seen *o = ctx;
	while (o->at < o->n && o->c[o->at].flags != CM_CAND_CPU_OP)
		o->at++;
	if (o->at == o->n || o->c[o->at].pid != pid || o->c[o->at].tid != tid || o->c[o->at].ts != ts ||
	    o->c[o->at].end != end || o->c[o->at].id != ext)
		o->in_order = 0;
	o->at++;
	return 0;
}

START_TEST(ops_in_order)
{
	const size_t n = 90000;
	const int64_t range = 30000;
	struct cand *c = make_cands(n, range, 0, 4, 555ull);
	cm_idmap *ext = make_ext(range);
	cm_cpuplan plan;
	struct model m;
	struct ops_seen o = {c, n, 0, 1};
	for (size_t i = 0; i < n; i += 997) /* bad ones of unlinked ids: not handed over */
		if (!linked(c[i].id))
			c[i].flags |= CM_CAND_BAD;
	run_model(&m, c, n, range);
	write_cands(&plan, c, n);
	ck_assert_int_eq(cm_cpuindex_apply(NULL, &plan, ext, note_op, NULL, &o, 8), 0);
	ck_assert(o.in_order);
	while (o.at < n && c[o.at].flags != CM_CAND_CPU_OP)
		o.at++;
	ck_assert_uint_eq(o.at, n); /* none left over */
	ck_assert_uint_eq(plan.indexed, m.found);
	ck_assert_uint_eq(plan.ext_threads.n, m.nthreads);
	free_model(&m);
	cm_cpuplan_free(&plan);
	cm_idmap_free(ext);
	free(c);
}
END_TEST

/* With an annotation callback too, every user_annotation candidate whose
 * pid and tid fit goes to it, in trace order, with its name from the names
 * file (one record a user_annotation candidate, bad ones included: they are
 * read past): a string, an empty one, or NULL for one that is not a string;
 * the operators still go to theirs. */
struct anns_seen {
	const struct cand *c;
	size_t n, at;
	int in_order;
	uint64_t nulls, empties, ops;
};

static int note_ann(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext, const char *name,
		    size_t len)
{
	struct anns_seen *o = ctx;
	char want[32];
	while (o->at < o->n && (o->c[o->at].flags & (CM_CAND_CPU_OP | CM_CAND_BAD)))
		o->at++;
	if (o->at == o->n || o->c[o->at].pid != pid || o->c[o->at].tid != tid || o->c[o->at].ts != ts ||
	    o->c[o->at].end != end || o->c[o->at].id != ext)
		o->in_order = 0;
	/* the names written below: by the candidate's index */
	if (o->at % 5 == 0) {
		o->nulls += !name;
		if (name)
			o->in_order = 0;
	} else if (o->at % 5 == 1) {
		o->empties += name && len == 0;
		if (!name || len)
			o->in_order = 0;
	} else {
		snprintf(want, sizeof want, "ann %zu", o->at);
		if (!name || len != strlen(want) || memcmp(name, want, len))
			o->in_order = 0;
	}
	o->at++;
	return 0;
}

static int count_op(void *ctx, int64_t pid, int64_t tid, double ts, double end, int64_t ext)
{
	(void)pid, (void)tid, (void)ts, (void)end, (void)ext;
	((struct anns_seen *)ctx)->ops++;
	return 0;
}

START_TEST(anns_in_order)
{
	const size_t n = 20000;
	const int64_t range = 30000;
	struct cand *c = make_cands(n, range, 0, 4, 777ull);
	cm_idmap *ext = make_ext(range);
	cm_cpuplan plan;
	struct anns_seen o = {c, n, 0, 1, 0, 0, 0};
	uint64_t want_ops = 0, want_nulls = 0, want_empties = 0;
	for (size_t i = 0; i < n; i += 101) /* bad ones of unlinked ids: read past */
		if (!linked(c[i].id))
			c[i].flags |= CM_CAND_BAD;
	write_cands(&plan, c, n);
	plan.ann_names = tmpfile();
	ck_assert_ptr_nonnull(plan.ann_names);
	for (size_t i = 0; i < n; i++) {
		char name[32];
		uint32_t len;
		if (c[i].flags & CM_CAND_CPU_OP) {
			want_ops += !(c[i].flags & CM_CAND_BAD);
			continue;
		}
		snprintf(name, sizeof name, "ann %zu", i);
		len = i % 5 == 0 ? CM_ANN_NOT_STR : i % 5 == 1 ? 0 : (uint32_t)strlen(name);
		if (!(c[i].flags & CM_CAND_BAD)) {
			want_nulls += i % 5 == 0;
			want_empties += i % 5 == 1;
		}
		ck_assert_uint_eq(fwrite(&len, 4, 1, plan.ann_names), 1);
		if (len != CM_ANN_NOT_STR && len)
			ck_assert_uint_eq(fwrite(name, 1, len, plan.ann_names), len);
	}
	ck_assert_int_eq(cm_cpuindex_apply(NULL, &plan, ext, count_op, note_ann, &o, 4), 0);
	ck_assert(o.in_order);
	while (o.at < n && (c[o.at].flags & (CM_CAND_CPU_OP | CM_CAND_BAD)))
		o.at++;
	ck_assert_uint_eq(o.at, n); /* none left over */
	ck_assert_uint_eq(o.ops, want_ops);
	ck_assert_uint_eq(o.nulls, want_nulls);
	ck_assert_uint_eq(o.empties, want_empties);
	ck_assert_ptr_null(plan.ann_names); /* read and closed */
	cm_cpuplan_free(&plan);
	cm_idmap_free(ext);
	free(c);
}
END_TEST

/* The slices of a table: together, every entry once, each slice in
 * increasing id (cm_idmap_each_slice, which the last walk uses). */
static int count_entry(void *ctx, int64_t id, void *val)
{
	int64_t *seen = ctx;
	(void)val;
	if (id <= seen[1])
		seen[2] = 1; /* out of order */
	seen[1] = id;
	seen[0]++;
	return 0;
}

START_TEST(slices_cover_table)
{
	cm_idmap *ext = make_ext(70001);
	int64_t want = 0;
	for (int64_t id = 1; id <= 70001; id++)
		want += linked(id);
	for (int slices = 1; slices <= 9; slices++) {
		int64_t total = 0;
		for (int s = 0; s < slices; s++) {
			int64_t seen[3] = {0, INT64_MIN, 0};
			ck_assert_int_eq(cm_idmap_each_slice(ext, s, slices, count_entry, seen), 0);
			ck_assert_int_eq(seen[2], 0);
			total += seen[0];
		}
		ck_assert_int_eq(total, want);
	}
	cm_idmap_free(ext);
}
END_TEST

static Suite *cpuindex_suite(void)
{
	Suite *s = suite_create("cpuindex");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, random_ids, 0, 4);
	tcase_add_loop_test(tc, increasing_ids, 0, 4);
	tcase_add_test(tc, many_threads);
	tcase_add_test(tc, few_candidates);
	tcase_add_loop_test(tc, first_bad_reported, 0, 2);
	tcase_add_test(tc, ops_in_order);
	tcase_add_test(tc, anns_in_order);
	tcase_add_test(tc, slices_cover_table);
	suite_add_tcase(s, tc);
	return s;
}

CHECK_MAIN(cpuindex_suite)
