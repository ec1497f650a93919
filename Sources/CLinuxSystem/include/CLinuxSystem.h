/*
 * What Swift cannot call in the C library directly: ioctl(2) is variadic, pipe2 is declared only under
 * _GNU_SOURCE, mallinfo2 returns a struct Swift's Glibc module leaves out, and a signal handler must be C.
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

/* glibc declares pipe2 only under _GNU_SOURCE, which Swift's Glibc module is not built with. */
extern int pipe2(int fds[2], int flags);
static inline int cls_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

/*
 * Delivers each of `signals` as one byte (its number) on a pipe and returns the pipe's read end, or -1 with
 * errno set. The pipe is made once per process; later calls add signals to it. Defined in CLinuxSystem.c.
 */
int cls_signal_pipe(const int *signals, int count);

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

#endif
