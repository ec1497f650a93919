/*
 * The evdev/uinput request numbers are function-like macros (_IOW, _IOR, _IOC with
 * sizes), which Swift cannot import; this header turns them into plain functions, and keeps the layouts of
 * struct ff_effect's and struct uhid_event's unions in C. Nothing here holds state or makes a system call:
 * the calls themselves go through LinuxSystem (CLinuxSystem has the ioctl forms Swift can call).
 * Every symbol is prefixed `cli_` (C Linux Input) to stay out of other modules' way.
 */
#ifndef CLINUXINPUT_H
#define CLINUXINPUT_H

/*
 * No _GNU_SOURCE here: it changes glibc's struct layouts' field names (fd_set's fds_bits), and Clang
 * then rejects importing this module next to Glibc, CLibudev or CLibevdev in one Swift compile job.
 */
#include <linux/input.h>
#include <linux/uinput.h>
#include <linux/uhid.h>
#include <stdint.h>
#include <string.h>
#include <stddef.h>

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
static inline unsigned long cli_EVIOCSCLOCKID(void) { return EVIOCSCLOCKID; }

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

/*
 * uhid: struct uhid_event is a packed union of 4 KiB buffers. These helpers fill and read it, so that its layout
 * stays in C. Every string is cut to its field's size and NUL-terminated; byte counts are clamped to the buffer.
 */
static inline size_t cli_uhid_event_size(void) { return sizeof(struct uhid_event); }
static inline size_t cli_uhid_data_max(void) { return UHID_DATA_MAX; }
static inline uint32_t cli_uhid_type(const struct uhid_event *e) { return e->type; }

static inline void cli_uhid_copy_string(char *field, size_t size, const char *value) {
    strncpy(field, value, size - 1);
    field[size - 1] = 0;
}

static inline void cli_uhid_create2(struct uhid_event *e, const char *name, const char *phys, const char *uniq,
                                    const uint8_t *descriptor, uint16_t descriptor_size, uint16_t bus,
                                    uint32_t vendor, uint32_t product, uint32_t version, uint32_t country) {
    memset(e, 0, sizeof(*e));
    e->type = UHID_CREATE2;
    cli_uhid_copy_string((char *)e->u.create2.name, sizeof(e->u.create2.name), name);
    cli_uhid_copy_string((char *)e->u.create2.phys, sizeof(e->u.create2.phys), phys);
    cli_uhid_copy_string((char *)e->u.create2.uniq, sizeof(e->u.create2.uniq), uniq);
    if (descriptor_size > HID_MAX_DESCRIPTOR_SIZE) descriptor_size = HID_MAX_DESCRIPTOR_SIZE;
    memcpy(e->u.create2.rd_data, descriptor, descriptor_size);
    e->u.create2.rd_size = descriptor_size;
    e->u.create2.bus = bus;
    e->u.create2.vendor = vendor;
    e->u.create2.product = product;
    e->u.create2.version = version;
    e->u.create2.country = country;
}

static inline void cli_uhid_destroy(struct uhid_event *e) {
    memset(e, 0, sizeof(*e));
    e->type = UHID_DESTROY;
}

static inline void cli_uhid_input2(struct uhid_event *e, const uint8_t *data, uint16_t size) {
    memset(e, 0, sizeof(*e));
    e->type = UHID_INPUT2;
    if (size > UHID_DATA_MAX) size = UHID_DATA_MAX;
    memcpy(e->u.input2.data, data, size);
    e->u.input2.size = size;
}

static inline void cli_uhid_get_report_reply(struct uhid_event *e, uint32_t id, uint16_t err, const uint8_t *data,
                                             uint16_t size) {
    memset(e, 0, sizeof(*e));
    e->type = UHID_GET_REPORT_REPLY;
    e->u.get_report_reply.id = id;
    e->u.get_report_reply.err = err;
    if (size > UHID_DATA_MAX) size = UHID_DATA_MAX;
    if (data) memcpy(e->u.get_report_reply.data, data, size);
    e->u.get_report_reply.size = data ? size : 0;
}

static inline void cli_uhid_set_report_reply(struct uhid_event *e, uint32_t id, uint16_t err) {
    memset(e, 0, sizeof(*e));
    e->type = UHID_SET_REPORT_REPLY;
    e->u.set_report_reply.id = id;
    e->u.set_report_reply.err = err;
}

/* UHID_OUTPUT: the report's bytes (id first when numbered) and its type. */
static inline const uint8_t *cli_uhid_output(const struct uhid_event *e, uint16_t *size, uint8_t *rtype) {
    *size = e->u.output.size > UHID_DATA_MAX ? UHID_DATA_MAX : e->u.output.size;
    *rtype = e->u.output.rtype;
    return e->u.output.data;
}

/* UHID_GET_REPORT: the request id to answer with, the report number and type. */
static inline void cli_uhid_get_report(const struct uhid_event *e, uint32_t *id, uint8_t *rnum, uint8_t *rtype) {
    *id = e->u.get_report.id;
    *rnum = e->u.get_report.rnum;
    *rtype = e->u.get_report.rtype;
}

/* UHID_SET_REPORT: as GET_REPORT, plus the report's bytes. */
static inline const uint8_t *cli_uhid_set_report(const struct uhid_event *e, uint32_t *id, uint8_t *rnum,
                                                 uint8_t *rtype, uint16_t *size) {
    *id = e->u.set_report.id;
    *rnum = e->u.set_report.rnum;
    *rtype = e->u.set_report.rtype;
    *size = e->u.set_report.size > UHID_DATA_MAX ? UHID_DATA_MAX : e->u.set_report.size;
    return e->u.set_report.data;
}

#endif
