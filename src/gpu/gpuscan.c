/* gpuscan.c - W, phase 1 over the window (external correlations, the maps,
 * the last activity) and the resolution of correlation ids after the CPU scan. */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "base/opool.h"
#include "json/docsplit.h"
#include "base/tmpfile.h"
#include "json/jsax.h"
#include "json/jscan.h"
#include "json/jvalid.h"
#include "base/exitcode.h"

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ----------------------------------------------------------------- phase 1 */

/* The (correlation, External id) pairs are needed in window order, once,
 * after the CPU scan; a long window has millions of them, so they wait in
 * an unlinked temporary file rather than in memory (gpu_collect_pairs), 17
 * bytes a pair.  Here they join the batch's list. */
static void pair_put(struct cm_gpu_digest *d, int64_t corr, int64_t ext, int kind)
{
	unsigned char rec[17];
	memcpy(rec, &corr, 8);
	memcpy(rec + 8, &ext, 8);
	rec[16] = (unsigned char)kind; /* PAIR_USER, PAIR_CUSTOM0 or 0 */
	cm_buf_put(&d->pairs, rec, sizeof rec);
}

int gpu_scan_event(struct cm_gpu_digest *d, const struct at *a)
{
	const cm_jval *kind = a->f[WF_KIND];
	cm_int end;
	d->events++;
	if (cm_jval_streq(kind, "external_correlation")) {
		cm_int corr, ext, ekind;
		if (gpu_int_field(a, WF_CORRELATION_ID, 0, &corr) < 0 || gpu_int_field(a, WF_EXTERNAL_ID, 0, &ext) < 0 ||
		    gpu_int_field(a, WF_EXTERNAL_KIND, 0, &ekind) < 0)
			return -1;
		if (corr != 0) {
			struct pair p;
			if (gpu_to_id(a, "correlation_id", CM_IDS_CORR, corr, &p.corr) < 0 ||
			    gpu_to_id(a, "external_id", CM_IDS_EXT, ext, &p.ext) < 0)
				return -1;
			pair_put(d, p.corr, p.ext,
				 ekind == USER_EXTERNAL_KIND ? PAIR_USER : ekind == CPU_EXTERNAL_KIND ? PAIR_CUSTOM0 : 0);
		}
	}
	if (!cm_jval_streq(kind, "overhead")) {
		if (gpu_int_field(a, WF_END_NS, 0, &end) < 0)
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
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	for (size_t i = 0; i + 17 <= n; i += 17) {
		int64_t corr, ext;
		memcpy(&corr, p + i, 8);
		memcpy(&ext, p + i + 8, 8);
		g->ext_lo = ext < g->ext_lo ? ext : g->ext_lo;
		g->ext_hi = ext > g->ext_hi ? ext : g->ext_hi;
		g->corr_lo = corr < g->corr_lo ? corr : g->corr_lo;
		g->corr_hi = corr > g->corr_hi ? corr : g->corr_hi;
	}
	g->npairs += n / 17;
	return 0;
}

/* int() of a map key (a JSON object member name): an int64, or with
 * KIND >= 0 the table key of an id of that kind (base/ids.h), whose sign is
 * noted.  0, or -1 after a report. */
static int key_int(cm_gpu *g, int64_t offset, const char *what, int kind, const cm_jval *k, int64_t *out)
{
	unsigned signs = 0;
	cm_int v;
	int rc = cm_py_int_of_str(k->key, k->klen, &v);
	if (rc == CM_PY_VALUE)
		return cm_fail(CM_EXIT_DATA, g->wname, offset, "window: %s key \"%.*s\" is not an integer", what,
				(int)(k->klen > 40 ? 40 : k->klen), k->key);
	if (rc != CM_PY_OK || (kind < 0 ? v < INT64_MIN || v > INT64_MAX : !cm_id_key(v, out, &signs)))
		return cm_fail(CM_EXIT_DATA, g->wname, offset, "window: %s key \"%.*s\" does not fit in 64 bits%s",
				what, (int)(k->klen > 40 ? 40 : k->klen), k->key,
				kind < 0 ? "" : " (as a uint64 or an int64)");
	if (kind < 0)
		*out = (int64_t)v;
	else
		cm_id_note_shared(&g->idsigns[kind], signs);
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

/* One user annotation's record in ua_file: the id, the name's length (-1:
 * not a string) and its bytes; a later record for the same id wins.  0, or
 * -1 after a report. */
static int ua_put(cm_gpu *g, int64_t ext, const char *name, int32_t len)
{
	if (fwrite(&ext, 8, 1, g->ua_file) != 1 || fwrite(&len, 4, 1, g->ua_file) != 1 ||
	    (len > 0 && fwrite(name, (size_t)len, 1, g->ua_file) != 1))
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	g->ua_lo = ext < g->ua_lo ? ext : g->ua_lo;
	g->ua_hi = ext > g->ua_hi ? ext : g->ua_hi;
	g->ua_count++;
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
	/* Kept in a file, in order, until the window has been read and the
	 * ids' range is known (ua_build): a later entry for the same id wins. */
	if (n && !g->ua_file && !(g->ua_file = cm_temp_file("annotations"))) {
		free(mem);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const cm_jval *k = mem[i];
		int64_t ext;
		int32_t len;
		if (key_int(g, offset, "user_annotations", CM_IDS_EXT, k, &ext) < 0) {
			rc = -1;
			break;
		}
		len = k->type == CM_J_STR ? (int32_t)k->len : -1;
		if (ua_put(g, ext, k->s, len) < 0) {
			rc = -1;
			break;
		}
	}
	free(mem);
	return rc;
}

/* ------------------------------------------- user_annotations as text
 *
 * A long window's user_annotations is a map of hundreds of thousands of
 * names; built whole as values (cm_jval_parse_py, cm_jval_dict_members) it
 * cost five times its text in memory.  So it is read as text: a first walk
 * finds the ids' range (and reports a key that is not an integer, as
 * scan_ua would), a second one writes the records of scan_ua in text order.
 * That order gives the dict's answer unless an id repeats (a key twice, or
 * "5" and "05"): then the walk gives up and the careful path above decides. */

/* Walk the object S[0..N): FN(ctx, key, klen, value, is_string, vlen) for
 * each member in text order.  FN returns 0 to go on; the walk returns what
 * stopped it, or 0. */
static int ua_walk(cm_arena *arena, const char *s, size_t n,
		   int (*fn)(void *ctx, const char *k, size_t kl, const char *v, int is_str, size_t vl), void *ctx)
{
	size_t i = 0, done = 0;
	cm_jscan_skip_ws(s, n, &i);
	i++; /* { */
	for (;;) {
		const char *k, *v = NULL;
		size_t kl, vl = 0, at;
		int is_str, rc;
		if (i - done >= (1u << 20)) { /* a spilled text: its pages behind us may go */
			cm_docsplit_release(s, i);
			done = i;
		}
		cm_jscan_skip_ws(s, n, &i);
		if (i >= n || s[i] == '}') {
			cm_docsplit_release(s, n);
			return 0;
		}
		if (s[i] == ',') {
			i++;
			cm_jscan_skip_ws(s, n, &i);
		}
		cm_arena_reset(arena);
		k = cm_jsax_string(s, n, &i, &kl, arena);
		cm_jscan_skip_ws(s, n, &i);
		i++; /* : */
		cm_jscan_skip_ws(s, n, &i);
		is_str = s[i] == '"';
		if (is_str) {
			v = cm_jsax_string(s, n, &i, &vl, arena);
		} else {
			if (cm_jvalid_prefix(s + i, n - i, 2, &at) != 1)
				return 2; /* cannot happen: validated */
			i += at;
		}
		if ((rc = fn(ctx, k, kl, v, is_str, vl)))
			return rc;
	}
}

struct ua_text {
	cm_gpu *g;
	int64_t offset, lo, hi;
	uint64_t count;
	cm_idkeys *seen;
};

static int ua_key(struct ua_text *u, const char *k, size_t kl, int64_t *ext)
{
	cm_jval key = {0};
	key.key = k;
	key.klen = (uint32_t)kl;
	return key_int(u->g, u->offset, "user_annotations", CM_IDS_EXT, &key, ext) < 0 ? -1 : 0;
}

static int ua_range(void *ctx, const char *k, size_t kl, const char *v, int is_str, size_t vl)
{
	struct ua_text *u = ctx;
	int64_t ext;
	(void)v, (void)is_str, (void)vl;
	if (ua_key(u, k, kl, &ext) < 0)
		return -1;
	u->lo = ext < u->lo ? ext : u->lo;
	u->hi = ext > u->hi ? ext : u->hi;
	u->count++;
	return 0;
}

static int ua_record(void *ctx, const char *k, size_t kl, const char *v, int is_str, size_t vl)
{
	struct ua_text *u = ctx;
	cm_gpu *g = u->g;
	int64_t ext;
	int32_t len = is_str ? (int32_t)vl : -1;
	if (ua_key(u, k, kl, &ext) < 0)
		return -1;
	if (!cm_idkeys_add(u->seen, ext))
		return 1; /* an id again: the dict's order decides */
	return ua_put(g, ext, v, len);
}

int cm_gpu_scan_ua_text(cm_gpu *g, const char *s, size_t n, int64_t offset)
{
	struct ua_text u = {g, offset, INT64_MAX, INT64_MIN, 0, NULL};
	cm_arena *arena;
	size_t i = 0;
	int rc;
	cm_jscan_skip_ws(s, n, &i);
	if (i >= n || s[i] != '{' || g->ua_file || g->ua_dict)
		return 1; /* not an object (or seen before): the careful path */
	arena = cm_arena_new();
	rc = ua_walk(arena, s, n, ua_range, &u);
	if (rc == 0 && (!(u.seen = cm_idkeys_new(u.lo, u.hi, u.count, g->budget)) ||
			(u.count && !(g->ua_file = cm_temp_file("annotations")))))
		rc = -1;
	if (rc == 0)
		rc = ua_walk(arena, s, n, ua_record, &u);
	cm_arena_free(arena);
	if (rc == 0) {
		g->ua_keys = u.seen; /* the tables over the annotations' ids */
		u.seen = NULL;
	}
	cm_idkeys_free(u.seen);
	if (rc > 0) { /* start again on the careful path */
		if (g->ua_file)
			fclose(g->ua_file);
		g->ua_file = NULL;
		g->ua_count = 0;
		g->ua_lo = INT64_MAX;
		g->ua_hi = INT64_MIN;
		return 1;
	}
	if (rc < 0)
		return -1;
	g->ua_dict = 1;
	return 0;
}

/* Map ua_file, once it is whole, read-only into memory (watched against the
 * budget like the id tables: its pages are dropped with theirs), so that
 * the names are read where they lie, not by a system call each (the rows
 * and the spans ask for 450,000 names of the 1 GB pair, on the serial
 * part of the run).  0, or -1 after reporting. */
static int ua_map(cm_gpu *g)
{
	long size;
	void *p;
	if (g->ua_map || !g->ua_count)
		return 0;
	if (fflush(g->ua_file) != 0 || fseek(g->ua_file, 0, SEEK_END) != 0 || (size = ftell(g->ua_file)) < 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	if (!size)
		return 0;
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fileno(g->ua_file), 0);
	if (p == MAP_FAILED)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	g->ua_map = p;
	g->ua_map_size = (size_t)size;
	g->ua_pages = cm_pages_watch(p, (size_t)size);
	return 0;
}

/* Read back the records of ua_file (mapped), FN(G, id, offset of the name,
 * its length) for each.  Returns 0, or -1 after reporting. */
static int ua_read_back(cm_gpu *g, int (*fn)(cm_gpu *g, int64_t ext, int64_t off, int32_t len))
{
	size_t off = 0;
	if (ua_map(g) < 0)
		return -1;
	for (uint64_t i = 0; i < g->ua_count; i++) {
		int64_t ext;
		int32_t len;
		if (g->ua_map_size - off < 12)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file");
		cm_pages_touch(g->ua_pages, g->ua_map + off);
		cm_pages_touch(g->ua_pages, g->ua_map + off + 11);
		memcpy(&ext, g->ua_map + off, 8);
		memcpy(&len, g->ua_map + off + 8, 4);
		if (len > 0 && g->ua_map_size - off - 12 < (size_t)len)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file");
		if (fn(g, ext, (int64_t)off + 12, len) < 0)
			return -1;
		off += 12 + (len > 0 ? (size_t)len : 0);
	}
	return 0;
}

void gpu_ua_unmap(cm_gpu *g)
{
	if (!g->ua_map)
		return;
	cm_pages_unwatch(g->ua_pages);
	munmap((void *)g->ua_map, g->ua_map_size);
	g->ua_map = NULL;
	g->ua_pages = NULL;
}

static int ua_add_key(cm_gpu *g, int64_t ext, int64_t off, int32_t len)
{
	(void)off, (void)len;
	cm_idkeys_add(g->ua_keys, ext);
	return 0;
}

static int ua_add_ref(cm_gpu *g, int64_t ext, int64_t off, int32_t len)
{
	struct ua_ref *u = cm_idmap_put(g->ua, ext, NULL);
	u->off = off;
	u->len = len;
	return 0;
}

/* The user annotations into an id table, each entry pointing at its name's
 * bytes in the file.  0, or -1 after a report. */
static int ua_build(cm_gpu *g)
{
	if (!g->ua_file) {
		g->ua = cm_idmap_new(sizeof(struct ua_ref), g->ua_lo, g->ua_hi, g->ua_count, g->budget);
		return g->ua ? 0 : -1;
	}
	/* the set of ids first (the text path has made it as it went), then
	 * a table packed over it: one entry an annotation, not one an id */
	if (!g->ua_keys && (!(g->ua_keys = cm_idkeys_new(g->ua_lo, g->ua_hi, g->ua_count, g->budget)) ||
			    ua_read_back(g, ua_add_key) < 0))
		return -1;
	if (!(g->ua = cm_idmap_new_keyed(sizeof(struct ua_ref), g->ua_keys, g->budget)))
		return -1;
	return ua_read_back(g, ua_add_ref);
}

const char *gpu_ua_name(cm_gpu *g, int64_t ext, size_t *len)
{
	const struct ua_ref *u = g->ua ? cm_idmap_get(g->ua, ext) : NULL;
	const char *name;
	if (!u || u->len < 0 || !g->ua_map)
		return NULL;
	name = g->ua_map + u->off; /* within the mapping: ua_read_back checked */
	if (u->len) { /* its pages are touched (a name may cross one) */
		cm_pages_touch(g->ua_pages, name);
		cm_pages_touch(g->ua_pages, name + u->len - 1);
	}
	*len = (size_t)u->len;
	return name;
}

static int scan_trm(cm_gpu *g, const cm_jval *val, int64_t offset)
{
	size_t np, nt;
	const cm_jval **pids = cm_jval_dict_members(val, &np), **ids;
	int rc = 0;
	for (size_t i = 0; i < np && !rc; i++) {
		const cm_jval *p = pids[i];
		int64_t pid;
		if (key_int(g, offset, "thread_resource_map", -1, p, &pid) < 0) {
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
			if (key_int(g, offset, "thread_resource_map", -1, t, &id) < 0) {
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

/* "window_version": Python's int() of it; anything else (or less than 1)
 * counts as 1, the reference's format, as an absent member does. */
static void scan_version(cm_gpu *g, const cm_jval *v)
{
	cm_int x = 0;
	int rc = CM_PY_VALUE;
	if (v->type == CM_J_NUM)
		rc = cm_py_int_of_number(v->s, v->len, &x);
	else if (v->type == CM_J_STR)
		rc = cm_py_int_of_str(v->s, v->len, &x);
	g->version = rc == CM_PY_OK && x > 1 ? (x > 1000000 ? 1000000 : (int)x) : 1;
}

int cm_gpu_scan_member(cm_gpu *g, const char *key, const cm_jval *val, int64_t offset)
{
	if (!strcmp(key, "window_version")) {
		scan_version(g, val);
		return 0;
	}
	if (!strcmp(key, "device_properties")) {
		g->wprops_text.len = 0;
		if (cm_kin_devices_read(&g->wprops, val))
			cm_jval_write(&g->wprops_text, val);
		return 0;
	}
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

/* ----------------------------------------------------------------- the joins */

/* The joins read the pairs file twice: once to put the External ids the
 * window needs (cm_gpu_linked_ext), once to link each correlation to its
 * CPU thread and user annotation (cm_gpu_resolve).  Each walk is split
 * over threads by ranges of its key (the External id, the correlation id):
 * every thread reads the whole file, a few tens of MB, and takes the pairs
 * whose key is its own, in file order.  So the pairs of one id are taken in
 * window order by one thread, as one reader would take them, and no two
 * threads write the same table entry.  That needs the tables written to be
 * arrays (idmap.h: different ids are different bytes); a hash map, or a
 * small file, is walked by one thread.  The tables read (the External id
 * index, the annotations) are only read meanwhile.  The parts are the
 * blocks of an ordered pool (base/opool.h), one worker each: it makes the
 * threads, and reports the first failing part's error once. */
enum walk { WALK_LINK_EXT, WALK_RESOLVE };

#define WALK_MIN_PAIRS 16384 /* fewer are walked by one thread */
/* Pairs read at a time: 136 kB, a buffer a part.  At 65536 (1.1 MB), the
 * 16 parts of a 16-CPU run took 18 MB between them: the 1 GB pair's peak
 * RSS was 61-65 MB at -j 16, against 54 MB now (the 2-core machine). */
#define WALK_CHUNK 8192

struct walk_part {
	cm_gpu *g;
	enum walk what;
	int64_t lo, hi;         /* the keys this part takes */
	int fd;
	uint64_t linked;        /* correlations linked to a thread (resolve) */
	int64_t last_pid, last_tid; /* cpu_thread_ix's last answer, kept here */
	uint32_t last_ix;
	int have_last;
	pthread_mutex_t *lock;  /* cpu_thread_ix's, shared */
};

/* The index of (PID, TID) in g->cpu_threads, added when new.  Under the
 * part's lock: a run has millions of linked correlations but few threads,
 * so each part keeps the last answer and seldom asks. */
static uint32_t cpu_thread_ix(struct walk_part *w, int64_t pid, int64_t tid)
{
	if (w->have_last && w->last_pid == pid && w->last_tid == tid)
		return w->last_ix;
	pthread_mutex_lock(w->lock);
	w->last_ix = cm_ext_threads_number(&w->g->cpu_threads, pid, tid) - 1;
	pthread_mutex_unlock(w->lock);
	w->have_last = 1;
	w->last_pid = pid;
	w->last_tid = tid;
	return w->last_ix;
}

/* One pair record, REC, of the part's keys. */
static void walk_pair(struct walk_part *w, const unsigned char *rec)
{
	cm_gpu *g = w->g;
	struct pair pr, *p = &pr;
	const struct cm_ext_thread *t;
	memcpy(&pr.corr, rec, 8);
	memcpy(&pr.ext, rec + 8, 8);
	if (w->what == WALK_LINK_EXT) {
		cm_idmap_put(g->ext, p->ext, NULL);
		return;
	}
	pr.user = rec[16] & PAIR_USER;
	t = cm_idmap_get(g->ext, p->ext);
	if (t && t->thread) {
		const struct cm_ext_pt *pt = &g->ext_threads[t->thread - 1];
		struct linked *l = cm_idmap_put(g->linked, p->corr, NULL);
		if (!l->thread)
			w->linked++;
		l->thread = cpu_thread_ix(w, pt->pid, pt->tid) + 1;
	}
	if (p->user && g->ua_dict && cm_idmap_get(g->ua, p->ext))
		*(int64_t *)cm_idmap_put(g->uext, p->corr, NULL) = p->ext;
	/* Kineto's "External id": the last CUSTOM0 record of a correlation
	 * names its operator, if the CPU trace has it */
	if (g->cext && (rec[16] & PAIR_CUSTOM0))
		*(int64_t *)cm_idmap_put(g->cext, p->corr, NULL) = t && t->thread ? p->ext : 0;
}

/* A part: read the whole file, take the pairs of its keys.  0, or -1 after
 * a report (deferred on a thread of its own). */
static int walk_run(struct walk_part *w)
{
	unsigned char *buf = cm_xmalloc((size_t)WALK_CHUNK * 17);
	uint64_t n = w->g->npairs, done = 0;
	int key = w->what == WALK_LINK_EXT ? 8 : 0;
	while (done < n) {
		size_t want = (size_t)((n - done < WALK_CHUNK ? n - done : WALK_CHUNK) * 17), got = 0;
		while (got < want) {
			ssize_t r = pread(w->fd, buf + got, want - got, (off_t)(done * 17 + got));
			if (r <= 0) {
				free(buf);
				return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file%s%s",
						r < 0 ? ": " : "", r < 0 ? strerror(errno) : "");
			}
			got += (size_t)r;
		}
		for (size_t i = 0; i < want; i += 17) {
			int64_t id;
			memcpy(&id, buf + i + key, 8);
			if (id >= w->lo && id <= w->hi)
				walk_pair(w, buf + i);
		}
		done += want / 17;
	}
	free(buf);
	return 0;
}

/* A part, as cm_opool_run_each runs it. */
static int walk_one(void *part) { return walk_run(part); }

/* Walk the pairs file for WHAT on up to g->join_threads threads.  0, or -1
 * after a report. */
static int walk_pairs(cm_gpu *g, enum walk what)
{
	int64_t lo = what == WALK_LINK_EXT ? g->ext_lo : g->corr_lo, hi = what == WALK_LINK_EXT ? g->ext_hi : g->corr_hi;
	int dense = what == WALK_LINK_EXT ? cm_idmap_is_dense(g->ext)
					  : cm_idmap_is_dense(g->linked) && cm_idmap_is_dense(g->uext) &&
						    (!g->cext || cm_idmap_is_dense(g->cext));
	int n = dense && g->npairs >= WALK_MIN_PAIRS && g->join_threads > 1 ? g->join_threads : 1, rc = 0;
	uint64_t span = (uint64_t)hi - (uint64_t)lo;
	struct walk_part *w;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	if (!g->pairs || !g->npairs)
		return 0;
	if (fflush(g->pairs) != 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	if (hi < lo || span < (uint64_t)n)
		n = 1;
	w = cm_xcalloc((size_t)n, sizeof *w);
	for (int i = 0; i < n; i++) {
		w[i].g = g;
		w[i].what = what;
		w[i].fd = fileno(g->pairs);
		w[i].lock = &lock;
		w[i].lo = i ? w[i - 1].hi + 1 : INT64_MIN;
		w[i].hi = i == n - 1 ? INT64_MAX : (int64_t)((uint64_t)lo + span / (uint64_t)n * (uint64_t)(i + 1));
	}
	rc = cm_opool_run_each(n, walk_one, w, sizeof *w) < 0 ? -1 : 0;
	for (int i = 0; i < n; i++)
		g->st.linked_corr += w[i].linked;
	free(w);
	pthread_mutex_destroy(&lock);
	return rc;
}

void cm_gpu_set_join_threads(cm_gpu *g, int n) { g->join_threads = n; }

int gpu_link_ext(cm_gpu *g) { return walk_pairs(g, WALK_LINK_EXT); }

int cm_gpu_resolve(cm_gpu *g, cm_int base_ns, const struct cm_ext_pt *threads, uint64_t found)
{
	g->base_ns = base_ns;
	g->ext_threads = threads;
	if (!cm_gpu_linked_ext(g) || ua_build(g) < 0 ||
	    !(g->linked = cm_idmap_new(sizeof(struct linked), g->corr_lo, g->corr_hi, g->npairs, g->budget)) ||
	    !(g->uext = cm_idmap_new(8, g->corr_lo, g->corr_hi, g->npairs, g->budget)) ||
	    (g->version >= 2 &&
	     !(g->cext = cm_idmap_new(8, g->corr_lo < g->api_lo ? g->corr_lo : g->api_lo,
				      g->corr_hi > g->api_hi ? g->corr_hi : g->api_hi, g->npairs + g->api_n,
				      g->budget)))
	    || walk_pairs(g, WALK_RESOLVE) < 0)
		return -1;
	g->st.linked_ext = found; /* the scan counted them: no walk of the table for it */
	g->st.pairs = g->npairs;
	g->st.index_bytes = cm_idmap_bytes(g->ext);
	/* only the correlation tables are needed from here on */
	if (g->pairs)
		fclose(g->pairs);
	g->pairs = NULL;
	g->npairs = 0;
	cm_idmap_free(g->ext);
	g->ext = NULL;
	return 0;
}

