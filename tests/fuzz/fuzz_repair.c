/* fuzz_repair.c - fuzz harness: the fuzzer's bytes are the trace to repair,
 * with a fixed thread map.
 * The driver and the properties it checks are in fuzz.c (see fuzz.h). */
#include "config.h"
#include "fuzz.h"

const struct fuzz_target fuzz_target = {"repair", FUZZ_REPAIR, "tests/fuzz/map4242.json"};
