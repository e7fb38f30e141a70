/* tidrule.c - the window's thread_resource_map as a compact table. */
#include "config.h"
#include "gpu/tidrule.h"
#include "base/diag.h"
#include "base/hmap.h"

#include <stdlib.h>
#include <string.h>

struct pid_ent {
	uint32_t gen; /* entries of older generations were replaced */
	uint8_t bad;
};

struct id_ent {
	int64_t tid;
	uint32_t gen;
	uint8_t bad;
};

struct cm_tidmap {
	int bad;        /* the map itself is not an object */
	cm_hmap *pids;  /* pid -> pid_ent */
	cm_hmap *ids;   /* (pid, id) -> id_ent */
	int64_t cur_pid;
	uint32_t cur_gen;
};

cm_tidmap *cm_tidmap_new(void)
{
	cm_tidmap *m = cm_xcalloc(1, sizeof *m);
	m->pids = cm_hmap_new(8, sizeof(struct pid_ent));
	m->ids = cm_hmap_new(16, sizeof(struct id_ent));
	return m;
}

void cm_tidmap_free(cm_tidmap *m)
{
	if (!m)
		return;
	cm_hmap_free(m->pids);
	cm_hmap_free(m->ids);
	free(m);
}

void cm_tidmap_set_bad(cm_tidmap *m) { m->bad = 1; }

void cm_tidmap_begin_pid(cm_tidmap *m, int64_t pid, int bad)
{
	struct pid_ent *p = cm_hmap_put(m->pids, &pid, NULL);
	p->gen++;
	p->bad = (uint8_t)bad;
	m->cur_pid = pid;
	m->cur_gen = p->gen;
}

void cm_tidmap_add(cm_tidmap *m, int64_t id, int64_t tid, int bad)
{
	int64_t key[2] = {m->cur_pid, id};
	struct id_ent *e = cm_hmap_put(m->ids, key, NULL);
	e->tid = tid;
	e->gen = m->cur_gen;
	e->bad = (uint8_t)bad;
}

int cm_tidmap_lookup(const cm_tidmap *m, int64_t pid, int64_t id, int64_t *tid)
{
	const struct pid_ent *p;
	const struct id_ent *e;
	int64_t key[2] = {pid, id};
	if (m->bad)
		return CM_TIDMAP_BAD_MAP;
	p = cm_hmap_get(m->pids, &pid);
	if (!p)
		return CM_TIDMAP_ABSENT;
	if (p->bad)
		return CM_TIDMAP_BAD_MAP;
	e = cm_hmap_get(m->ids, key);
	if (!e || e->gen != p->gen)
		return CM_TIDMAP_ABSENT;
	if (e->bad)
		return CM_TIDMAP_BAD_VALUE;
	*tid = e->tid;
	return CM_TIDMAP_FOUND;
}

uint64_t cm_tidmap_count(const cm_tidmap *m) { return cm_hmap_count(m->ids); }
