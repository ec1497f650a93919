#include "CLinuxSystem.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>

/*
 * The guard's side runs in a child forked from a process with many threads: only raw system calls are safe
 * there (another thread may have held malloc's lock, or stdio's, at the fork), and syscall(2) reaches the kernel
 * without the sanitizers' interceptors, which keep state of their own. No libc call but syscall and errno.
 */

/* Descriptors the guard keeps: the channel as its standard input, the device as its standard output. */
enum { GUARD_CHANNEL_FD = 0, GUARD_DEVICE_FD = 1 };

#ifndef SYS_close_range
#define SYS_close_range 436 /* the same number on every architecture since Linux 5.9 */
#endif

static __attribute__((noreturn)) void guard_exit(int status) {
    for (;;) syscall(SYS_exit_group, status);
}

/* One write of the silence report: a HID output report goes whole or not at all. */
static void guard_write_silence(const unsigned char *report, int length) {
    while (syscall(SYS_write, GUARD_DEVICE_FD, report, (size_t)length) < 0 && errno == EINTR) {}
}

/* Every descriptor from `first` up closed; without close_range (before Linux 5.9), one at a time up to the limit. */
static void guard_close_from(int first) {
    if (syscall(SYS_close_range, (unsigned)first, ~0U, 0U) == 0) return;
    struct rlimit limit;
    long highest = 1024;
    if (syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        highest = (long)limit.rlim_cur;
    for (long fd = first; fd < highest; fd++) syscall(SYS_close, fd);
}

/* Moves the two descriptors to 0 and 1 and closes every other. */
static int guard_keep_only(int device_fd, int channel_fd) {
    if (device_fd == GUARD_CHANNEL_FD) {
        /* Out of the channel's way first, so that moving the channel there does not close the device. */
        long moved = syscall(SYS_fcntl, device_fd, F_DUPFD, 2);
        if (moved < 0) return -1;
        device_fd = (int)moved;
    }
    if (channel_fd != GUARD_CHANNEL_FD && syscall(SYS_dup3, channel_fd, GUARD_CHANNEL_FD, 0) < 0) return -1;
    if (device_fd != GUARD_DEVICE_FD && syscall(SYS_dup3, device_fd, GUARD_DEVICE_FD, 0) < 0) return -1;
    guard_close_from(2);
    return 0;
}

static __attribute__((noreturn)) void guard_run(int device_fd, int channel_fd, int length, int timeout_ms) {
    /* Out of the parent's process group: a terminal's Ctrl-Z, Ctrl-C or hangup, and a kill of the group, reach
     * the parent's group only. Every signal stays blocked, as the parent set it around the fork, so that none of
     * the parent's handlers (inherited) runs here. */
    syscall(SYS_setpgid, 0, 0);
    syscall(SYS_prctl, PR_SET_NAME, (unsigned long)"haptics-guard", 0UL, 0UL, 0UL);
    if (guard_keep_only(device_fd, channel_fd) != 0) guard_exit(127);

    /* Two buffers, the latest message and the one arriving, swapped rather than copied; one byte more than a
     * message so that a message of the wrong length shows as such and is ignored. */
    unsigned char buffers[2][1 + CLS_SILENCE_GUARD_MAX_REPORT + 1];
    int latest = 0;
    int armed = 0;
    const long message = 1 + (long)length;
    for (;;) {
        struct pollfd channel = {GUARD_CHANNEL_FD, POLLIN, 0};
        /* Made afresh for each wait: the ppoll system call writes the time left back into it (glibc's wrapper
         * hides that), and a timeout reused would shrink with every message until it fired among heartbeats. */
        struct timespec timeout = {timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000L};
        /* Disarmed, nothing can be due: sleep until a message or the end, with no wake-ups meanwhile. */
        long ready = syscall(SYS_ppoll, &channel, 1UL, armed ? &timeout : NULL, NULL, (size_t)0);
        if (ready < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (ready == 0) {
            /* Timed out; but the guard may have been held up since (the machine stood still, and the writer woke
             * with it and ran first), and a heartbeat that came meanwhile means the writer went on: its report is
             * on the way already, and a silence written now would land after it, out of turn. Look once more. */
            struct timespec none = {0, 0};
            struct pollfd again = {GUARD_CHANNEL_FD, POLLIN, 0};
            if (syscall(SYS_ppoll, &again, 1UL, &none, NULL, (size_t)0) > 0) continue;
            if (armed) guard_write_silence(buffers[latest] + 1, length);
            armed = 0;
            continue;
        }
        int incoming = 1 - latest;
        long got = syscall(SYS_read, GUARD_CHANNEL_FD, buffers[incoming], sizeof buffers[incoming]);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            break;
        }
        if (got == 0) break; /* every holder of the parent's end closed it, or died */
        if (got != message) continue;
        latest = incoming;
        armed = buffers[latest][0] != 0;
    }
    if (armed) guard_write_silence(buffers[latest] + 1, length);
    guard_exit(0);
}

int cls_silence_guard_start(int device_fd, int report_length, int timeout_ms, int *channel) {
    if (device_fd < 0 || report_length < 1 || report_length > CLS_SILENCE_GUARD_MAX_REPORT || timeout_ms < 0 ||
        channel == NULL) {
        errno = EINVAL;
        return -1;
    }
    /* A socket rather than a pipe: a message is one record whatever the reader's timing, and a send to a guard
     * that is gone fails with EPIPE (MSG_NOSIGNAL) instead of raising SIGPIPE in the parent. */
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ends) != 0) return -1;
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    pid_t pid = fork();
    if (pid == 0) guard_run(device_fd, ends[1], report_length, timeout_ms);
    int saved = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    close(ends[1]);
    if (pid < 0) {
        close(ends[0]);
        errno = saved;
        return -1;
    }
    /* Also from this side, so that the group is the guard's own before this returns, whichever runs first. */
    setpgid(pid, pid);
    *channel = ends[0];
    return pid;
}

long cls_send_nonblocking(int fd, const void *bytes, size_t count) {
    return send(fd, bytes, count, MSG_DONTWAIT | MSG_NOSIGNAL);
}
