#include "CLinuxSystem.h"

#include <errno.h>
#include <string.h>
#include <signal.h>

/*
 * Signals as bytes on a pipe: the one piece of state in this module. A command that must stop its motors on
 * Ctrl-C or SIGTERM has a thread block in read() on the pipe; nothing wakes while no signal comes (a dispatch
 * signal source would instead poll on a one-second timer for the life of the process).
 */
static int signal_pipe_write_end = -1;

static void cls_signal_pipe_handler(int number) {
    int saved = errno;
    unsigned char byte = (unsigned char)number;
    ssize_t written = write(signal_pipe_write_end, &byte, 1);
    (void)written;
    errno = saved;
}

int cls_signal_pipe(const int *signals, int count) {
    static int read_end = -1;
    if (read_end < 0) {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return -1;
        /* The reader blocks; only the handler's end must never block. */
        int flags = fcntl(fds[0], F_GETFL);
        if (flags < 0 || fcntl(fds[0], F_SETFL, flags & ~O_NONBLOCK) != 0) {
            close(fds[0]);
            close(fds[1]);
            return -1;
        }
        signal_pipe_write_end = fds[1];
        read_end = fds[0];
    }
    for (int index = 0; index < count; index++) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = cls_signal_pipe_handler;
        action.sa_flags = SA_RESTART;
        sigemptyset(&action.sa_mask);
        if (sigaction(signals[index], &action, NULL) != 0) return -1;
    }
    return read_end;
}

/*
 * The first bytes of the page the release build lays the prepared start paths on (scripts/release-build links
 * in the order of scripts/hot-text.order): aligned to a page, so that the functions the link places right after
 * it share that page. Never called. Other builds may keep it too (the debug build does), at the cost of at most
 * a page of padding before it.
 */
__attribute__((section(".text.linuxhaptics_hot_text"), aligned(4096), used)) void linuxhaptics_hot_text(void) {}
