/* gpuscan.c - the window's maps, as the window is read: "user_annotations"
 * (kept in a temporary file, then a table of the names, mapped),
 * "thread_resource_map", "window_version" and "device_properties". */
#include "config.h"
#include "gpu/gpuconv_int.h"
#include "base/diag.h"
#include "json/docsplit.h"
#include "base/tmpfile.h"
#include "json/jsax.h"
#include "json/jscan.h"
#include "json/jvalid.h"
#include "base/exitcode.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

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
		cm_id_note_shared(&g->win.idsigns[kind], signs);
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
	if (fwrite(&ext, 8, 1, g->win.ua_file) != 1 || fwrite(&len, 4, 1, g->win.ua_file) != 1 ||
	    (len > 0 && fwrite(name, (size_t)len, 1, g->win.ua_file) != 1))
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot write a temporary file: %s", strerror(errno));
	g->win.ua_lo = ext < g->win.ua_lo ? ext : g->win.ua_lo;
	g->win.ua_hi = ext > g->win.ua_hi ? ext : g->win.ua_hi;
	g->win.ua_count++;
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
	 * ids' range is known (gpu_ua_build): a later entry for the same id wins. */
	if (n && !g->win.ua_file && !(g->win.ua_file = cm_temp_file("annotations"))) {
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
	if (i >= n || s[i] != '{' || g->win.ua_file || g->win.ua_dict)
		return 1; /* not an object (or seen before): the careful path */
	arena = cm_arena_new();
	rc = ua_walk(arena, s, n, ua_range, &u);
	if (rc == 0 && (!(u.seen = cm_idkeys_new(u.lo, u.hi, u.count)) ||
			(u.count && !(g->win.ua_file = cm_temp_file("annotations")))))
		rc = -1;
	if (rc == 0)
		rc = ua_walk(arena, s, n, ua_record, &u);
	cm_arena_free(arena);
	if (rc == 0) {
		g->win.ua_keys = u.seen; /* the tables over the annotations' ids */
		u.seen = NULL;
	}
	cm_idkeys_free(u.seen);
	if (rc > 0) { /* start again on the careful path */
		if (g->win.ua_file)
			fclose(g->win.ua_file);
		g->win.ua_file = NULL;
		g->win.ua_count = 0;
		g->win.ua_lo = INT64_MAX;
		g->win.ua_hi = INT64_MIN;
		return 1;
	}
	if (rc < 0)
		return -1;
	g->win.ua_dict = 1;
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
	if (g->link.ua_map || !g->win.ua_count)
		return 0;
	if (fflush(g->win.ua_file) != 0 || fseek(g->win.ua_file, 0, SEEK_END) != 0 || (size = ftell(g->win.ua_file)) < 0)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	if (!size)
		return 0;
	p = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fileno(g->win.ua_file), 0);
	if (p == MAP_FAILED)
		return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file: %s", strerror(errno));
	g->link.ua_map = p;
	g->link.ua_map_size = (size_t)size;
	g->link.ua_pages = cm_pages_watch(p, (size_t)size);
	return 0;
}

/* Read back the records of ua_file (mapped), FN(G, id, offset of the name,
 * its length) for each.  Returns 0, or -1 after reporting. */
static int ua_read_back(cm_gpu *g, int (*fn)(cm_gpu *g, int64_t ext, int64_t off, int32_t len))
{
	size_t off = 0;
	if (ua_map(g) < 0)
		return -1;
	for (uint64_t i = 0; i < g->win.ua_count; i++) {
		int64_t ext;
		int32_t len;
		if (g->link.ua_map_size - off < 12)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file");
		cm_pages_touch(g->link.ua_pages, g->link.ua_map + off);
		cm_pages_touch(g->link.ua_pages, g->link.ua_map + off + 11);
		memcpy(&ext, g->link.ua_map + off, 8);
		memcpy(&len, g->link.ua_map + off + 8, 4);
		if (len > 0 && g->link.ua_map_size - off - 12 < (size_t)len)
			return cm_fail(CM_EXIT_IO, NULL, -1, "cannot read back a temporary file");
		if (fn(g, ext, (int64_t)off + 12, len) < 0)
			return -1;
		off += 12 + (len > 0 ? (size_t)len : 0);
	}
	return 0;
}

void gpu_ua_unmap(cm_gpu *g)
{
	if (!g->link.ua_map)
		return;
	cm_pages_unwatch(g->link.ua_pages);
	munmap((void *)g->link.ua_map, g->link.ua_map_size);
	g->link.ua_map = NULL;
	g->link.ua_pages = NULL;
}

static int ua_add_key(cm_gpu *g, int64_t ext, int64_t off, int32_t len)
{
	(void)off, (void)len;
	cm_idkeys_add(g->win.ua_keys, ext);
	return 0;
}

static int ua_add_ref(cm_gpu *g, int64_t ext, int64_t off, int32_t len)
{
	struct ua_ref *u = cm_idmap_put(g->link.ua, ext, NULL);
	u->off = off;
	u->len = len;
	return 0;
}

/* The user annotations into an id table, each entry pointing at its name's
 * bytes in the file.  0, or -1 after a report. */
int gpu_ua_build(cm_gpu *g)
{
	if (!g->win.ua_file) {
		g->link.ua = cm_idmap_new(sizeof(struct ua_ref), g->win.ua_lo, g->win.ua_hi, g->win.ua_count);
		return g->link.ua ? 0 : -1;
	}
	/* the set of ids first (the text path has made it as it went), then
	 * a table packed over it: one entry an annotation, not one an id */
	if (!g->win.ua_keys && (!(g->win.ua_keys = cm_idkeys_new(g->win.ua_lo, g->win.ua_hi, g->win.ua_count)) ||
			    ua_read_back(g, ua_add_key) < 0))
		return -1;
	if (!(g->link.ua = cm_idmap_new_keyed(sizeof(struct ua_ref), g->win.ua_keys)))
		return -1;
	return ua_read_back(g, ua_add_ref);
}

const char *gpu_ua_name(const cm_gpu *g, int64_t ext, size_t *len)
{
	const struct ua_ref *u = g->link.ua ? cm_idmap_get(g->link.ua, ext) : NULL;
	const char *name;
	if (!u || u->len < 0 || !g->link.ua_map)
		return NULL;
	name = g->link.ua_map + u->off; /* within the mapping: ua_read_back checked */
	if (u->len) { /* its pages are touched (a name may cross one) */
		cm_pages_touch(g->link.ua_pages, name);
		cm_pages_touch(g->link.ua_pages, name + u->len - 1);
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
		cm_tidmap_begin_pid(g->win.tidmap, pid, p->type != CM_J_OBJ);
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
			cm_tidmap_add(g->win.tidmap, id, tid, bad);
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
		g->win.wprops_text.len = 0;
		if (cm_kin_devices_read(&g->win.wprops, val))
			cm_jval_write(&g->win.wprops_text, val);
		return 0;
	}
	if (!strcmp(key, "user_annotations")) {
		g->win.ua_dict = val->type == CM_J_OBJ;
		if (!g->win.ua_dict)
			return 0; /* not an object: no gpu_user_annotation spans, no error */
		return scan_ua(g, val, offset);
	} else if (!strcmp(key, "thread_resource_map")) {
		if (val->type != CM_J_OBJ) {
			cm_tidmap_set_bad(g->win.tidmap); /* fails when a lookup needs it */
			return 0;
		}
		return scan_trm(g, val, offset);
	}
	return 0;
}
