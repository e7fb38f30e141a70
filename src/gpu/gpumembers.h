/* gpumembers.h - the members of the events the render writes, recorded as
 * it writes them: for an encoder that takes an element's value rather
 * than its text (the .pftrace's, cm_gpu_write_groups), the tree that
 * cm_jval_parse_py would make of the element's text, made without reading
 * the text again.
 *
 * The render writes each member's text as before and notes here, at the
 * same place, what it wrote: its key (a literal of the render's, which
 * outlives the tree), its type, where its text lies in the buffer (a
 * pointer into it as it is then, and its offset: the buffer may move as it
 * grows, and then the pointers are made again from the offsets once the
 * record's elements are written, gpu_members_fix; it seldom moves, and
 * making every pointer again was 13 M instructions of the 50k pair's
 * .pftrace merge, BENCHMARKS.md "pfrender17") and, for an integer or a time,
 * the value that the .pftrace's parser keeps with a number (has_iv, as
 * pftrace/pfevent.h's CM_PF_IV_* say; left 0 where that parser would keep
 * none or where this cannot say it cheaply: the encoder then reads the
 * text, as it does for a number with none).  A string whose text holds an
 * escape is not the bytes of its text: that element is marked to be
 * parsed from its text (bad), as is an event with an annotation, whose
 * args the render collects and writes elsewhere (gpuargs.c).
 *
 * The lean mode (gpu_members_lean_int, _lean_time): where nothing reads
 * an element's text but through its tree (the encoder reads the text of
 * an element given as a tree only where it says so, cm_pft_enc_reads_text),
 * a number whose value its node keeps is not written at all, only noted:
 * its digits were a third of the render's instructions (BENCHMARKS.md
 * "pfrender18").  So is what else the render can note whole: a flow
 * (gpu_members_flow), an X event's head whose name needs no escape (its
 * node then points into the render's tables, which outlive the tree).
 * The text is then no JSON, so a record with an element to be parsed
 * (bad) is rendered again, not lean (gpuencgroups.c).
 *
 * One record's elements at a time (an X event and its flow): fixed
 * arrays, so that the nodes do not move while they are linked.  An API
 * call's X event, a flow and a kernel's X head, noted whole in the lean
 * mode, lie in places of their own past the record's nodes, where
 * gpu_members_init (before the first record) wrote what never changes in
 * them: each record writes their values only (BENCHMARKS.md "pfrender19"). */
#ifndef CM_GPUMEMBERS_H
#define CM_GPUMEMBERS_H

#include "json/jval.h"
#include "base/buf.h"
#include "base/pyval.h"

#include <stdint.h>
#include <string.h>

/* Nodes of one record's elements (an X event: 9 members and 20 args at
 * most, 8 more for its grid and block; its flow: 8). */
#define GPU_MEMBERS_MAX 96
/* Elements of one record (an X event and its flow). */
#define GPU_MEMBERS_ELS 2
/* Past them, the nodes of gpu_members_x's X event (12), of
 * gpu_members_flow's flow (9) and of gpu_members_head's head (5), in
 * places of their own: what never changes in them written once
 * (gpu_members_init), the rest by each record. */
#define GPU_MEMBERS_X_AT GPU_MEMBERS_MAX
#define GPU_MEMBERS_FLOW_AT (GPU_MEMBERS_MAX + 12)
#define GPU_MEMBERS_HEAD_AT (GPU_MEMBERS_FLOW_AT + 9)
#define GPU_MEMBERS_ALL (GPU_MEMBERS_HEAD_AT + 5)
/* Containers open at once: the event, its args, an array arg. */
#define GPU_MEMBERS_DEPTH 3
/* No text: a node whose s is a literal, or a container. */
#define GPU_NO_TEXT SIZE_MAX

