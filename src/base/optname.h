/* optname.h - name the option getopt_long refused, as the user typed it
 * (issue 28 P9): shared by cuptimerge, cuptimerge-batch and cuptirec, whose
 * messages used to name the program or the previous option instead. */
#ifndef CM_OPTNAME_H
#define CM_OPTNAME_H

#include <getopt.h>
#include <stddef.h>

/* Call right after getopt_long(ARGC, ARGV, OPTSTRING, LONGOPTS, ...) returned
 * '?' or ':' (C), with opterr 0 and OPTSTRING starting with ':' (after any
 * '+'), so that a missing argument returns ':'.  Writes the offending option
 * into BUF (BUFSZ bytes, NUL-terminated): "-p" for a short one, even inside a
 * cluster such as "-qp2", or "--name" without any "=VALUE" for a long one.
 * Returns what is wrong with it: "unrecognized option", "ambiguous option",
 * "option takes no argument" or "option needs an argument". */
const char *cm_optname(int c, char *const argv[], const struct option *longopts, char *buf, size_t bufsz);

/* 1 when the name S ends in SUFFIX, else 0. */
int cm_name_ends_with(const char *s, const char *suffix);

/* The format an output's name OUT says, as cuptimerge reads -o and
 * cuptimerge-batch its ranks' outputs (one rule, so that the batch's checks
 * of -- --format and -z agree with the merges it runs): "perfetto" for
 * .pftrace and .pftrace.gz, "json" for .json and .json.gz, else NULL (a name
 * that says nothing, /dev/null or a FIFO: --format decides, JSON by
 * default). */
const char *cm_named_format(const char *out);

#endif
