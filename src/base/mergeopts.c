/* mergeopts.c - cuptimerge's long options (mergeopts.h). */
#include "config.h"
#include "base/mergeopts.h"

#include <stddef.h>

const struct option cm_merge_longopts[] = {
	{"window", required_argument, NULL, 'w'},
	{"thread-map", required_argument, NULL, 't'},
	{"output", required_argument, NULL, 'o'},
	{"gzip", optional_argument, NULL, 'z'},
	{"trace-name", required_argument, NULL, CM_MOPT_TRACE_NAME},
	{"now", required_argument, NULL, CM_MOPT_NOW},
	{"force", no_argument, NULL, CM_MOPT_FORCE},
	{"clip", no_argument, NULL, CM_MOPT_CLIP},
	{"steps", required_argument, NULL, CM_MOPT_STEPS},
	{"range", required_argument, NULL, CM_MOPT_RANGE},
	{"split", required_argument, NULL, CM_MOPT_SPLIT},
	{"sync", no_argument, NULL, CM_MOPT_SYNC},
	{"jobs", required_argument, NULL, 'j'},
	{"memory", required_argument, NULL, CM_MOPT_MEMORY},
	{"format", required_argument, NULL, CM_MOPT_FORMAT},
	{"quiet", no_argument, NULL, 'q'},
	{"verbose", no_argument, NULL, 'v'},
	{"progress", no_argument, NULL, CM_MOPT_PROGRESS},
	{"no-progress", no_argument, NULL, CM_MOPT_NO_PROGRESS},
	{"buffer-size", required_argument, NULL, CM_MOPT_BUFSIZE}, /* for tests; not in --help */
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{NULL, 0, NULL, 0},
};