struct gpu_members {
	cm_jval v[GPU_MEMBERS_ALL];
	size_t off[GPU_MEMBERS_ALL]; /* where each node's text begins in the buffer */
	unsigned n;                 /* nodes so far */
	unsigned nel;               /* elements so far */
	unsigned root[GPU_MEMBERS_ELS];
	unsigned char bad[GPU_MEMBERS_ELS]; /* parse it from its text */
	cm_jval *cont[GPU_MEMBERS_DEPTH];   /* the open containers */
	cm_jval **link[GPU_MEMBERS_DEPTH];  /* where their next kid is linked */
	int depth;
	unsigned pid, tid; /* the last row's members, for its flow (gpu_members_row) */
	const char *base;  /* the buffer's bytes at gpu_members_reset */
	int moved;         /* a node's pointer made with other bytes than base */
	int lean;          /* the lean mode: no text for a number kept whole (the caller's) */
	/* the record's X event, flow or head noted in its place
	 * (GPU_MEMBERS_X_AT, _FLOW_AT, _HEAD_AT): another of the record's is
	 * noted node by node */
	unsigned char x_used, flow_used, head_used;
};

/* Forget the last record's elements; B is the buffer its elements will
 * be written in. */
static inline void gpu_members_reset(struct gpu_members *m, const cm_buf *b)
{
	m->n = m->nel = 0;
	m->depth = 0;
	m->base = b->p;
	m->moved = 0;
	m->x_used = m->flow_used = m->head_used = 0;
}

/* The node just added, V, has its text at AT of B: its offset, and its
 * pointer as B is now (made again by gpu_members_fix if B's bytes are not
 * base's at the end). */
static inline void gpu_members_at(struct gpu_members *m, cm_jval *v, const cm_buf *b, size_t at)
{
	m->off[m->n - 1] = at;
	v->s = b->p + at;
	if (b->p != m->base)
		m->moved = 1;
}

/* The current element cannot be given as a tree: its text is parsed. */
static inline void gpu_members_bad(struct gpu_members *m)
{
	if (m->nel && m->nel <= GPU_MEMBERS_ELS)
		m->bad[m->nel - 1] = 1;
}

/* gpu_members_add's node, its kno KNO (the member's CM_JK_*, jval.h). */
static inline cm_jval *gpu_members_add_k(struct gpu_members *m, const char *key, size_t klen, int type,
					 unsigned char kno)
{
	cm_jval *v;
	int d = m->depth - 1;
	if (m->n == GPU_MEMBERS_MAX || d < 0) {
		gpu_members_bad(m);
		return NULL;
	}
	v = &m->v[m->n];
	m->off[m->n++] = GPU_NO_TEXT;
	v->type = (unsigned char)type;
	v->key = key;
	v->klen = (uint32_t)klen;
	v->kno = kno;
	v->sfix = 0;
	v->len = 0;
	v->kids = v->next = NULL;
	v->s = NULL;
	v->has_iv = 0; /* (iv: the caller's, where it means something) */
	*m->link[d] = v; /* (the container's kids or its last kid's next) */
	m->link[d] = &v->next;
	m->cont[d]->len++;
	return v;
}

/* A node under the open container, named KEY[0..KLEN) (a literal; NULL in
 * an array), of TYPE; NULL when the arrays are full (the element is then
 * parsed from its text).  An event's member says which it is (kno,
 * jval.h's cm_jkey_no: its key mostly a constant here, so the compiler
 * works it out; the .pftrace's encoder then compares no key bytes), a
 * node deeper none (CM_JK_OTHER). */
static inline cm_jval *gpu_members_add(struct gpu_members *m, const char *key, size_t klen, int type)
{
	return gpu_members_add_k(m, key, klen, type, m->depth > 1 ? CM_JK_OTHER : cm_jkey_no(key, klen));
}

