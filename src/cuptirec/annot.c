/* annot.c - annotation names for "user_annotations" and the thread map. */
#include "annot.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct crec_annot_pair {
	uint64_t id;
	uint32_t name;           /* index into names */
};

struct crec_annot {
	pthread_mutex_t mu;
	uint64_t next_id;
	/* interned names: open-addressing hash of indexes into `names` */
	char **names;
	size_t nnames, max_names;
	uint32_t *slots;         /* 2 * max_names rounded up to a power of two; 0 = empty, else index + 1 */
	size_t nslots;
	/* open annotations, in push order (pops are mostly from the end) */
	struct crec_annot_pair *open;
	size_t nopen, capopen;
	/* the active window's (id, name) pairs */
	int active;
	struct crec_annot_pair *win;
	size_t nwin, max_window;
	unsigned long long lost;
};

/* The name a full table maps every new name to. */
static const char crec_annot_overflow[] = "(cuptirec: too many distinct annotation names)";

crec_annot *crec_annot_create(size_t max_names, size_t max_window)
{
	crec_annot *a;
	size_t ns = 16;

	if (max_names == 0 || max_window == 0 || max_names > (1u << 30))
		return NULL;
	while (ns < 2 * max_names)
		ns *= 2;
	a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->names = calloc(max_names + 1, sizeof *a->names);
	a->slots = calloc(ns, sizeof *a->slots);
	if (!a->names || !a->slots) {
		free(a->names);
		free(a->slots);
		free(a);
		return NULL;
	}
	a->nslots = ns;
	a->max_names = max_names;
	a->max_window = max_window;
	a->next_id = CREC_ANNOT_FIRST_ID;
	pthread_mutex_init(&a->mu, NULL);
	return a;
}

/* FNV-1a over s[0..n). */
static uint64_t crec_hash(const char *s, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ull;
	}
	return h;
}

/* Index of the interned copy of s[0..n), adding it when new.  Returns
 * UINT32_MAX when the name cannot be stored (table full or ENOMEM).  Caller
 * holds the lock. */
static uint32_t crec_annot_intern(crec_annot *a, const char *s, size_t n)
{
	size_t mask = a->nslots - 1, i = crec_hash(s, n) & mask;
	char *copy;

	for (;; i = (i + 1) & mask) {
		uint32_t v = a->slots[i];
		if (v == 0)
			break;
		if (strlen(a->names[v - 1]) == n && memcmp(a->names[v - 1], s, n) == 0)
			return v - 1;
	}
	if (a->nnames >= a->max_names || !(copy = malloc(n + 1)))
		return UINT32_MAX;
	memcpy(copy, s, n);
	copy[n] = '\0';
	a->names[a->nnames] = copy;
	a->slots[i] = (uint32_t)(a->nnames + 1);
	return (uint32_t)a->nnames++;
}

/* Length of NAME cut to CREC_ANNOT_NAME_MAX bytes without splitting a UTF-8
 * sequence. */
static size_t crec_annot_namelen(const char *name)
{
	size_t n = strnlen(name, CREC_ANNOT_NAME_MAX + 1);

	if (n > CREC_ANNOT_NAME_MAX) {
		n = CREC_ANNOT_NAME_MAX;
		while (n > 0 && ((unsigned char)name[n] & 0xc0) == 0x80)
			n--;
	}
	return n;
}

uint64_t crec_annot_push(crec_annot *a, const char *name)
{
	struct crec_annot_pair pr;
	uint32_t idx;

	if (!name)
		name = "";
	pthread_mutex_lock(&a->mu);
	pr.id = a->next_id++;
	idx = crec_annot_intern(a, name, crec_annot_namelen(name));
	pr.name = idx;
	if (idx == UINT32_MAX) {
		a->lost++;
		pthread_mutex_unlock(&a->mu);
		return pr.id;
	}
	if (a->nopen == a->capopen) {
		size_t nc = a->capopen ? 2 * a->capopen : 64;
		struct crec_annot_pair *p = realloc(a->open, nc * sizeof *p);
		if (p) {
			a->open = p;
			a->capopen = nc;
		}
	}
	if (a->nopen < a->capopen)
		a->open[a->nopen++] = pr;
	if (a->active) {
		if (a->nwin < a->max_window)
			a->win[a->nwin++] = pr;
		else
			a->lost++;
	}
	pthread_mutex_unlock(&a->mu);
	return pr.id;
}

void crec_annot_pop(crec_annot *a, uint64_t id)
{
	size_t i;

	pthread_mutex_lock(&a->mu);
	for (i = a->nopen; i-- > 0;) {
		if (a->open[i].id == id) {
			memmove(a->open + i, a->open + i + 1, (a->nopen - i - 1) * sizeof *a->open);
			a->nopen--;
			break;
		}
	}
	pthread_mutex_unlock(&a->mu);
}

