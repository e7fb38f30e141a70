/* mergeopts.h - cuptimerge's options, listed once: main.c hands this table
 * to getopt_long, and cuptimerge-batch reads by it the merge options it
 * passes on after its "--" (batch/batchargs.c), as that getopt_long will.
 * They used to be two tables kept in step by hand.  In base/ because both
 * programs stand on it (tests/e2e/layers.sh: batch/ sees base/ and io/). */
#ifndef CM_MERGEOPTS_H
#define CM_MERGEOPTS_H

#include <getopt.h>

/* What getopt_long returns for the long options without a letter (the
 * others return their letter). */
enum {
	CM_MOPT_TRACE_NAME = 256, CM_MOPT_NOW, CM_MOPT_PROGRESS, CM_MOPT_NO_PROGRESS, CM_MOPT_BUFSIZE, CM_MOPT_FORCE,
	CM_MOPT_MEMORY, CM_MOPT_FORMAT, CM_MOPT_CLIP, CM_MOPT_STEPS, CM_MOPT_RANGE, CM_MOPT_SPLIT, CM_MOPT_SYNC
};

/* The long options, ended by an entry of NULL name, each with no flag
 * pointer (getopt_long returns its val). */
extern const struct option cm_merge_longopts[];

/* The short ones, getopt's optstring after its leading ':' (a letter with
 * ':' takes a value, in the word or the next; with "::" only attached). */
#define CM_MERGE_SHORTOPTS "w:t:o:z::j:qvhV"

#endif
