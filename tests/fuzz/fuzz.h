/* fuzz.h - what the four fuzz harnesses share (tests/fuzz/fuzz.c).
 *
 * Each harness (fuzz_cpu.c, fuzz_window.c, fuzz_map.c, fuzz_repair.c) says
 * which input of a cuptimerge run the fuzzer's bytes become; the driver in
 * fuzz.c runs the real engine (cm_merge_run, as main.c does) on them and
 * checks properties, aborting on the first one that fails:
 *   - the status is one of the documented ones (0, 1, 2, 3), and not 3 (an
 *     I/O error cannot happen here: it would be a pass that read the text
 *     differently from yajl's);
 *   - a failed run reports exactly one error line and leaves no file in the
 *     output directory, neither the output nor a temporary one;
 *   - a successful run writes valid, strict JSON;
 *   - a window the merge took keeps to the documented ranges of ids and
 *     times (cuptimerge-window(5): ids in [-2^63, 2^64), no kind both
 *     negative and from 2^63 up; times less than 2^126 ns from 0);
 *   - the same input read in chunks of 1..31 bytes gives the same status
 *     and the same bytes;
 *   - the hand-written scanners (jscan.c, the Python-json parser of jval.c)
 *     accept exactly the texts that yajl with the strict check accepts, and
 *     find the same end of the value. */
#ifndef CM_FUZZ_H
#define CM_FUZZ_H

#include "merge.h"

/* Which input the fuzzer's bytes are. */
enum fuzz_role { FUZZ_CPU, FUZZ_WINDOW, FUZZ_MAP, FUZZ_REPAIR };

struct fuzz_target {
	const char *name;
	enum fuzz_role role;
	const char *partner;  /* the fixed other input, a file under FUZZ_DATA */
};

/* Defined by each harness. */
extern const struct fuzz_target fuzz_target;

#endif
