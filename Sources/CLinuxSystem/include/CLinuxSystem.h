/*
 * What Swift cannot call in the C library directly: ioctl(2) is variadic, timerfd and statfs are not in Swift's
 * Glibc module, O_PATH and pipe2 are declared only under
 * _GNU_SOURCE, mallinfo2 returns a struct Swift's Glibc module leaves out, a signal handler must be C, and a
 * forked child of a threaded process may make only raw system calls (the silence guard), a write that
 * reaches the kernel without a call into the C library, and glibc's `stdout`, which Swift 6 will not touch.
 * This header turns each into a plain function for LinuxSystem, the one Swift layer that calls the C library.
 * Every symbol is prefixed `cls_` (C Linux System) to stay out of other modules' way.
 */
#ifndef CLINUXSYSTEM_H
#define CLINUXSYSTEM_H

/*
 * No _GNU_SOURCE here: it changes glibc's struct layouts' field names (fd_set's fds_bits), and Clang
 * then rejects importing this module next to Glibc, CLibudev or CLibevdev in one Swift compile job.
 * The one GNU function we need is declared below instead.
 */
#include <fcntl.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

/* ioctl without varargs: one form for pointer arguments, one for integer arguments, one for none. */
static inline int cls_ioctl_ptr(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}
static inline int cls_ioctl_int(int fd, unsigned long request, int arg) {
    return ioctl(fd, request, arg);
}
static inline int cls_ioctl_none(int fd, unsigned long request) {
    return ioctl(fd, request);
}

/*
 * write(2) as the system call itself, made in place: no call into the C library before the kernel. A process
 * with threads reaches the kernel through glibc's `write` by way of its procedure linkage table, the function
 * and the bookkeeping that makes it a cancellation point (a call into another of libc's functions and the
 * thread's own control block); a game's tap after a quiet moment finds each of those pages cold, and under
 * emulation each costs a walk of the page tables. This package never cancels a thread, so a write that is not
 * a cancellation point loses nothing. -1 with errno set on failure, as write(2). Built with a sanitizer, and on
 * architectures other than x86-64 and AArch64, it is glibc's `write`: the sanitizers follow descriptors through
 * their interceptors.
 */
#include <errno.h>
#include <sys/syscall.h>
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define CLS_WRITE_THROUGH_LIBC 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CLS_WRITE_THROUGH_LIBC 1
#endif
static inline long cls_write_direct(int fd, const void *buffer, size_t count) {
#if defined(CLS_WRITE_THROUGH_LIBC) || !(defined(__x86_64__) || defined(__aarch64__))
    return write(fd, buffer, count);
#else
#if defined(__x86_64__)
    long result;
    __asm__ volatile("syscall"
                     : "=a"(result)
                     : "0"((long)__NR_write), "D"((long)fd), "S"(buffer), "d"(count)
                     : "rcx", "r11", "memory");
#else
    register long x8 __asm__("x8") = __NR_write;
    register long x0 __asm__("x0") = fd;
    register long x1 __asm__("x1") = (long)buffer;
    register long x2 __asm__("x2") = (long)count;
    __asm__ volatile("svc 0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    long result = x0;
#endif
    if (result < 0 && result > -4096) {
        errno = (int)-result;
        return -1;
    }
    return result;
#endif
}

/*
 * A CLOCK_MONOTONIC timerfd, and its one-shot expiry set to an absolute time (0 disarms it), for a thread that
 * sleeps in read(2) until a deadline others may move earlier without waking it.
 */
static inline int cls_monotonic_timerfd(void) {
    return timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
}
static inline int cls_timerfd_set_absolute(int fd, long long seconds, long nanoseconds) {
    struct itimerspec spec = {{0, 0}, {(time_t)seconds, nanoseconds}};
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &spec, NULL);
}

/*
 * open(2) with O_PATH, which glibc names only under _GNU_SOURCE (its value, __O_PATH, it defines for every
 * architecture): a descriptor that names the file at `path` without opening it, for fstat and fstatfs.
 */
