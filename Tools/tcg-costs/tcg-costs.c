/*
 * tcg-costs: what touching code and memory costs a process that was just switched back in, the situation of a
 * game's tap after a quiet moment. Two processes take turns through a pair of pipes (each turn a switch of
 * address space, which empties the translation lookaside buffer, and under qemu's TCG its table of translated
 * jump targets too); after each turn the parent times one of eight short paths, 300 times each, and prints their
 * p50 and p90 in microseconds. On a native CPU they all cost about the same; under TCG a call into another code
 * page and a first touch of another data page each cost measurably more than a call within one page.
 *
 *   cc -O2 -o tcg-costs Tools/tcg-costs/tcg-costs.c && scripts/vm-run --program ./tcg-costs -- tcg-costs
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { ROUNDS = 300, PATHS = 8, PAGE = 4096, FUNCTIONS = 20 };

static uint64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Twenty functions, each alone on its own code page. */
#define ON_ITS_PAGE(n) \
    __attribute__((noinline, aligned(PAGE))) static int f##n(int x) { return x * 3 + n; }
ON_ITS_PAGE(0) ON_ITS_PAGE(1) ON_ITS_PAGE(2) ON_ITS_PAGE(3) ON_ITS_PAGE(4) ON_ITS_PAGE(5) ON_ITS_PAGE(6)
ON_ITS_PAGE(7) ON_ITS_PAGE(8) ON_ITS_PAGE(9) ON_ITS_PAGE(10) ON_ITS_PAGE(11) ON_ITS_PAGE(12) ON_ITS_PAGE(13)
ON_ITS_PAGE(14) ON_ITS_PAGE(15) ON_ITS_PAGE(16) ON_ITS_PAGE(17) ON_ITS_PAGE(18) ON_ITS_PAGE(19)
static int (*const paged[FUNCTIONS])(int) = {f0, f1, f2, f3, f4, f5, f6, f7, f8, f9,
                                             f10, f11, f12, f13, f14, f15, f16, f17, f18, f19};

__attribute__((noinline)) static int next(int x) { return x + 1; }

static volatile int sink;

static int compare(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void must(int ok, const char *what) {
    if (!ok) {
        perror(what);
        exit(1);
    }
}

int main(void) {
    static const char *const names[PATHS] = {
        "clock read alone",       "20 calls, one page",     "5 calls, 5 code pages", "20 calls, 20 code pages",
        "5 data pages touched",   "20 data pages touched", "20 lines of one page",  "60 data pages touched"};
    static uint64_t samples[PATHS][ROUNDS];
    char *data = aligned_alloc(PAGE, 64 * PAGE);
    char *other = malloc(1 << 20);
    must(data && other, "malloc");
    memset(data, 1, 64 * PAGE);
    int there[2], back[2];
    must(pipe(there) == 0 && pipe(back) == 0, "pipe");
    pid_t child = fork();
    must(child >= 0, "fork");
    if (child == 0) {
        /* The other process: each turn touches a megabyte of its own, then hands the CPU back. */
        char c;
        while (read(there[0], &c, 1) == 1) {
            memset(other, c, 1 << 20);
            must(write(back[1], &c, 1) == 1, "write");
        }
        _exit(0);
    }
    for (int round = 0; round < ROUNDS; round++) {
        for (int path = 0; path < PATHS; path++) {
            char c = 1;
            must(write(there[1], &c, 1) == 1 && read(back[0], &c, 1) == 1, "turn");
            int x = round;
            uint64_t start = now_ns(), end = 0;
            switch (path) {
            case 0: end = now_ns(); break;
            case 1: for (int i = 0; i < 20; i++) x = next(x); end = now_ns(); break;
            case 2: for (int i = 0; i < 5; i++) x = paged[i](x); end = now_ns(); break;
            case 3: for (int i = 0; i < 20; i++) x = paged[i](x); end = now_ns(); break;
            case 4: for (int i = 0; i < 5; i++) x += data[i * PAGE]; end = now_ns(); break;
            case 5: for (int i = 0; i < 20; i++) x += data[i * PAGE]; end = now_ns(); break;
            case 6: for (int i = 0; i < 20; i++) x += data[i * 64]; end = now_ns(); break;
            case 7: for (int i = 0; i < 60; i++) x += data[i * PAGE]; end = now_ns(); break;
            }
            sink = x;
            samples[path][round] = end - start;
        }
    }
    close(there[1]);
    for (int path = 0; path < PATHS; path++) {
        qsort(samples[path], ROUNDS, sizeof samples[path][0], compare);
        printf("%-24s p50 %6.2f us  p90 %6.2f us\n", names[path], samples[path][ROUNDS / 2] / 1000.0,
               samples[path][ROUNDS * 9 / 10] / 1000.0);
    }
    return 0;
}