/* A new element (its text begins here): its object opened. */
static inline void gpu_members_element(struct gpu_members *m)
{
	cm_jval *v;
	if (m->nel >= GPU_MEMBERS_ELS || m->n == GPU_MEMBERS_MAX) { /* cannot happen: the render's kinds */
		m->nel = GPU_MEMBERS_ELS + 1; /* every element of the record parsed */
		m->depth = 0;                 /* and no node added */
		return;
	}
	m->root[m->nel] = m->n;
	m->bad[m->nel++] = 0;
	v = &m->v[m->n];
	m->off[m->n++] = GPU_NO_TEXT;
	memset(v, 0, sizeof *v);
	v->type = CM_J_OBJ; /* (key NULL: the element is no member) */
	m->cont[0] = v;
	m->link[0] = &v->kids;
	m->depth = 1;
}

/* Open the container KEY of TYPE under the open one. */
static inline void gpu_members_open(struct gpu_members *m, const char *key, size_t klen, int type)
{
	cm_jval *v = gpu_members_add(m, key, klen, type);
	if (!v || m->depth == GPU_MEMBERS_DEPTH) {
		gpu_members_bad(m);
		return;
	}
	m->cont[m->depth] = v;
	m->link[m->depth++] = &v->kids;
}

static inline void gpu_members_close(struct gpu_members *m)
{
	if (m->depth > 1)
		m->depth--;
}

/* A string member whose value is the literal S[0..N) (no escape). */
static inline void gpu_members_lit(struct gpu_members *m, const char *key, size_t klen, const char *s, size_t n)
{
	cm_jval *v = gpu_members_add(m, key, klen, CM_J_STR);
	if (v) {
		v->s = s;
		v->len = (uint32_t)n;
	}
}

/* A string member whose JSON text (its quotes too) is B's bytes from AT
 * to the end: its bytes, or the element parsed when the text has an
 * escape. */
static inline void gpu_members_str(struct gpu_members *m, const char *key, size_t klen, const cm_buf *b, size_t at)
{
	cm_jval *v;
	if (memchr(b->p + at + 1, '\\', b->len - at - 2)) {
		gpu_members_bad(m);
		return;
	}
	if ((v = gpu_members_add(m, key, klen, CM_J_STR)) != NULL) {
		gpu_members_at(m, v, b, at + 1);
		v->len = (uint32_t)(b->len - at - 2);
	}
}

/* A number member whose text is B's bytes from AT to the end; the node,
 * its value not kept (NULL: the element is parsed). */
static inline cm_jval *gpu_members_num(struct gpu_members *m, const char *key, size_t klen, const cm_buf *b, size_t at)
{
	cm_jval *v = gpu_members_add(m, key, klen, CM_J_NUM);
	if (v) {
		gpu_members_at(m, v, b, at);
		v->len = (uint32_t)(b->len - at);
	}
	return v;
}

/* An integer member X written by cm_jw_int from AT: its value kept as
 * the parser keeps an integer literal of 18 digits at most (CM_PF_IV_INT,
 * pfevent.h: 1). */
static inline void gpu_members_int(struct gpu_members *m, const char *key, size_t klen, const cm_buf *b, size_t at,
				   cm_int x)
{
	cm_jval *v = gpu_members_num(m, key, klen, b, at);
	if (v && x > -1000000000000000000 && x < 1000000000000000000) {
		v->iv = (int64_t)x;
		v->has_iv = 1;
	}
}

/* The integer member X in the lean mode, when its node keeps its value
 * (gpu_members_int's range): noted with its value alone, no text (its
 * text "", not read), 1; else 0, nothing done, and the caller writes its
 * text and notes it (M NULL, as for the JSON's render: 0). */
static inline int gpu_members_lean_int(struct gpu_members *m, const char *key, size_t klen, cm_int x)
{
	cm_jval *v;
	if (!m || !m->lean || !(x > -1000000000000000000 && x < 1000000000000000000))
		return 0;
	if ((v = gpu_members_add(m, key, klen, CM_J_NUM)) != NULL) { /* (NULL: marked bad, rendered again) */
		v->s = "";
		v->iv = (int64_t)x;
		v->has_iv = 1;
	}
	return 1;
}

/* The time member of NS nanoseconds in the lean mode, as
 * gpu_members_lean_int (gpu_members_time's range, CM_PF_IV_NS). */
