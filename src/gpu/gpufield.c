/* gpufield.c - the fields of a window event read by Python's rules: int()
 * of a member (_as_int), a time within range, an id narrowed to a 64-bit
 * table key.  The digest (gpudigest.c) reads an event's fields with them,
 * and so does the first-pass scan of its external correlations (gpujoin.c). */
#include "config.h"
#include "gpu/gpuconv_int.h"

#include <stdint.h>

#define CM_WF_NAME(id, name) name,
const char *const cm_wf_name[WF_N] = {CM_WINDOW_FIELDS(CM_WF_NAME)};
#undef CM_WF_NAME

/* Python's _as_int(V) (V NULL: a missing key read with .get(key, 0)):
 * int() of a number or string, 0 when int() raises ValueError/TypeError;
 * an infinite number raises OverflowError in Python: an error here too. */
int gpu_as_int(const struct gpu_event_at *a, const char *key, const cm_jval *v, cm_int *out)
{
	int rc;
	*out = 0;
	if (!v)
		return 0;
	switch (v->type) {
	case CM_J_NUM:
		if (v->has_iv) { /* read as the event was checked (jvalid.c) */
			*out = v->iv;
			return 0;
		}
		rc = cm_py_int_of_number(v->s, v->len, out);
		break;
	case CM_J_STR:
		rc = cm_py_int_of_str(v->s, v->len, out);
		if (rc == CM_PY_VALUE) {
			*out = 0;
			rc = CM_PY_OK;
		}
		break;
	case CM_J_TRUE:
		*out = 1;
		return 0;
	default:
		return 0;
	}
	if (rc != CM_PY_OK)
		return gpu_ev_error(a->g, a->index, a->offset, "\"%s\": %.*s is infinite or beyond 128 bits", key,
				(int)(v->len > 40 ? 40 : v->len), v->s);
	return 0;
}


/* _as_int(event[F]) (REQUIRED: a missing key is an error, as the KeyError
 * of event[F]) or _as_int(event.get(F, 0)); a time (start_ns, end_ns) must
 * lie within CM_TIME_LIMIT. */
int gpu_int_field_any(const struct gpu_event_at *a, int f, int required, cm_int *out)
{
	const cm_jval *v = a->f[f];
	if (!v && required)
		return gpu_ev_error(a->g, a->index, a->offset, "missing field \"%s\"", cm_wf_name[f]);
	if (gpu_as_int(a, cm_wf_name[f], v, out) < 0)
		return -1;
	if (gpu_is_time(f) && !gpu_time_ok(*out))
		return gpu_ev_error(a->g, a->index, a->offset, GPU_TIME_RANGE_MSG, cm_wf_name[f]);
	return 0;
}

/* Narrow V to 64 bits for a table key. */
int gpu_to_i64(const struct gpu_event_at *a, const char *key, cm_int v, int64_t *out)
{
	if (v < INT64_MIN || v > INT64_MAX)
		return gpu_ev_error(a->g, a->index, a->offset, "\"%s\" does not fit in 64 bits", key);
	*out = (int64_t)v;
	return 0;
}

int gpu_to_id(const struct gpu_event_at *a, const char *key, int kind, cm_int v, int64_t *out)
{
	if (!cm_id_key(v, out, &a->d->idsigns[kind]))
		return gpu_ev_error(a->g, a->index, a->offset, "\"%s\" does not fit in 64 bits (as a uint64 or an int64)",
				    key);
	return 0;
}

/* The event's field F, which must exist. */
const cm_jval *gpu_need(const struct gpu_event_at *a, int f)
{
	const cm_jval *v = a->f[f];
	if (!v)
		gpu_ev_error(a->g, a->index, a->offset, "missing field \"%s\"", cm_wf_name[f]);
	return v;
}
