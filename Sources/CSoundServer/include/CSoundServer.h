/*
 * The sound server's outputs, asked through its client library (libpulse, the protocol PulseAudio speaks and
 * PipeWire serves with pipewire-pulse). The library is loaded when first asked for (dlopen), never linked:
 * a machine without a sound server needs neither the server nor its client library, and the C library we
 * ship does not grow a dependency. Every symbol is prefixed `css_` (C Sound Server).
 */
#ifndef CSOUNDSERVER_H
#define CSOUNDSERVER_H

#include <stddef.h>

/* One output (sink) of the server, as far as choosing it for a sound card needs. */
typedef struct {
    /* Its name: what the server's ALSA plugins take as the device. */
    char name[512];
    char description[256];
    /* The ALSA card it plays on (its `alsa.card` property, or `api.alsa.card` where PipeWire names it so),
       or -1 when it plays on none (a network or virtual sink). */
    int card;
    int channels;
    /* Its channel positions in order, comma-separated ("front-left,front-right,rear-left,rear-right"). */
    char channel_map[512];
} css_sink;

/* Why there is no answer. */
enum {
    /* libpulse.so.0 cannot be loaded, or lacks a function we call. */
    CSS_NO_CLIENT_LIBRARY = -1,
    /* No server answers (none runs for this user, or it refused us). */
    CSS_NO_SERVER = -2,
    /* The server did not answer within the time allowed. */
    CSS_TIMED_OUT = -3,
};

/*
 * Asks the server for its sinks, within `timeout_ms`. Fills up to `capacity` entries of `sinks` and returns
 * how many sinks the server has (more than `capacity` when they did not all fit), or a negative CSS_ code.
 * `server` receives the server's name and version (PipeWire's says "on PipeWire"); `detail`, when the
 * answer is negative, what failed as the library said it.
 */
int css_list_sinks(
    css_sink *sinks, int capacity, int timeout_ms, char *server, size_t server_size, char *detail,
    size_t detail_size);

#endif