static inline int gpu_members_lean_time(struct gpu_members *m, const char *key, size_t klen, cm_int ns)
{
	cm_jval *v;
	if (!m || !m->lean || !(ns >= 0 && ns < CM_PY_MILLI_MAX))
		return 0;
	if ((v = gpu_members_add(m, key, klen, CM_J_NUM)) != NULL) {
		v->s = "";
		v->iv = (int64_t)ns;
		v->has_iv = 2;
	}
	return 1;
}

/* A time member of NS nanoseconds, written by cm_jw_us_text from AT: below
 * CM_PY_MILLI_MAX its text is repr(NS / 1000) with 1 to 3 decimals, whose
 * nanoseconds the parser keeps (CM_PF_IV_NS, pfevent.h: 2); else the text
 * is read. */
static inline void gpu_members_time(struct gpu_members *m, const char *key, size_t klen, const cm_buf *b, size_t at,
				    cm_int ns)
{
	cm_jval *v = gpu_members_num(m, key, klen, b, at);
	if (v && ns >= 0 && ns < CM_PY_MILLI_MAX) {
		v->iv = (int64_t)ns;
		v->has_iv = 2;
	}
}

/* The pid and tid members of the row just written (gpu_members_int's
 * nodes PID and TID, noted for the flow that copies the row's text). */
static inline void gpu_members_row(struct gpu_members *m)
{
	m->pid = m->n >= 2 ? m->n - 2 : 0;
	m->tid = m->n >= 1 ? m->n - 1 : 0;
}

/* The row noted by gpu_members_row again, its text copied from ROW to AT
 * in the buffer B (a member of the lean mode without text: its value). */
static inline void gpu_members_row_copy(struct gpu_members *m, const cm_buf *b, size_t row, size_t at)
{
	for (int i = 0; i < 2; i++) {
		unsigned k = i ? m->tid : m->pid;
		const cm_jval *src = &m->v[k]; /* (the arrays do not move) */
		cm_jval *v;
		size_t off = m->off[k];
		if ((off == GPU_NO_TEXT && !(m->lean && src->type == CM_J_NUM && src->has_iv)) ||
		    !(v = gpu_members_add_k(m, src->key, src->klen, src->type, src->kno))) {
			gpu_members_bad(m);
			return;
		}
		if (off != GPU_NO_TEXT)
			gpu_members_at(m, v, b, off - row + at);
		else
			v->s = src->s;
		v->len = src->len;
		v->iv = src->iv;
		v->has_iv = src->has_iv;
	}
}

/* gpu_members_node's node, its kno KNO (CM_JK_*). */
static inline void gpu_members_node_k(cm_jval *w, int type, const char *key, size_t klen, unsigned char kno,
				      const char *s, size_t len)
{
	w->type = (unsigned char)type;
	w->key = key;
	w->klen = (uint32_t)klen;
	w->kno = kno;
	w->sfix = 0;
	w->s = s;
	w->len = (uint32_t)len;
	w->kids = NULL;
	w->next = w + 1;
	w->has_iv = 0;
}

/* The node W of an event's member written whole: KEY[0..KLEN) (a
 * constant: its kno worked out when compiled) of TYPE, its text S[0..LEN),
 * no value kept, linked to the node after it (gpu_members_flow's nodes are
 * consecutive). */
static inline void gpu_members_node(cm_jval *w, int type, const char *key, size_t klen, const char *s, size_t len)
{
	gpu_members_node_k(w, type, key, klen, cm_jkey_no(key, klen), s, len);
}

/* A new element, an ac2g flow ({"ph":PH,"id":ID,"pid":..,"tid":..,
 * "ts":..,"cat":"ac2g","name":"ac2g"} and "bp":"e" for an "f"), noted at
 * once in the lean mode, its row's members (gpu_members_row's) and every
 * number kept whole: 1; else 0, nothing done, and the caller notes it
 * member by member.  (Node by node, through gpu_members_add, a flow's
 * members were 360 instructions, 25 M of the 50k pair's .pftrace merge:
 * BENCHMARKS.md "pfrender18".)  Its nodes come in the order the text's
 * members do. */
