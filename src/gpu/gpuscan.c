/* gpuscan.c - window pass 1 (external correlations, the maps, the last
 * activity) and the resolution of correlation ids after the CPU scan. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "io/tmpfile.h"
#include "exitcode.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ pass 1 */

/* The (correlation, External id) pairs are needed in window order, once,
 * after the CPU scan; a long window has millions of them, so they wait in
 * an unlinked temporary file rather than in memory (gpu_collect_pairs), 17
 * bytes a pair.  Here they join the batch's list. */
static void pair_put(struct cm_gpu_digest *d, int64_t corr, int64_t ext, int user)
{
	unsigned char rec[17];
	memcpy(rec, &corr, 8);
	memcpy(rec + 8, &ext, 8);
	rec[16] = (unsigned char)user;
	cm_buf_put(&d->pairs, rec, sizeof rec);
}

int gpu_scan_event(struct cm_gpu_digest *d, const struct at *a)
{
	const cm_jval *kind = cm_jval_get(a->ev, "kind");
	cm_int end;
	d->events++;
	if (cm_jval_streq(kind, "external_correlation")) {
		cm_int corr, ext, ekind;
		if (gpu_int_field(a, "correlation_id", 0, &corr) < 0 || gpu_int_field(a, "external_id", 0, &ext) < 0 ||
		    gpu_int_field(a, "external_kind", 0, &ekind) < 0)
			return -1;
		if (corr != 0) {
			struct pair p;
			if (gpu_to_i64(a, "correlation_id", corr, &p.corr) < 0 || gpu_to_i64(a, "external_id", ext, &p.ext) < 0)
				return -1;
			pair_put(d, p.corr, p.ext, ekind == USER_EXTERNAL_KIND);
		}
	}
	if (!cm_jval_streq(kind, "overhead")) {
		if (gpu_int_field(a, "end_ns", 0, &end) < 0)
			return -1;
		d->max_end = end > d->max_end ? end : d->max_end;
	}
	return 0;
}

int gpu_collect_pairs(cm_gpu *g, const char *p, size_t n)
{
	if (!n)
		return 0;
	if (!g->pairs && !(g->pairs = cm_temp_file("pairs")))
		return -1;
	if (fwrite(p, 1, n, g->pairs) != n)
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno)), -1;
	for (size_t i = 0; i + 17 <= n; i += 17) {
		int64_t ext;
		memcpy(&ext, p + i + 8, 8);
		cm_hmap_put(g->ext, &ext, NULL);
	}
	g->npairs += n / 17;
	return 0;
}

/* int() of a map key (a JSON object member name).  0, or -1 after a report. */
static int key_int(cm_gpu *g, int64_t offset, const char *what, const cm_jval *k, int64_t *out)
{
	cm_int v;
	int rc = cm_py_int_of_str(k->key, k->klen, &v);
	if (rc == CM_PY_VALUE)
		return cm_error(CM_EXIT_DATA, g->wname, offset, "window: %s key \"%.*s\" is not an integer", what,
				(int)(k->klen > 40 ? 40 : k->klen), k->key),
		       -1;
	if (rc != CM_PY_OK || v < INT64_MIN || v > INT64_MAX)
		return cm_error(CM_EXIT_DATA, g->wname, offset, "window: %s key \"%.*s\" does not fit in 64 bits",
				what, (int)(k->klen > 40 ? 40 : k->klen), k->key),
		       -1;
	*out = (int64_t)v;
	return 0;
}

/* int(V) for a thread_resource_map value: 0 and *tid, or -1 when Python's
 * int() would raise (or the value needs more than 64 bits). */
static int map_value_int(const cm_jval *v, int64_t *tid)
{
	cm_int x;
	int rc;
	switch (v->type) {
	case CM_J_NUM: rc = cm_py_int_of_number(v->s, v->len, &x); break;
	case CM_J_STR: rc = cm_py_int_of_str(v->s, v->len, &x); break;
	case CM_J_TRUE: *tid = 1; return 0;
	case CM_J_FALSE: *tid = 0; return 0;
	default: return -1;
	}
	if (rc != CM_PY_OK || x < INT64_MIN || x > INT64_MAX)
		return -1;
	*tid = (int64_t)x;
	return 0;
}

/* The maps are read as the reference reads them: json.loads makes a dict (a
 * repeated key keeps its first place and its last value, see
 * cm_jval_dict_members), then {int(k): v for k, v in d.items()}: of two keys
 * with the same int() ("5" and "05"), the one placed later wins. */
static int scan_ua(cm_gpu *g, const cm_jval *val, int64_t offset)
{
	size_t n;
	const cm_jval **mem = cm_jval_dict_members(val, &n);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		const cm_jval *k = mem[i];
		int64_t ext;
		struct ua_ent *u;
		if (key_int(g, offset, "user_annotations", k, &ext) < 0) {
			rc = -1;
			break;
		}
		u = cm_hmap_put(g->ua, &ext, NULL);
		free(u->name);
		u->name = NULL;
		if (k->type == CM_J_STR) {
			u->name = cm_xmalloc(k->len + 1);
			memcpy(u->name, k->s, k->len);
			u->name[k->len] = 0;
			u->len = k->len;
		}
	}
	free(mem);
	return rc;
}

