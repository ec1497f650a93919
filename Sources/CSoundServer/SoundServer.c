/*
 * libpulse's asynchronous introspection on a private main loop: connect (never starting a server), ask for
 * the server's information and its sink list, run the loop until both answers are in or the time is up, and
 * disconnect. Functions are resolved from the library at run time; the header only gives their types.
 */
#include "CSoundServer.h"

#include <dlfcn.h>
#include <pulse/pulseaudio.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* The functions we call, resolved from libpulse.so.0. */
struct pulse {
    __typeof__(pa_mainloop_new) *mainloop_new;
    __typeof__(pa_mainloop_get_api) *mainloop_get_api;
    __typeof__(pa_mainloop_prepare) *mainloop_prepare;
    __typeof__(pa_mainloop_poll) *mainloop_poll;
    __typeof__(pa_mainloop_dispatch) *mainloop_dispatch;
    __typeof__(pa_mainloop_free) *mainloop_free;
    __typeof__(pa_context_new) *context_new;
    __typeof__(pa_context_connect) *context_connect;
    __typeof__(pa_context_get_state) *context_get_state;
    __typeof__(pa_context_errno) *context_errno;
    __typeof__(pa_context_disconnect) *context_disconnect;
    __typeof__(pa_context_unref) *context_unref;
    __typeof__(pa_context_get_server_info) *context_get_server_info;
    __typeof__(pa_context_get_sink_info_list) *context_get_sink_info_list;
    __typeof__(pa_operation_get_state) *operation_get_state;
    __typeof__(pa_operation_unref) *operation_unref;
    __typeof__(pa_proplist_gets) *proplist_gets;
    __typeof__(pa_channel_map_snprint) *channel_map_snprint;
    __typeof__(pa_strerror) *strerror;
};