static inline int gpu_members_flow(struct gpu_members *m, char ph, cm_int id, cm_int ts_ns)
{
	unsigned n = GPU_MEMBERS_FLOW_AT, k = ph == 'f' ? 8 : 7;
	cm_jval *v = &m->v[n];
	if (!m->lean || m->nel >= GPU_MEMBERS_ELS || m->flow_used ||
	    !(id > -1000000000000000000 && id < 1000000000000000000) || !(ts_ns >= 0 && ts_ns < CM_PY_MILLI_MAX))
		return 0;
	for (int i = 0; i < 2; i++) { /* the row's: values alone (gpu_members_row_copy's) */
		unsigned r = i ? m->tid : m->pid;
		if (m->off[r] != GPU_NO_TEXT || m->v[r].type != CM_J_NUM || !m->v[r].has_iv)
			return 0;
	}
	m->flow_used = 1;
	m->root[m->nel] = n;
	m->bad[m->nel++] = 0;
	/* its nodes in their place, where gpu_members_init wrote what does not
	 * change: the rest here (all of a node, 25 M instructions of the 50k
	 * pair's .pftrace merge: BENCHMARKS.md "pfrender19") */
	v[0].len = k;
	v[1].s = ph == 'f' ? "f" : "s";
	v[2].iv = (int64_t)id;
	for (int i = 0; i < 2; i++) {
		const cm_jval *src = &m->v[i ? m->tid : m->pid];
		cm_jval *w = &v[3 + i];
		gpu_members_node_k(w, CM_J_NUM, src->key, src->klen, src->kno, src->s, src->len);
		w->iv = src->iv;
		w->has_iv = src->has_iv;
	}
	v[5].iv = (int64_t)ts_ns;
	v[7].next = k == 8 ? &v[8] : NULL;
	v[8].next = NULL;
	m->cont[0] = v; /* (nothing more is added to it: its last kid ends the element) */
	m->link[0] = &v[k].next;
	m->depth = 1;
	return 1;
}

/* A new element, an X event {"ph":"X","cat":CAT,"name":NAME,"pid":PID,
 * "tid":TID,"ts":TS_NS,"dur":DUR_NS,"args":{KEYS[i]:VALS[i], ...}} with N
 * integer args (3 at most; the keys literals), noted at once in the lean
 * mode, CAT's and NAME's bytes their text's (no escape; CAT a literal,
 * sfix) and every number
 * kept whole: 1, its row noted for its flow (gpu_members_row); else 0,
 * nothing done, and the caller notes it member by member (an API call's
 * nodes so were 12 a call through gpu_members_add, BENCHMARKS.md
 * "pfrender18").  Its nodes come in the order the text's members do. */
static inline int gpu_members_x(struct gpu_members *m, const char *cat, size_t catlen, const char *name, size_t nlen,
				cm_int pid, cm_int tid, cm_int ts_ns, cm_int dur_ns, const char *const *keys,
				const unsigned char *klens, const cm_int *vals, unsigned n_args)
{
	unsigned n = GPU_MEMBERS_X_AT;
	cm_jval *v = &m->v[n];
	if (!m->lean || m->nel >= GPU_MEMBERS_ELS || m->x_used || n_args > 3 ||
	    !(pid > -1000000000000000000 && pid < 1000000000000000000) ||
	    !(tid > -1000000000000000000 && tid < 1000000000000000000) || !(ts_ns >= 0 && ts_ns < CM_PY_MILLI_MAX) ||
	    !(dur_ns >= 0 && dur_ns < CM_PY_MILLI_MAX))
		return 0;
	for (unsigned i = 0; i < n_args; i++)
		if (!(vals[i] > -1000000000000000000 && vals[i] < 1000000000000000000))
			return 0;
	m->x_used = 1;
	m->root[m->nel] = n;
	m->bad[m->nel++] = 0;
	/* its nodes in their place, the rest of them gpu_members_init's (as
	 * gpu_members_flow's) */
	v[0].len = 8;
	v[2].s = cat;
	v[2].len = (uint32_t)catlen;
	v[3].s = name;
	v[3].len = (uint32_t)nlen;
	v[4].iv = (int64_t)pid;
	v[5].iv = (int64_t)tid;
	v[6].iv = (int64_t)ts_ns;
	v[7].iv = (int64_t)dur_ns;
	v[8].len = n_args;
	v[8].kids = n_args ? &v[9] : NULL;
	v[8].next = NULL;
	for (unsigned i = 0; i < n_args; i++) {
		v[9 + i].key = keys[i];
		v[9 + i].klen = klens[i];
		v[9 + i].iv = (int64_t)vals[i];
		v[9 + i].next = i + 1 < n_args ? &v[10 + i] : NULL;
	}
	m->pid = n + 4;
	m->tid = n + 5;
	m->cont[0] = v; /* (the args closed: nothing more is added to the event) */
	m->link[0] = &v[8].next;
	m->depth = 1;
	return 1;
}

