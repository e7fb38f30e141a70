/* repairpass.c - `cuptimerge -t MAP TRACE`: the repair stage alone, in one pass.
 *
 * The trace is read with docread: top-level members are written back as they
 * come, as the bytes they were (so their order, spacing and digits are kept,
 * as the merge's copy keeps them: HTA finds a trace's rank by the text
 * `"rank": 3` in "distributedInfo"), each element of traceEvents goes
 * through the repair stage, and the names of the rows that gained events
 * follow the last element.  Unlike the merge, nothing here needs to be known
 * before the first byte goes out, so there is no second pass and a pipe is
 * not spooled; the price is that a damaged input is found only where it is
 * damaged: with -o the output file then never appears, on stdout the reader
 * gets a partial document and the exit status says so. */
#include "config.h"
#include "repair/repairpass.h"
#include "base/diag.h"
#include "json/docread.h"
#include "base/exitcode.h"
#include "io/input.h"
#include "io/output.h"
#include "json/evout.h"
#include "repair/repair.h"

#include <string.h>

struct rp {
	const char *trace_name; /* --trace-name, or NULL */
	cm_repair *repair;
	cm_evout eo;
	int members, seen_name;
};

/* Write the separator and KEY: of a top-level member; KEY is JSON text,
 * quotes included. */
static void member_head(struct rp *p, const char *key, size_t klen)
{
	if (p->members++)
		cm_buf_putc(&p->eo.buf, ',');
	cm_buf_put(&p->eo.buf, key, klen);
	cm_buf_putc(&p->eo.buf, ':');
}

static int on_member(void *ctx, const char *key, size_t klen, const cm_jval *val, const cm_docread_text *text,
		     int64_t off)
{
	struct rp *p = ctx;
	member_head(p, text->key, text->klen);
	if (klen == 9 && !memcmp(key, "traceName", 9)) {
		p->seen_name = 1;
		if (p->trace_name && *p->trace_name) {
			cm_jw_string(&p->eo.buf, p->trace_name, strlen(p->trace_name));
			return 0;
		}
	}
	if (klen == 19 && !memcmp(key, "baseTimeNanoseconds", 19) && val->type == CM_J_NUM) {
		cm_int base;
		if (cm_py_int_of_number(val->s, val->len, &base) == CM_PY_OK)
			cm_repair_set_base(p->repair, base); /* lifetimes can be used from here on */
	}
	cm_buf_put(&p->eo.buf, text->value, text->vlen);
	return cm_evout_flush(&p->eo);
}

static int on_begin(void *ctx)
{
	struct rp *p = ctx;
	member_head(p, "\"traceEvents\"", 13);
	cm_buf_putc(&p->eo.buf, '[');
	p->eo.first = 1;
	return 0;
}

static int on_element(void *ctx, uint64_t index, const cm_jval *el, int64_t off)
{
	struct rp *p = ctx;
	int moved;
	return cm_repair_write_event(p->repair, el, &p->eo, &moved);
}

static int on_end(void *ctx)
{
	struct rp *p = ctx;
	if (cm_repair_write_metadata(p->repair, &p->eo) < 0)
		return -1;
	cm_buf_putc(&p->eo.buf, ']');
	return 0;
}

int cm_repairpass_run(const char *cpu_path, size_t bufsize, const char *trace_name,
		      const cm_threadmap *map, cm_output *out)
{
	struct rp p;
	cm_input *in;
	cm_docread_sink sink = {
		.member_text = on_member, .array_begin = on_begin, .array_end = on_end,
		.element = on_element, .ctx = &p,
	};
	int ok, rc, status = 0;
	memset(&p, 0, sizeof p);
	p.trace_name = trace_name;
	in = cm_input_open(cpu_path, bufsize);
	if (!in) {
		cm_output_close(out, 0);
		return cm_diag_status();
	}
	p.repair = cm_repair_new(map);
	p.eo.out = out;
	cm_buf_putc(&p.eo.buf, '{');
	ok = cm_docread_run(in, "traceEvents", "trace", &sink, "repairing thread ids", NULL) == 0;
	if (ok) {
		const char *name = trace_name && *trace_name ? trace_name : NULL;
		if (name && !p.seen_name) {
			member_head(&p, "\"traceName\"", 11);
			cm_jw_string(&p.eo.buf, name, strlen(name));
		}
		cm_buf_putc(&p.eo.buf, '}');
		ok = cm_evout_flush(&p.eo) == 0;
	}
	{
		int piped = cm_output_pipe_closed(p.eo.out);
		rc = cm_output_close(p.eo.out, ok);
		if (piped || rc == 1)
			status = CM_EXIT_OK;
		else if (!ok || rc < 0)
			status = cm_diag_status() ? cm_diag_status() : CM_EXIT_IO;
	}
	cm_progress_clear();
	if (!status)
		cm_repair_report(p.repair);
	cm_buf_free(&p.eo.buf);
	cm_repair_free(p.repair);
	cm_input_close(in);
	return status;
}
