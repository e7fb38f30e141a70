/* options.h - what the command line asks for: struct cm_options, read by
 * the engine (merge.h), the repair pass and the cross-checks. */
#ifndef CM_OPTIONS_H
#define CM_OPTIONS_H

#include <stddef.h>

/* What the command line asks for (main.c fills it, nothing else). */
struct cm_options {
	const char *cpu_path;    /* CPU trace, "-" for stdin */
	const char *window_path; /* trace window (-w), or NULL: repair only */
	const char *map_path;    /* thread map (-t), or NULL: no repair */
	const char *out_path;    /* -o FILE, or NULL for stdout */
	int out_held;            /* -o names a descriptor this process holds (/dev/stdout, /dev/fd/N,
				  * cm_path_names_fd): written through it, as standard output */
	int gzip_level;          /* -1: plain; 0..9: gzip */
	const char *trace_name;  /* --trace-name, or NULL */
	int have_now;            /* --now given */
	double now;              /* seconds, for the missing-base fallback */
	size_t bufsize;          /* read chunk size */
	int jobs;                /* worker threads (-j; main.c sets the default) */
	size_t memory;           /* --memory: bytes for the id tables (main.c sets CM_MEMORY_DEFAULT) */
	int quiet, verbose;
	int force;               /* --force: merge inputs that look mismatched */
	int progress;            /* -1: on a terminal; 0 off; 1 on */
	int careful;             /* CUPTIMERGE_CAREFUL: only the careful (yajl) readers */
	int readahead;           /* CUPTIMERGE_READAHEAD: -1 by -j and the read size; 0 off; 1 on */
	int clip;                /* --clip: the window's events cut to the CPU trace's span */
	int cut;                 /* 0; 1 --steps (steps_a, steps_b); 2 --range (range_lo, range_hi) */
	unsigned long long steps_a, steps_b;
	double range_lo, range_hi; /* trace us, [lo, hi) */
	unsigned long long split_n; /* --split=steps[:N]: N steps a file (0: no split); out_path has one %s */
	const struct cm_output_codec *codec; /* --format: the outputs' transcoder (output.h), NULL: JSON */
	/* testing aids (environment only), which the engine hands on to the
	 * stage they steer; 0: that stage's own default */
	size_t spill;               /* CUPTIMERGE_SPILL: member values past this go to a file (docsplit.h) */
	unsigned long long span_slice; /* CUPTIMERGE_SPAN_SLICE: spans a block of their render (gpuconv.h) */
};

#endif
