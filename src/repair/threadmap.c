/* threadmap.c - the thread-map reader and the opaque-id -> kernel-tid rules.
 *
 * Kineto writes a CUDA API record's thread as abs((int32)pthread_self())
 * (PyTorch <= 2.3: the signed value) when the thread never ran a profiled op.
 * A thread map lists, per process, each thread's pthread_self() and gettid();
 * from it every row of such ids can be put back on its kernel tid.  Two
 * ambiguities are refused rather than guessed: a pthread_t reused by another
 * thread later (glibc reuses stacks) is told apart by lifetimes when the map
 * has them, and an id that is also a mapped thread's real tid stays. */
#include "config.h"
#include "repair/threadmap.h"
#include "base/diag.h"
#include "json/docread.h"
#include "base/exitcode.h"
#include "base/hmap.h"
#include "io/input.h"
#include "base/pyval.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The pid of entries that apply to every process (a Python map without a
 * "meta" pid): no real process has it. */
#define ANY_PID INT64_MIN

struct ent {
	int64_t pid, tid;
	int32_t id; /* int32 of pthread_self() */
	char *name;
	int has_start, has_end;
	double start_ns, end_ns;
	int pid_from_meta; /* Python shape: the pid comes from "meta" */
};

struct node {
	uint32_t ent, next;
};

struct cm_threadmap {
	struct ent *ents;
	size_t n, cap;
	struct node *nodes;
	size_t nn, capn;
	cm_hmap *index; /* (pid, opaque id) -> first node + 1 */
	cm_hmap *real;  /* (pid, tid) of mapped threads */
	/* loading */
	const char *path;
	int64_t meta_pid;
	int have_meta_pid, shapes;
};

size_t cm_threadmap_count(const cm_threadmap *m) { return m->n; }

void cm_threadmap_free(cm_threadmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->ents[i].name);
	free(m->ents);
	free(m->nodes);
	cm_hmap_free(m->index);
	cm_hmap_free(m->real);
	free(m);
}

static struct ent *add_ent(cm_threadmap *m)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->ents = cm_xrealloc(m->ents, m->cap * sizeof *m->ents);
	}
	memset(&m->ents[m->n], 0, sizeof *m->ents);
	return &m->ents[m->n++];
}

/* An integer value (a JSON integer, or a string of one) that fits 64 bits. */
static int int_of(const cm_jval *v, int64_t *out)
{
	cm_int x;
	int rc;
	if (!v)
		return -1;
	if (v->type == CM_J_NUM && cm_py_number_is_int(v->s, v->len))
		rc = cm_py_int_of_number(v->s, v->len, &x);
	else if (v->type == CM_J_STR)
		rc = cm_py_int_of_str(v->s, v->len, &x);
	else
		return -1;
	if (rc != CM_PY_OK || x < INT64_MIN || x > (cm_int)UINT64_MAX)
		return -1;
	*out = (int64_t)(uint64_t)(unsigned __int128)x; /* pthread_t values use all 64 bits */
	return 0;
}

static int bad(cm_threadmap *m, int64_t offset, const char *what)
{
	return cm_fail(CM_EXIT_DATA, m->path, offset, "thread map: %s", what);
}

static void set_name(struct ent *e, const cm_jval *v)
{
	if (v && v->type == CM_J_STR) {
		e->name = cm_xmalloc(v->len + 1);
		memcpy(e->name, v->s, v->len);
		e->name[v->len] = 0;
	}
}

static void set_time(const cm_jval *v, int *has, double *ns)
{
	int64_t t;
	if (v && v->type == CM_J_NUM && int_of(v, &t) == 0) {
		*has = 1;
		*ns = (double)t;
	}
}

