/* fuzz_window.c - fuzz harness: the fuzzer's bytes are the trace window,
 * merged into the example CPU trace.
 * The driver and the properties it checks are in fuzz.c (see fuzz.h). */
#include "config.h"
#include "fuzz.h"

const struct fuzz_target fuzz_target = {"window", FUZZ_WINDOW, "tests/fixtures/cpu.json"};
