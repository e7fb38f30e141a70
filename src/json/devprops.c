/* devprops.c - Kineto's device properties read from a trace's JSON, by
 * Python's int() as the reference reads them. */
#include "config.h"
#include "json/devprops.h"
#include "base/diag.h"
#include "base/pyval.h"

#include <stdlib.h>

/* Python's int() of a device property (0 when it has none). */
static cm_int prop_int(const cm_jval *o, const char *key, int *present)
{
	const cm_jval *v = cm_jval_get(o, key);
	cm_int x = 0;
	*present = v != NULL;
	if (!v)
		return 0;
	switch (v->type) {
	case CM_J_NUM:
		if (cm_py_int_of_number(v->s, v->len, &x) != CM_PY_OK)
			x = 0;
		break;
	case CM_J_STR:
		if (cm_py_int_of_str(v->s, v->len, &x) != CM_PY_OK)
			x = 0;
		break;
	case CM_J_TRUE: x = 1; break;
	default: break;
	}
	return x;
}

/* The property KEY as a C int / size_t (the calculator's types), modulo. */
static int pint(const cm_jval *o, const char *key)
{
	int present;
	return (int)(uint32_t)(unsigned __int128)prop_int(o, key, &present);
}
static size_t psize(const cm_jval *o, const char *key, size_t dflt)
{
	int present;
	cm_int x = prop_int(o, key, &present);
	return present ? (size_t)(unsigned __int128)x : dflt;
}

int cm_kin_devices_read(cm_kin_devices *d, const cm_jval *v)
{
	size_t i = 0;
	cm_kin_devices_free(d);
	if (!v || v->type != CM_J_ARR || !v->len)
		return 0;
	d->v = cm_xcalloc(v->len, sizeof *d->v);
	for (const cm_jval *o = v->kids; o; o = o->next, i++) {
		cm_kin_props *p = &d->v[d->n++];
		cm_occ_props *q = &p->occ;
		int has_id;
		cm_int id = prop_int(o, "id", &has_id);
		p->id = has_id && id >= INT64_MIN && id <= INT64_MAX ? (int64_t)id : (int64_t)i;
		q->computeMajor = pint(o, "computeMajor");
		q->computeMinor = pint(o, "computeMinor");
		q->maxThreadsPerBlock = pint(o, "maxThreadsPerBlock");
		q->maxThreadsPerMultiprocessor = pint(o, "maxThreadsPerMultiprocessor");
		q->regsPerBlock = pint(o, "regsPerBlock");
		q->regsPerMultiprocessor = pint(o, "regsPerMultiprocessor");
		q->warpSize = pint(o, "warpSize");
		q->sharedMemPerBlock = psize(o, "sharedMemPerBlock", 0);
		q->sharedMemPerMultiprocessor = psize(o, "sharedMemPerMultiprocessor", 0);
		q->numSms = pint(o, "numSms");
		q->sharedMemPerBlockOptin = psize(o, "sharedMemPerBlockOptin", 0);
		q->reservedSharedMemPerBlock = psize(o, "reservedSharedMemPerBlock", q->computeMajor >= 8 ? 1024 : 0);
	}
	return 1;
}

const cm_kin_props *cm_kin_devices_find(const cm_kin_devices *d, int64_t id)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].id == id)
			return &d->v[i];
	return NULL;
}

void cm_kin_devices_free(cm_kin_devices *d)
{
	free(d->v);
	d->v = NULL;
	d->n = 0;
}