static int load(struct pulse *pulse, char *detail, size_t detail_size) {
    /* Never unloaded (a second dlopen returns the same handle): unloading a library with handlers of its own
       is not safe. */
    void *library = dlopen("libpulse.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        snprintf(detail, detail_size, "%s", dlerror());
        return CSS_NO_CLIENT_LIBRARY;
    }
#define RESOLVE(field, symbol)                                                    \
    if ((pulse->field = (__typeof__(symbol) *)dlsym(library, #symbol)) == NULL) { \
        snprintf(detail, detail_size, "libpulse.so.0 has no %s", #symbol);        \
        return CSS_NO_CLIENT_LIBRARY;                                             \
    }
    RESOLVE(mainloop_new, pa_mainloop_new)
    RESOLVE(mainloop_get_api, pa_mainloop_get_api)
    RESOLVE(mainloop_prepare, pa_mainloop_prepare)
    RESOLVE(mainloop_poll, pa_mainloop_poll)
    RESOLVE(mainloop_dispatch, pa_mainloop_dispatch)
    RESOLVE(mainloop_free, pa_mainloop_free)
    RESOLVE(context_new, pa_context_new)
    RESOLVE(context_connect, pa_context_connect)
    RESOLVE(context_get_state, pa_context_get_state)
    RESOLVE(context_errno, pa_context_errno)
    RESOLVE(context_disconnect, pa_context_disconnect)
    RESOLVE(context_unref, pa_context_unref)
    RESOLVE(context_get_server_info, pa_context_get_server_info)
    RESOLVE(context_get_sink_info_list, pa_context_get_sink_info_list)
    RESOLVE(operation_get_state, pa_operation_get_state)
    RESOLVE(operation_unref, pa_operation_unref)
    RESOLVE(proplist_gets, pa_proplist_gets)
    RESOLVE(channel_map_snprint, pa_channel_map_snprint)
    RESOLVE(strerror, pa_strerror)
#undef RESOLVE
    return 0;
}

/* What the callbacks fill in. */
struct answer {
    const struct pulse *pulse;
    css_sink *sinks;
    int capacity;
    int count;
    char *server;
    size_t server_size;
};

static void copy(char *target, size_t size, const char *text) {
    snprintf(target, size, "%s", text != NULL ? text : "");
}

static void on_server_info(pa_context *context, const pa_server_info *info, void *userdata) {
    (void)context;
    struct answer *answer = userdata;
    if (info != NULL) {
        snprintf(answer->server, answer->server_size, "%s %s", info->server_name ? info->server_name : "",
                 info->server_version ? info->server_version : "");
    }
}

static int card_number(const struct pulse *pulse, pa_proplist *properties) {
    const char *keys[] = {"alsa.card", "api.alsa.card"};
    for (size_t index = 0; index < sizeof keys / sizeof keys[0]; index++) {
        const char *value = pulse->proplist_gets(properties, keys[index]);
        int card;
        char rest;
        if (value != NULL && sscanf(value, "%d%c", &card, &rest) == 1 && card >= 0) return card;
    }
    return -1;
}

static void on_sink(pa_context *context, const pa_sink_info *info, int end, void *userdata) {
    (void)context;
    struct answer *answer = userdata;
    if (end != 0 || info == NULL) return;
    if (answer->count < answer->capacity) {
        css_sink *sink = &answer->sinks[answer->count];
        copy(sink->name, sizeof sink->name, info->name);
        copy(sink->description, sizeof sink->description, info->description);
        sink->card = info->proplist != NULL ? card_number(answer->pulse, info->proplist) : -1;
        sink->channels = info->channel_map.channels;
        answer->pulse->channel_map_snprint(sink->channel_map, sizeof sink->channel_map, &info->channel_map);
    }
    answer->count++;
}

static long long milliseconds_now(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/* Runs one round of the loop, waiting at most until `deadline`; false once the time is up or the loop failed. */
static int turn(const struct pulse *pulse, pa_mainloop *loop, long long deadline) {
    long long left = deadline - milliseconds_now();
    if (left <= 0) return 0;
    if (pulse->mainloop_prepare(loop, (int)(left * 1000)) < 0) return 0;
    if (pulse->mainloop_poll(loop) < 0) return 0;
    return pulse->mainloop_dispatch(loop) >= 0;
}

int css_list_sinks(
    css_sink *sinks, int capacity, int timeout_ms, char *server, size_t server_size, char *detail,
    size_t detail_size) {
    copy(server, server_size, "");
    copy(detail, detail_size, "");
    struct pulse pulse;
    int loaded = load(&pulse, detail, detail_size);
    if (loaded < 0) return loaded;
    long long deadline = milliseconds_now() + timeout_ms;
    pa_mainloop *loop = pulse.mainloop_new();
    if (loop == NULL) {
        copy(detail, detail_size, "pa_mainloop_new failed");
        return CSS_NO_SERVER;
    }
    int result = CSS_TIMED_OUT;
    pa_context *context = pulse.context_new(pulse.mainloop_get_api(loop), "linuxhaptics");
    if (context == NULL) {
        copy(detail, detail_size, "pa_context_new failed");
        pulse.mainloop_free(loop);
        return CSS_NO_SERVER;
    }
    struct answer answer = {&pulse, sinks, capacity, 0, server, server_size};
    pa_operation *server_info = NULL, *sink_list = NULL;
    if (pulse.context_connect(context, NULL, PA_CONTEXT_NOAUTOSPAWN, NULL) < 0) {
        copy(detail, detail_size, pulse.strerror(pulse.context_errno(context)));
        result = CSS_NO_SERVER;
        goto done;
    }
    for (;;) {
        pa_context_state_t state = pulse.context_get_state(context);
        if (state == PA_CONTEXT_READY) break;
        if (!PA_CONTEXT_IS_GOOD(state)) {
            copy(detail, detail_size, pulse.strerror(pulse.context_errno(context)));
            result = CSS_NO_SERVER;
            goto done;
        }
        if (!turn(&pulse, loop, deadline)) goto done;
    }
    server_info = pulse.context_get_server_info(context, on_server_info, &answer);
    sink_list = pulse.context_get_sink_info_list(context, on_sink, &answer);
    if (server_info == NULL || sink_list == NULL) {
        copy(detail, detail_size, pulse.strerror(pulse.context_errno(context)));
        result = CSS_NO_SERVER;
        goto done;
    }
    while (pulse.operation_get_state(server_info) == PA_OPERATION_RUNNING ||
           pulse.operation_get_state(sink_list) == PA_OPERATION_RUNNING) {
        if (!turn(&pulse, loop, deadline)) goto done;
    }
    result = answer.count;
done:
    if (result == CSS_TIMED_OUT) snprintf(detail, detail_size, "no answer within %d ms", timeout_ms);
    if (server_info != NULL) pulse.operation_unref(server_info);
    if (sink_list != NULL) pulse.operation_unref(sink_list);
    pulse.context_disconnect(context);
    pulse.context_unref(context);
    pulse.mainloop_free(loop);
    return result;
}
