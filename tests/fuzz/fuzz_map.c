/* fuzz_map.c - fuzz harness: the fuzzer's bytes are the thread map, used to
 * repair a small real trace.
 * The driver and the properties it checks are in fuzz.c (see fuzz.h). */
#include "config.h"
#include "fuzz.h"

const struct fuzz_target fuzz_target = {"map", FUZZ_MAP, "tests/fuzz/repair_trace.json"};
