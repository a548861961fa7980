// The cost of one read of each clock a bus could take its time from, for the README's analysis of
// a publish: CLOCK_BOOTTIME (what BusClock.continuous() reads), CLOCK_MONOTONIC,
// CLOCK_MONOTONIC_COARSE (cheap, but 4 ms ticks and no time asleep) and, on x86-64, the CPU's
// time-stamp counter (rdtsc), which Swift cannot read without C. Best of 5 rounds of 20M reads.
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static double nanoseconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static volatile uint64_t sink;

static double perRead(clockid_t clock) {
    const int reads = 20000000;
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double start = nanoseconds();
        for (int i = 0; i < reads; i++) {
            struct timespec t;
            clock_gettime(clock, &t);
            sink += (uint64_t)t.tv_nsec;
        }
        double each = (nanoseconds() - start) / reads;
        if (each < best) best = each;
    }
    return best;
}

int main(void) {
    printf("| clock | ns per read |\n|---|---:|\n");
    printf("| `clock_gettime(CLOCK_BOOTTIME)` | %.1f |\n", perRead(CLOCK_BOOTTIME));
    printf("| `clock_gettime(CLOCK_MONOTONIC)` | %.1f |\n", perRead(CLOCK_MONOTONIC));
    printf("| `clock_gettime(CLOCK_MONOTONIC_COARSE)` | %.1f |\n", perRead(CLOCK_MONOTONIC_COARSE));
#if defined(__x86_64__)
    const int reads = 20000000;
    double best = 1e30;
    for (int round = 0; round < 5; round++) {
        double start = nanoseconds();
        for (int i = 0; i < reads; i++) sink += __rdtsc();
        double each = (nanoseconds() - start) / reads;
        if (each < best) best = each;
    }
    printf("| `rdtsc` | %.1f |\n", best);
#endif
    return 0;
}
