// libFuzzer's driver, which the harnesses call from their own entry point: SwiftPM links an
// executable with `--defsym main=<Module>_main`, so libFuzzer's `main` is never used.
// Linked by `-sanitize=fuzzer` (libclang_rt.fuzzer); nothing to link here.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