static inline int cls_open_path(const char *path) { return open(path, __O_PATH | O_CLOEXEC); }

/* glibc declares pipe2 only under _GNU_SOURCE, which Swift's Glibc module is not built with. */
extern int pipe2(int fds[2], int flags);
static inline int cls_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

/*
 * statfs(2) and fstatfs(2), of which only the file system's magic number (`f_type`, linux/magic.h) is wanted: the
 * type of file system a file is on. `f_type` is a signed word; the magic number is its low 32 bits.
 */
#include <sys/vfs.h>
static inline int cls_fstatfs_magic(int fd, unsigned int *magic) {
    struct statfs info;
    int result = fstatfs(fd, &info);
    if (result == 0) *magic = (unsigned int)info.f_type;
    return result;
}
static inline int cls_statfs_magic(const char *path, unsigned int *magic) {
    struct statfs info;
    int result = statfs(path, &info);
    if (result == 0) *magic = (unsigned int)info.f_type;
    return result;
}

/*
 * Delivers each of `signals` as one byte (its number) on a pipe and returns the pipe's read end, or -1 with
 * errno set. The pipe is made once per process; later calls add signals to it. Defined in CLinuxSystem.c.
 */
int cls_signal_pipe(const int *signals, int count);

/*
 * The silence guard: a child process that writes one silence report to a device when the stream writing to
 * that device stops while it plays (its writer killed, stopped, or hung), so that a pad which holds the last
 * frame it got comes to rest. Forks the guard and returns its process id, with `*channel` the parent's end of
 * a close-on-exec SOCK_SEQPACKET socket pair; or -1 with errno set (EINVAL for a length outside
 * 1...CLS_SILENCE_GUARD_MAX_REPORT or a negative timeout).
 *
 * Each message on the channel is 1 + report_length bytes: an armed flag, then the silence report. The guard
 * keeps the latest. When no message comes for timeout_ms while armed, it writes that report to device_fd once
 * and disarms; when the channel ends (every holder of the parent's end closed it or died), it writes it if
 * armed and exits. It writes nothing otherwise.
 *
 * The guard runs in a process group of its own with every signal blocked, so that job control and the
 * terminal's signals to the parent's group neither stop nor end it (SIGKILL and SIGSTOP sent to it alone
 * still do), and it holds no descriptor but the device's and the channel's (its standard input is the channel,
 * its standard output the device): a file its parent opened closes when the parent dies, not when the guard
 * exits. Its name is "haptics-guard". Defined in CLinuxSystem.c.
 */
#define CLS_SILENCE_GUARD_MAX_REPORT 1024
int cls_silence_guard_start(int device_fd, int report_length, int timeout_ms, int *channel);

/*
 * send(2) with MSG_DONTWAIT | MSG_NOSIGNAL: never blocks, and a peer that is gone is EPIPE rather than a
 * SIGPIPE that would end the process (a library cannot count on its host ignoring SIGPIPE). glibc's MSG_
 * constants are enumerators Swift does not import as flags. Defined in SilenceGuard.c.
 */
long cls_send_nonblocking(int fd, const void *bytes, size_t count);

/*
 * The heap this process has allocated and not freed: glibc's mallinfo2, bytes in use in every arena plus the
 * chunks malloc mapped on their own. Resident memory also counts what the allocator keeps after a free; this
 * counts only what the program holds (how the load soak tells a leak from the allocator's caching).
 */
#include <malloc.h>
static inline size_t cls_heap_bytes_in_use(void) {
    struct mallinfo2 info = mallinfo2();
    return info.uordblks + info.hblkhd;
}

/*
 * Standard output written out, and whether every write to it so far succeeded: 0, or -1 when one failed (a full
 * disk, a closed terminal), with errno set when the flush itself failed and 0 when an earlier write did. Here
 * because Swift 6 takes glibc's `stdout` for shared mutable state.
 */
#include <stdio.h>
static inline int cls_flush_standard_output(void) {
    errno = 0;
    if (fflush(stdout) != 0) return -1;
    return ferror(stdout) ? -1 : 0;
}

#endif
