/* fuzz_cpu.c - fuzz harness: the fuzzer's bytes are the CPU trace, merged
 * with the example window.
 * The driver and the properties it checks are in fuzz.c (see fuzz.h). */
#include "config.h"
#include "fuzz.h"

const struct fuzz_target fuzz_target = {"cpu", FUZZ_CPU, "tests/fixtures/window.json"};