/* The first members of the element just opened (gpu_members_element),
 * an X event's head "ph":"X","cat":CAT,"name":NAME,"pid":PID,"tid":TID,
 * noted at once in the lean mode, CAT's and NAME's bytes their text's (no
 * escape; CAT a literal, NAME the window's name table's, which stay as
 * they are: sfix) and the pid and tid kept whole: 1, its row noted for its
 * flow (gpu_members_row's); else 0, nothing done, and the caller notes them
 * member by member (a kernel's head so, with its row, was 290
 * instructions, BENCHMARKS.md "pfrender19"). */
static inline int gpu_members_head(struct gpu_members *m, const char *cat, size_t catlen, const char *name,
				   size_t nlen, cm_int pid, cm_int tid)
{
	cm_jval *v = &m->v[GPU_MEMBERS_HEAD_AT];
	if (!m->lean || m->head_used || m->depth != 1 || m->cont[0]->len ||
	    !(pid > -1000000000000000000 && pid < 1000000000000000000) ||
	    !(tid > -1000000000000000000 && tid < 1000000000000000000))
		return 0;
	m->head_used = 1;
	v[1].s = cat;
	v[1].len = (uint32_t)catlen;
	v[2].s = name;
	v[2].len = (uint32_t)nlen;
	v[3].iv = (int64_t)pid;
	v[4].iv = (int64_t)tid;
	v[4].next = NULL;
	*m->link[0] = v; /* (linked as gpu_members_add links: the members after them follow) */
	m->link[0] = &v[4].next;
	m->cont[0]->len = 5;
	m->pid = GPU_MEMBERS_HEAD_AT + 3;
	m->tid = GPU_MEMBERS_HEAD_AT + 4;
	return 1;
}

/* M ready for its first record: the nodes of gpu_members_x and
 * gpu_members_flow in their places, what of them never changes (the
 * variable parts' are written by each). */