/* cuptimerge's own shape: {"<pid>": [{"tid", "pthread", "name", "start_ns", "end_ns"}]} */
static int load_processes(cm_threadmap *m, const cm_jval *v, int64_t off)
{
	if (v->type != CM_J_OBJ)
		return bad(m, off, "\"processes\" is not an object");
	for (const cm_jval *p = v->kids; p; p = p->next) {
		cm_jval key = {.type = CM_J_STR, .len = p->klen, .s = p->key};
		int64_t pid, pth;
		if (int_of(&key, &pid) < 0 || p->type != CM_J_ARR)
			return bad(m, off, "\"processes\" must map pids to arrays of threads");
		for (const cm_jval *t = p->kids; t; t = t->next) {
			struct ent *e;
			int64_t tid;
			if (int_of(cm_jval_get(t, "tid"), &tid) < 0 || int_of(cm_jval_get(t, "pthread"), &pth) < 0)
				return bad(m, off, "a thread lacks an integer \"tid\" or \"pthread\"");
			e = add_ent(m);
			e->pid = pid;
			e->tid = tid;
			e->id = (int32_t)(uint32_t)(uint64_t)pth;
			set_name(e, cm_jval_get(t, "name"));
			set_time(cm_jval_get(t, "start_ns"), &e->has_start, &e->start_ns);
			set_time(cm_jval_get(t, "end_ns"), &e->has_end, &e->end_ns);
		}
	}
	return 0;
}

/* A window's {"<pid>": {"<int32 id>": tid}}. */
static int load_trm(cm_threadmap *m, const cm_jval *v, int64_t off)
{
	if (v->type != CM_J_OBJ)
		return bad(m, off, "\"thread_resource_map\" is not an object");
	for (const cm_jval *p = v->kids; p; p = p->next) {
		cm_jval pkey = {.type = CM_J_STR, .len = p->klen, .s = p->key};
		int64_t pid;
		if (int_of(&pkey, &pid) < 0 || p->type != CM_J_OBJ)
			return bad(m, off, "\"thread_resource_map\" must map pids to objects");
		for (const cm_jval *t = p->kids; t; t = t->next) {
			cm_jval ikey = {.type = CM_J_STR, .len = t->klen, .s = t->key};
			int64_t id, tid;
			struct ent *e;
			if (int_of(&ikey, &id) < 0 || int_of(t, &tid) < 0)
				return bad(m, off, "a \"thread_resource_map\" entry is not an integer");
			e = add_ent(m);
			e->pid = pid;
			e->tid = tid;
			e->id = (int32_t)(uint32_t)(uint64_t)id;
		}
	}
	return 0;
}

/* The Python snippet's {"<ident>": {"native_id", "name", "ident_i32"}}. */
static int load_threads(cm_threadmap *m, const cm_jval *v, int64_t off)
{
	if (v->type != CM_J_OBJ)
		return bad(m, off, "\"threads\" is not an object");
	for (const cm_jval *t = v->kids; t; t = t->next) {
		cm_jval key = {.type = CM_J_STR, .len = t->klen, .s = t->key};
		int64_t ident, tid, i32;
		struct ent *e;
		if (int_of(&key, &ident) < 0 || int_of(cm_jval_get(t, "native_id"), &tid) < 0)
			return bad(m, off, "a \"threads\" entry lacks an integer ident or \"native_id\"");
		e = add_ent(m);
		e->pid_from_meta = 1;
		e->tid = tid;
		e->id = int_of(cm_jval_get(t, "ident_i32"), &i32) == 0 ? (int32_t)i32
								   : (int32_t)(uint32_t)(uint64_t)ident;
		set_name(e, cm_jval_get(t, "name"));
	}
	return 0;
}

static int on_member(void *ctx, const char *key, size_t klen, const cm_jval *val, int64_t off)
{
	cm_threadmap *m = ctx;
	if (!strcmp(key, "thread_map_version")) {
		int64_t v;
		if (int_of(val, &v) < 0 || v != 1)
			return bad(m, off, "unknown \"thread_map_version\" (this reads version 1)");
		return 0;
	}
	if (!strcmp(key, "processes"))
		return m->shapes++, load_processes(m, val, off);
	if (!strcmp(key, "thread_resource_map"))
		return m->shapes++, load_trm(m, val, off);
	if (!strcmp(key, "threads"))
		return m->shapes++, load_threads(m, val, off);
	if (!strcmp(key, "meta")) {
		m->have_meta_pid = int_of(cm_jval_get(val, "pid"), &m->meta_pid) == 0;
		return 0;
	}
	return 0;
}

static int wants(void *ctx, const char *key, size_t klen)
{
	return !strcmp(key, "thread_map_version") || !strcmp(key, "processes") ||
	       !strcmp(key, "thread_resource_map") || !strcmp(key, "threads") || !strcmp(key, "meta");
}