static int scan_trm(cm_gpu *g, const cm_jval *val, int64_t offset)
{
	size_t np, nt;
	const cm_jval **pids = cm_jval_dict_members(val, &np), **ids;
	int rc = 0;
	for (size_t i = 0; i < np && !rc; i++) {
		const cm_jval *p = pids[i];
		int64_t pid;
		if (key_int(g, offset, "thread_resource_map", p, &pid) < 0) {
			rc = -1;
			break;
		}
		cm_tidmap_begin_pid(g->tidmap, pid, p->type != CM_J_OBJ);
		if (p->type != CM_J_OBJ)
			continue;
		ids = cm_jval_dict_members(p, &nt);
		for (size_t j = 0; j < nt; j++) {
			const cm_jval *t = ids[j];
			int64_t id, tid = 0;
			int bad;
			if (key_int(g, offset, "thread_resource_map", t, &id) < 0) {
				rc = -1;
				break;
			}
			bad = map_value_int(t, &tid) < 0;
			cm_tidmap_add(g->tidmap, id, tid, bad);
		}
		free(ids);
	}
	free(pids);
	return rc;
}

int cm_gpu_scan_member(cm_gpu *g, const char *key, const cm_jval *val, int64_t offset)
{
	if (!strcmp(key, "user_annotations")) {
		g->ua_dict = val->type == CM_J_OBJ;
		if (!g->ua_dict)
			return 0; /* not an object: no gpu_user_annotation spans, no error */
		return scan_ua(g, val, offset);
	} else if (!strcmp(key, "thread_resource_map")) {
		if (val->type != CM_J_OBJ) {
			cm_tidmap_set_bad(g->tidmap); /* fails when a lookup needs it */
			return 0;
		}
		return scan_trm(g, val, offset);
	}
	return 0;
}

/* --------------------------------------------------------------- resolve */

/* The index of (PID, TID) in g->cpu_threads, added when new (SEEN maps the
 * pairs to their index + 1). */
static uint32_t cpu_thread_ix(cm_gpu *g, cm_hmap *seen, int64_t pid, int64_t tid)
{
	int64_t key[2] = {pid, tid};
	uint32_t *ix = cm_hmap_put(seen, key, NULL);
	if (!*ix) {
		if (g->ncpu_threads == g->cap_cpu_threads) {
			g->cap_cpu_threads = g->cap_cpu_threads ? 2 * g->cap_cpu_threads : 16;
			g->cpu_threads = cm_xrealloc(g->cpu_threads, g->cap_cpu_threads * sizeof *g->cpu_threads);
		}
		g->cpu_threads[g->ncpu_threads].pid = pid;
		g->cpu_threads[g->ncpu_threads].tid = tid;
		*ix = ++g->ncpu_threads;
	}
	return *ix - 1;
}

int cm_gpu_resolve(cm_gpu *g, cm_int base_ns)
{
	cm_hmap *seen = cm_hmap_new(16, 4);
	g->base_ns = base_ns;
	g->linked = cm_hmap_new(8, sizeof(struct linked));
	g->uext = cm_hmap_new(8, 8);
	if (g->pairs && (fflush(g->pairs) != 0 || fseek(g->pairs, 0, SEEK_SET) != 0))
		return cm_error(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno)), -1;
	for (uint64_t i = 0; i < g->npairs; i++) {
		unsigned char rec[17];
		struct pair pr, *p = &pr;
		const struct cm_ext_thread *t;
		if (fread(rec, sizeof rec, 1, g->pairs) != 1) {
			cm_hmap_free(seen);
			return cm_error(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file"), -1;
		}
		memcpy(&pr.corr, rec, 8);
		memcpy(&pr.ext, rec + 8, 8);
		pr.user = rec[16];
		t = cm_hmap_get(g->ext, &p->ext);
		if (t && t->found) {
			struct linked *l = cm_hmap_put(g->linked, &p->corr, NULL);
			l->thread = cpu_thread_ix(g, seen, t->pid, t->tid);
		}
		if (p->user && g->ua_dict && cm_hmap_get(g->ua, &p->ext))
			*(int64_t *)cm_hmap_put(g->uext, &p->corr, NULL) = p->ext;
	}
	g->st.linked_ext = 0;
	for (size_t i = 0; i < cm_hmap_slots(g->ext); i++) {
		const struct cm_ext_thread *t = cm_hmap_slot(g->ext, i, NULL);
		g->st.linked_ext += t && t->found;
	}
	g->st.linked_corr = cm_hmap_count(g->linked);
	g->st.pairs = g->npairs;
	g->st.index_bytes = cm_hmap_bytes(g->ext);
	cm_hmap_free(seen);
	/* only the correlation tables are needed from here on */
	if (g->pairs)
		fclose(g->pairs);
	g->pairs = NULL;
	g->npairs = 0;
	cm_hmap_free(g->ext);
	g->ext = NULL;
	return 0;
}