static inline void gpu_members_init(struct gpu_members *m)
{
	cm_jval *v = &m->v[GPU_MEMBERS_X_AT];
	memset(m, 0, sizeof *m);
	for (unsigned i = GPU_MEMBERS_X_AT; i < GPU_MEMBERS_ALL; i++)
		m->off[i] = GPU_NO_TEXT;
	gpu_members_node(&v[0], CM_J_OBJ, NULL, 0, NULL, 8);
	v[0].kids = &v[1];
	v[0].next = NULL;
	gpu_members_node(&v[1], CM_J_STR, "ph", 2, "X", 1);
	gpu_members_node(&v[2], CM_J_STR, "cat", 3, "", 0);
	v[2].sfix = 1; /* (a literal, gpu_members_x's CAT; its NAME in the API cache's head is not) */
	gpu_members_node(&v[3], CM_J_STR, "name", 4, "", 0);
	gpu_members_node(&v[4], CM_J_NUM, "pid", 3, "", 0);
	v[4].has_iv = 1;
	gpu_members_node(&v[5], CM_J_NUM, "tid", 3, "", 0);
	v[5].has_iv = 1;
	gpu_members_node(&v[6], CM_J_NUM, "ts", 2, "", 0);
	v[6].has_iv = 2;
	gpu_members_node(&v[7], CM_J_NUM, "dur", 3, "", 0);
	v[7].has_iv = 2;
	gpu_members_node(&v[8], CM_J_OBJ, "args", 4, NULL, 0);
	v[8].next = NULL;
	for (unsigned i = 0; i < 3; i++) {
		gpu_members_node_k(&v[9 + i], CM_J_NUM, NULL, 0, CM_JK_OTHER, "", 0);
		v[9 + i].has_iv = 1;
	}
	v = &m->v[GPU_MEMBERS_FLOW_AT];
	gpu_members_node(&v[0], CM_J_OBJ, NULL, 0, NULL, 7);
	v[0].kids = &v[1];
	v[0].next = NULL;
	gpu_members_node(&v[1], CM_J_STR, "ph", 2, "s", 1);
	gpu_members_node(&v[2], CM_J_NUM, "id", 2, "", 0);
	v[2].has_iv = 1;
	gpu_members_node(&v[3], CM_J_NUM, "pid", 3, "", 0);
	gpu_members_node(&v[4], CM_J_NUM, "tid", 3, "", 0);
	gpu_members_node(&v[5], CM_J_NUM, "ts", 2, "", 0);
	v[5].has_iv = 2;
	gpu_members_node(&v[6], CM_J_STR, "cat", 3, "ac2g", 4);
	v[6].sfix = 1;
	gpu_members_node(&v[7], CM_J_STR, "name", 4, "ac2g", 4);
	v[7].sfix = 1;
	gpu_members_node(&v[8], CM_J_STR, "bp", 2, "e", 1);
	v[8].next = NULL;
	v = &m->v[GPU_MEMBERS_HEAD_AT];
	gpu_members_node(&v[0], CM_J_STR, "ph", 2, "X", 1);
	gpu_members_node(&v[1], CM_J_STR, "cat", 3, "", 0);
	v[1].sfix = 1; /* (gpu_members_head's CAT, a literal, and NAME, in the window's name table) */
	gpu_members_node(&v[2], CM_J_STR, "name", 4, "", 0);
	v[2].sfix = 1;
	gpu_members_node(&v[3], CM_J_NUM, "pid", 3, "", 0);
	v[3].has_iv = 1;
	gpu_members_node(&v[4], CM_J_NUM, "tid", 3, "", 0);
	v[4].has_iv = 1;
	v[4].next = NULL;
}

/* The record's elements written in B: the nodes' pointers made again
 * from their offsets if B moved since gpu_members_reset (a pointer made
 * after a move and before B came back to base's bytes, if that can be,
 * counts as moved).  Element I's tree is then gpu_members_tree(M, I). */
static inline void gpu_members_fix(struct gpu_members *m, const cm_buf *b)
{
	if (!m->moved && b->p == m->base)
		return;
	for (unsigned i = 0; i < m->n; i++)
		if (m->off[i] != GPU_NO_TEXT)
			m->v[i].s = b->p + m->off[i];
}

/* 1 when every element of the record is given as a tree (none to be
 * parsed from its text). */
static inline int gpu_members_whole(const struct gpu_members *m)
{
	if (m->nel > GPU_MEMBERS_ELS)
		return 0;
	for (unsigned i = 0; i < m->nel; i++)
		if (m->bad[i])
			return 0;
	return 1;
}

/* Element I's tree after gpu_members_fix, or NULL: to be parsed. */
static inline const cm_jval *gpu_members_tree(const struct gpu_members *m, unsigned i)
{
	return m->nel <= GPU_MEMBERS_ELS && i < m->nel && !m->bad[i] ? &m->v[m->root[i]] : NULL;
}

#endif