void crec_annot_window_begin(crec_annot *a)
{
	size_t i;

	pthread_mutex_lock(&a->mu);
	if (!a->win)
		a->win = malloc(a->max_window * sizeof *a->win);
	a->nwin = 0;
	a->lost = 0;
	a->active = a->win != NULL;
	for (i = 0; a->active && i < a->nopen; i++) {
		if (a->nwin < a->max_window)
			a->win[a->nwin++] = a->open[i];
		else
			a->lost++;
	}
	pthread_mutex_unlock(&a->mu);
}

unsigned long long crec_annot_window_end(crec_annot *a, crec_jbuf *out)
{
	unsigned long long lost;
	size_t i;

	pthread_mutex_lock(&a->mu);
	crec_jbuf_lit(out, "{");
	for (i = 0; i < a->nwin; i++) {
		const char *nm = a->win[i].name < a->nnames ? a->names[a->win[i].name] : crec_annot_overflow;
		if (i)
			crec_jbuf_lit(out, ", ");
		crec_jbuf_lit(out, "\"");
		crec_jbuf_u64(out, a->win[i].id);
		crec_jbuf_lit(out, "\": ");
		crec_jbuf_str(out, nm, strlen(nm));
	}
	crec_jbuf_lit(out, "}");
	a->active = 0;
	a->nwin = 0;
	lost = a->lost;
	a->lost = 0;
	pthread_mutex_unlock(&a->mu);
	return lost;
}

void crec_annot_destroy(crec_annot *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->nnames; i++)
		free(a->names[i]);
	free(a->names);
	free(a->slots);
	free(a->open);
	free(a->win);
	pthread_mutex_destroy(&a->mu);
	free(a);
}

struct crec_tmap_entry {
	int32_t opaque;
	uint32_t tid;
};

struct crec_tmap {
	pthread_mutex_t mu;
	struct crec_tmap_entry *e;
	size_t n, cap;
};

crec_tmap *crec_tmap_create(size_t cap)
{
	crec_tmap *m;

	if (cap == 0)
		return NULL;
	m = calloc(1, sizeof *m);
	if (!m || !(m->e = calloc(cap, sizeof *m->e))) {
		free(m);
		return NULL;
	}
	m->cap = cap;
	pthread_mutex_init(&m->mu, NULL);
	return m;
}

int crec_tmap_add(crec_tmap *m, int32_t opaque, uint32_t tid)
{
	int rc = -1;
	size_t i;

	pthread_mutex_lock(&m->mu);
	/* linear: a window sees tens of CUDA-calling threads, and each thread
	 * registers once per window */
	for (i = 0; i < m->n; i++) {
		if (m->e[i].opaque == opaque) {
			rc = m->e[i].tid != tid;
			m->e[i].tid = tid;
			break;
		}
	}
	if (i == m->n && m->n < m->cap) {
		m->e[m->n].opaque = opaque;
		m->e[m->n].tid = tid;
		m->n++;
		rc = 0;
	}
	pthread_mutex_unlock(&m->mu);
	return rc;
}

void crec_tmap_reset(crec_tmap *m)
{
	pthread_mutex_lock(&m->mu);
	m->n = 0;
	pthread_mutex_unlock(&m->mu);
}

size_t crec_tmap_count(crec_tmap *m)
{
	size_t n;

	pthread_mutex_lock(&m->mu);
	n = m->n;
	pthread_mutex_unlock(&m->mu);
	return n;
}

size_t crec_tmap_write_json(crec_tmap *m, long pid, int system_ids, uint32_t pid_max, crec_jbuf *out)
{
	size_t i, skipped = 0, written = 0;

	pthread_mutex_lock(&m->mu);
	crec_jbuf_lit(out, "{\"");
	crec_jbuf_i64(out, pid);
	crec_jbuf_lit(out, "\": {");
	for (i = 0; i < m->n; i++) {
		int32_t k = m->e[i].opaque;
		if (system_ids && k > 0 && (uint32_t)k <= pid_max) {
			skipped++;
			continue;
		}
		if (written++)
			crec_jbuf_lit(out, ", ");
		crec_jbuf_lit(out, "\"");
		crec_jbuf_i64(out, k);
		crec_jbuf_lit(out, "\": ");
		crec_jbuf_u64(out, m->e[i].tid);
	}
	crec_jbuf_lit(out, "}}");
	pthread_mutex_unlock(&m->mu);
	return skipped;
}

void crec_tmap_destroy(crec_tmap *m)
{
	if (!m)
		return;
	pthread_mutex_destroy(&m->mu);
	free(m->e);
	free(m);
}
