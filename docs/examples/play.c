/*
 * play.c: plays an AHAP file on the first rumble-capable gamepad through liblinuxhaptics.
 *
 *     cc play.c -o play $(pkg-config --cflags --libs linuxhaptics)
 *     ./play [--wait-for-stop] PATTERN.ahap
 *
 * A file that does not load is reported as `haptics validate` reports it (file, JSON path, message, code) and
 * the exit status is 1. Otherwise the pattern plays ("playing ..."), and the program says "played" and ends
 * when it has played. With --wait-for-stop it then waits for the engine to stop by itself (the gamepad unplugged), prints
 * "stopped: REASON" and exits with 0. The kernel tests run this program against a virtual pad.
 */
#include <linuxhaptics.h>

#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* The stopped handler runs on an engine thread: it writes the reason into a pipe, which main waits on. */
static int stop_pipe[2];

static void on_stopped(lh_stopped_reason reason, void *user) {
    (void)user;
    unsigned char byte = (unsigned char)reason;
    if (write(stop_pipe[1], &byte, 1) != 1) {
        perror("play: write");
    }
}

/* Waits up to `milliseconds` (-1: without limit) for the engine to stop; prints the reason and returns 1 when
   it stopped, 0 when the time ran out. */
static int wait_for_stop(int milliseconds) {
    struct pollfd ready = {.fd = stop_pipe[0], .events = POLLIN};
    unsigned char byte;
    if (poll(&ready, 1, milliseconds) != 1 || read(stop_pipe[0], &byte, 1) != 1) {
        return 0;
    }
    printf("stopped: %s\n", lh_stopped_reason_name((lh_stopped_reason)byte));
    fflush(stdout);
    return 1;
}

/* Prints what failed and why, frees the error, and gives the exit status for a failure. */
static int fail(const char *what, lh_error *error) {
    fprintf(stderr, "play: %s: %s\n", what, lh_error_message(error));
    lh_error_free(error);
    return 1;
}

int main(int argc, char **argv) {
    int until_stopped = argc == 3 && strcmp(argv[1], "--wait-for-stop") == 0;
    if (argc != 2 + until_stopped) {
        fprintf(stderr, "usage: play [--wait-for-stop] PATTERN.ahap\n");
        return 2;
    }
    const char *path = argv[argc - 1];

    lh_error *error = NULL;
    lh_pattern *pattern = NULL;
    if (lh_pattern_load_file(path, &pattern, &error) != LH_OK) {
        /* One line per error, "FILE: JSON.PATH: error: MESSAGE [CODE]", as `haptics validate` prints it. */
        fprintf(stderr, "%s\n", lh_error_message(error));
        lh_error_free(error);
        return 1;
    }
    double duration = lh_pattern_duration(pattern);

    lh_engine *engine = NULL;
    if (lh_engine_create(NULL, &engine, &error) != LH_OK) {
        lh_pattern_free(pattern);
        return fail("cannot open the first rumble-capable gamepad", error);
    }
    if (pipe(stop_pipe) != 0) {
        perror("play: pipe");
        return 1;
    }
    lh_engine_set_stopped_handler(engine, on_stopped, NULL);

    lh_status status = lh_engine_play(engine, pattern, &error);
    lh_pattern_free(pattern); /* the engine plays its own copy */
    if (status != LH_OK) {
        lh_engine_destroy(engine);
        return fail("cannot play the pattern", error);
    }
    printf("playing %s (%.3f s) with liblinuxhaptics %s\n", path, duration, lh_version());
    fflush(stdout);

    /* The pattern's length and a little more, for its last motor update to run out. */
    int stopped = wait_for_stop((int)(duration * 1000) + 200);
    if (!stopped) {
        printf("played\n");
        fflush(stdout);
    }
    if (until_stopped && !stopped) {
        stopped = wait_for_stop(-1);
    }
    lh_engine_destroy(engine);
    /* Stopping by itself is what --wait-for-stop waits for; otherwise it cut the pattern short. */
    return stopped && !until_stopped ? 1 : 0;
}