/* File entry E under (PID, ID). */
static void index_key(cm_threadmap *m, int64_t pid, int64_t id, uint32_t e)
{
	int64_t key[2] = {pid, id};
	uint32_t *head = cm_hmap_put(m->index, key, NULL);
	if (m->nn == m->capn) {
		m->capn = m->capn ? 2 * m->capn : 128;
		m->nodes = cm_xrealloc(m->nodes, m->capn * sizeof *m->nodes);
	}
	m->nodes[m->nn].ent = e;
	m->nodes[m->nn].next = *head; /* 0: end of the chain; else node + 1 */
	*head = (uint32_t)++m->nn;
}

cm_threadmap *cm_threadmap_load(const char *path, size_t bufsize)
{
	cm_threadmap *m;
	cm_input *in = cm_input_open(path, bufsize);
	cm_docread_sink sink;
	int rc;
	if (!in)
		return NULL;
	m = cm_xcalloc(1, sizeof *m);
	m->path = cm_input_name(in);
	memset(&sink, 0, sizeof sink);
	sink.member = on_member;
	sink.wants_member = wants;
	sink.ctx = m;
	rc = cm_docread_run(in, "events", "thread map", &sink, "reading the thread map", NULL);
	if (rc == 0 && !m->shapes)
		rc = bad(m, -1, "no \"processes\", \"thread_resource_map\" or \"threads\" member");
	cm_input_close(in);
	if (rc < 0) {
		cm_threadmap_free(m);
		return NULL;
	}
	m->path = NULL;
	m->index = cm_hmap_new(16, 4);
	m->real = cm_hmap_new(16, 1);
	for (size_t i = 0; i < m->n; i++) {
		struct ent *e = &m->ents[i];
		int64_t rkey[2];
		if (e->pid_from_meta)
			e->pid = m->have_meta_pid ? m->meta_pid : ANY_PID;
		index_key(m, e->pid, e->id, (uint32_t)i);
		if (e->id < 0)
			index_key(m, e->pid, -(int64_t)e->id, (uint32_t)i); /* Kineto's abs() */
		rkey[0] = e->pid;
		rkey[1] = e->tid;
		cm_hmap_put(m->real, rkey, NULL);
	}
	return m;
}

/* Collect the candidates under (PID, TID) into C (at most MAX). */
static size_t candidates(const cm_threadmap *m, int64_t pid, int64_t tid, const struct ent **c, size_t max)
{
	size_t n = 0;
	int64_t pids[2] = {pid, ANY_PID};
	for (int k = 0; k < 2; k++) {
		int64_t key[2] = {pids[k], tid};
		const uint32_t *head = cm_hmap_get(m->index, key);
		for (uint32_t nd = head ? *head : 0; nd && n < max; nd = m->nodes[nd - 1].next)
			c[n++] = &m->ents[m->nodes[nd - 1].ent];
	}
	return n;
}

static int is_real(const cm_threadmap *m, int64_t pid, int64_t tid)
{
	int64_t a[2] = {pid, tid}, b[2] = {ANY_PID, tid};
	return cm_hmap_get(m->real, a) || cm_hmap_get(m->real, b);
}

int cm_threadmap_resolve(const cm_threadmap *m, int64_t pid, int64_t tid, int have_ns, double abs_ns,
			 int64_t *new_tid, const char **name)
{
	const struct ent *c[64], *pick = NULL;
	size_t n = candidates(m, pid, tid, c, 64), alive = 0;
	int distinct = 0;
	if (!n)
		return CM_TM_NONE;
	/* keep the threads alive at the event's time, if any are */
	if (have_ns) {
		for (size_t i = 0; i < n; i++)
			if ((!c[i]->has_start || c[i]->start_ns <= abs_ns) && (!c[i]->has_end || abs_ns <= c[i]->end_ns))
				c[alive++] = c[i];
		if (alive)
			n = alive;
	}
	for (size_t i = 0; i < n; i++) {
		if (!pick || c[i]->tid != pick->tid)
			distinct++;
		if (!pick || c[i]->tid != pick->tid || (!pick->name && c[i]->name))
			pick = c[i];
	}
	if (distinct > 1)
		return CM_TM_AMBIG_REUSE;
	if (pick->tid == tid)
		return CM_TM_NONE;
	if (is_real(m, pid, tid))
		return CM_TM_AMBIG_REAL;
	*new_tid = pick->tid;
	if (name)
		*name = pick->name;
	return CM_TM_MOVE;
}
