/*
 * The evdev/uinput request numbers are function-like macros (_IOW, _IOR, _IOC with
 * sizes), which Swift cannot import, and ioctl(2) is variadic, which Swift cannot call.
 * This header turns both into plain functions. Nothing here holds state.
 * Every symbol is prefixed `cli_` (C Linux Input) to stay out of other modules' way.
 */
#ifndef CLINUXINPUT_H
#define CLINUXINPUT_H

/*
 * No _GNU_SOURCE here: it changes glibc's struct layouts' field names (fd_set's fds_bits), and Clang
 * then rejects importing this module next to Glibc, CLibudev or CLibevdev in one Swift compile job.
 * The one GNU function we need is declared below instead.
 */
#include <fcntl.h>
#include <unistd.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <sys/ioctl.h>
#include <stddef.h>

/* ioctl without varargs: one form for pointer arguments, one for integer arguments. */
static inline int cli_ioctl_ptr(int fd, unsigned long request, void *arg) {
    return ioctl(fd, request, arg);
}
static inline int cli_ioctl_int(int fd, unsigned long request, int arg) {
    return ioctl(fd, request, arg);
}
static inline int cli_ioctl_none(int fd, unsigned long request) {
    return ioctl(fd, request);
}

/* glibc declares pipe2 only under _GNU_SOURCE, which Swift's Glibc module is not built with. */
extern int pipe2(int fds[2], int flags);
static inline int cli_pipe2(int fds[2], int flags) { return pipe2(fds, flags); }

/* evdev requests */
static inline unsigned long cli_EVIOCGVERSION(void) { return EVIOCGVERSION; }
static inline unsigned long cli_EVIOCGID(void) { return EVIOCGID; }
static inline unsigned long cli_EVIOCGNAME(unsigned int len) { return EVIOCGNAME(len); }
static inline unsigned long cli_EVIOCGPHYS(unsigned int len) { return EVIOCGPHYS(len); }
static inline unsigned long cli_EVIOCGUNIQ(unsigned int len) { return EVIOCGUNIQ(len); }
static inline unsigned long cli_EVIOCGBIT(unsigned int ev, unsigned int len) { return EVIOCGBIT(ev, len); }
static inline unsigned long cli_EVIOCGEFFECTS(void) { return EVIOCGEFFECTS; }
static inline unsigned long cli_EVIOCSFF(void) { return EVIOCSFF; }
static inline unsigned long cli_EVIOCRMFF(void) { return EVIOCRMFF; }

/* uinput requests */
static inline unsigned long cli_UI_SET_EVBIT(void) { return UI_SET_EVBIT; }
static inline unsigned long cli_UI_SET_KEYBIT(void) { return UI_SET_KEYBIT; }
static inline unsigned long cli_UI_SET_ABSBIT(void) { return UI_SET_ABSBIT; }
static inline unsigned long cli_UI_SET_FFBIT(void) { return UI_SET_FFBIT; }
static inline unsigned long cli_UI_SET_PHYS(void) { return UI_SET_PHYS; }
static inline unsigned long cli_UI_DEV_SETUP(void) { return UI_DEV_SETUP; }
static inline unsigned long cli_UI_ABS_SETUP(void) { return UI_ABS_SETUP; }
static inline unsigned long cli_UI_DEV_CREATE(void) { return UI_DEV_CREATE; }
static inline unsigned long cli_UI_DEV_DESTROY(void) { return UI_DEV_DESTROY; }
static inline unsigned long cli_UI_GET_SYSNAME(unsigned int len) { return UI_GET_SYSNAME(len); }
static inline unsigned long cli_UI_BEGIN_FF_UPLOAD(void) { return UI_BEGIN_FF_UPLOAD; }
static inline unsigned long cli_UI_END_FF_UPLOAD(void) { return UI_END_FF_UPLOAD; }
static inline unsigned long cli_UI_BEGIN_FF_ERASE(void) { return UI_BEGIN_FF_ERASE; }
static inline unsigned long cli_UI_END_FF_ERASE(void) { return UI_END_FF_ERASE; }

/* Constants that are macros of expressions Swift does not import. */
static inline int cli_UINPUT_MAX_NAME_SIZE(void) { return UINPUT_MAX_NAME_SIZE; }
static inline int cli_EV_UINPUT(void) { return EV_UINPUT; }
static inline int cli_UI_FF_UPLOAD(void) { return UI_FF_UPLOAD; }
static inline int cli_UI_FF_ERASE(void) { return UI_FF_ERASE; }

/*
 * struct ff_effect holds a union; Swift imports it, but reading the right member by
 * type is easy to get wrong, so accessors name the member they touch.
 */
static inline struct ff_rumble_effect *cli_ff_rumble(struct ff_effect *e) { return &e->u.rumble; }
static inline struct ff_periodic_effect *cli_ff_periodic(struct ff_effect *e) { return &e->u.periodic; }
static inline struct ff_constant_effect *cli_ff_constant(struct ff_effect *e) { return &e->u.constant; }
static inline struct ff_ramp_effect *cli_ff_ramp(struct ff_effect *e) { return &e->u.ramp; }
static inline struct ff_condition_effect *cli_ff_condition(struct ff_effect *e, int axis) { return &e->u.condition[axis]; }

#endif
