/*
 * sdl-peer: plays rumble the way a careful SDL2 game does, so that `make bench-peers` can hold our engine up
 * against SDL on the same device in the same run. It opens the one game controller (or joystick) SDL finds and
 * takes its commands on standard input, one per line; it answers on standard output, one line per command.
 *
 *   sdl-peer [--haptic] latency   "go MS [PAUSE [AFTER [TICK]]]": full rumble for MS ms; answers "t MICROSECONDS"
 *                                 (CLOCK_MONOTONIC, read just before the SDL call). With PAUSE, it first sleeps
 *                                 PAUSE microseconds, so that the call comes out of the same quiet as the caller
 *                                 it is held against; with TICK (the kernel's tick in nanoseconds), it sleeps on
 *                                 to the first instant a quarter of a tick past one (the kernel lays its ticks on
 *                                 multiples of the period), as that caller does, so that the kernel's tick does
 *                                 not fall on the call; with AFTER, it sleeps AFTER microseconds after the call
 *                                 before it answers, so that its answer (a write to the terminal, which queues
 *                                 the terminal's work and wakes the reader) does not compete with the driver's
 *                                 work and the device for the processor. "stop": rumble off; answers "ok". With
 *                                 --haptic, "upload MS" first uploads the effect "go MS" runs (full levels, MS
 *                                 ms long; answers "ok"), and "go" then only runs it: SDL_HapticRunEffect alone.
 *   sdl-peer [--haptic] play CSV  plays CSV (time,strong,weak rows from `haptics render --format csv`) at the
 *                                 game's frame rate (--fps, default 60): the levels of the row due at each frame.
 *                                 Prints "start MICROSECONDS" after the first frame and "end MICROSECONDS" after
 *                                 the rumble is off, then waits for standard input to close.
 *   sdl-peer [--haptic] idle      opens the device, prints "ready", then waits for standard input to close.
 *
 * The device is the joystick with the USB ids of --ids VENDOR:PRODUCT (hexadecimal; default: the first one), and
 * its haptic device the joystick's own or, for a joystick SDL drives through HIDAPI, the one named --name.
 * Without --haptic it calls SDL_GameControllerRumble (SDL_JoystickRumble for a joystick without a controller
 * mapping) once per frame with a 100 ms duration: SDL sends only level changes to the device and renews the
 * duration otherwise, and a game that stalls for longer than that stops rumbling. With --haptic it drives one
 * SDL_HAPTIC_LEFTRIGHT effect of unlimited length, created and uploaded once before the frame loop with the
 * pattern's first levels: SDL_HapticUpdateEffect only at a frame whose levels differ from the effect's (the
 * kernel applies an update to a running effect at once), SDL_HapticRunEffect only when the levels leave zero,
 * SDL_HapticStopEffect only when they return to it. That is the fewest calls the haptic API allows: one upload
 * per level change, no renewal (a killed game is still stopped: the kernel erases its effects on close).
 * Standard error gets one line naming the device and the SDL backend that drives it (its path).
 */
#define _GNU_SOURCE
#include <SDL.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long one rumble API call lasts unless renewed: several frames, so a late frame does not cut the rumble. */
#define RUMBLE_DURATION_MS 100

typedef struct {
    double time;
    Uint16 strong;
    Uint16 weak;
} Frame;

typedef struct {
    SDL_GameController *controller;
    SDL_Joystick *joystick;
    SDL_Haptic *haptic;
    /* The haptic API's one effect (-1 until it is created), what it holds (the levels as 0...0xFFFF, and its
     * length in ms: SDL_HAPTIC_INFINITY for playback) and whether it is running. */
    int effect;
    Uint16 strong;
    Uint16 weak;
    Uint32 length;
    int running;
} Device;

static int64_t now_nanoseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int64_t now_microseconds(void) { return now_nanoseconds() / 1000; }

static void sleep_until_nanoseconds(int64_t nanoseconds) {
    struct timespec deadline = {nanoseconds / 1000000000, nanoseconds % 1000000000};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL) == EINTR) {
    }
}

static void fail(const char *what) {
    fprintf(stderr, "sdl-peer: %s: %s\n", what, SDL_GetError());
    exit(1);
}

/* The index of the first joystick with USB ids `vendor`:`product` (any joystick when both are 0), or -1. */
static int find_joystick(Uint16 vendor, Uint16 product) {
    for (int index = 0; index < SDL_NumJoysticks(); index++) {
        if ((!vendor && !product) ||
            (SDL_JoystickGetDeviceVendor(index) == vendor && SDL_JoystickGetDeviceProduct(index) == product))
            return index;
    }
    return -1;
}

/* Opens the joystick with the given USB ids (the first one SDL lists when they are 0) as a game controller when
 * SDL has a mapping for it, and, when `haptic` is asked for, its haptic device: the joystick's own, or for one
 * that SDL drives through HIDAPI (which has none), the haptic device of the same name. */
static Device open_device(int haptic, Uint16 vendor, Uint16 product, const char *haptic_name) {
    Device device = {0};
    device.effect = -1;
    /* Devices reach SDL through its event queue: give the enumeration a moment. */
    int index = -1;
    for (int attempt = 0; attempt < 100 && (index = find_joystick(vendor, product)) < 0; attempt++) {
        SDL_PumpEvents();
        SDL_Delay(20);
    }
    if (index < 0) fail("no such joystick");
    if (SDL_IsGameController(index)) {
        device.controller = SDL_GameControllerOpen(index);
        if (!device.controller) fail("SDL_GameControllerOpen");
        device.joystick = SDL_GameControllerGetJoystick(device.controller);
    } else {
        device.joystick = SDL_JoystickOpen(index);
        if (!device.joystick) fail("SDL_JoystickOpen");
    }
    fprintf(stderr, "sdl-peer: %s '%s' at %s\n", device.controller ? "controller" : "joystick",
            SDL_JoystickName(device.joystick), SDL_JoystickPath(device.joystick));
    if (haptic) {
        device.haptic = SDL_HapticOpenFromJoystick(device.joystick);
        for (int other = 0; !device.haptic && other < SDL_NumHaptics(); other++) {
            const char *name = SDL_HapticName(other);
            if (!haptic_name || (name && strcmp(name, haptic_name) == 0)) device.haptic = SDL_HapticOpen(other);
        }
        if (!device.haptic) fail("SDL_HapticOpen");
        if (!(SDL_HapticQuery(device.haptic) & SDL_HAPTIC_LEFTRIGHT)) fail("no SDL_HAPTIC_LEFTRIGHT");
        fprintf(stderr, "sdl-peer: haptic '%s'\n", SDL_HapticName(SDL_HapticIndex(device.haptic)));
    }
    return device;
}

/* SDL's rumble API: the game controller's call, or the joystick's for one without a controller mapping. */
static int rumble(Device *device, Uint16 strong, Uint16 weak, Uint32 milliseconds) {
    return device->controller ? SDL_GameControllerRumble(device->controller, strong, weak, milliseconds)
                              : SDL_JoystickRumble(device->joystick, strong, weak, milliseconds);
}

/* Makes the haptic API's effect hold these levels (0...0xFFFF) and length: created the first time, updated only
 * when it holds something else. */
static int upload(Device *device, Uint16 strong, Uint16 weak, Uint32 length) {
    if (device->effect >= 0 && device->strong == strong && device->weak == weak && device->length == length)
        return 0;
    SDL_HapticEffect effect;
    SDL_zero(effect);
    effect.type = SDL_HAPTIC_LEFTRIGHT;
    effect.leftright.length = length;
    /* SDL's haptic magnitudes run to 0x7FFF, as SDL_HapticRumblePlay fills them: its Linux backend clamps each to
     * 0x7FFF and doubles it into the kernel's 0...0xFFFF. */
    effect.leftright.large_magnitude = strong / 2;
    effect.leftright.small_magnitude = weak / 2;
    if (device->effect < 0) {
        device->effect = SDL_HapticNewEffect(device->haptic, &effect);
        if (device->effect < 0) return -1;
    } else if (SDL_HapticUpdateEffect(device->haptic, device->effect, &effect) < 0) {
        return -1;
    }
    device->strong = strong;
    device->weak = weak;
    device->length = length;
    return 0;
}

/* One frame's levels through the haptic API's effect of unlimited length: stopped at zero; otherwise updated if
 * they changed, and run if it is not running (an update reaches a running effect without a new run). */
static int haptic_levels(Device *device, Uint16 strong, Uint16 weak) {
    if (strong == 0 && weak == 0) {
        if (!device->running) return 0;
        device->running = 0;
        return SDL_HapticStopEffect(device->haptic, device->effect);
    }
    if (upload(device, strong, weak, SDL_HAPTIC_INFINITY) < 0) return -1;
    if (device->running) return 0;
    device->running = 1;
    return SDL_HapticRunEffect(device->haptic, device->effect, 1);
}

/* The first instant from `earliest` (CLOCK_MONOTONIC nanoseconds) that lies a quarter of `tick` past a multiple of
 * it; `earliest` itself when `tick` is 0. The bench's latency rounds time their own calls by the same rule. */
static int64_t call_time(int64_t earliest, long long tick) {
    if (tick <= 0) return earliest;
    int64_t phase = tick / 4;
    int64_t start = earliest - phase;
    int64_t ticks = start / tick + (start % tick != 0);
    return ticks * tick + phase;
}

static void latency(Device *device) {
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
        unsigned milliseconds, pause = 0, after = 0;
        long long tick = 0;
        if (sscanf(line, "upload %u", &milliseconds) == 1 && device->haptic) {
            if (upload(device, 0xFFFF, 0xFFFF, milliseconds) < 0) fail("SDL_HapticNewEffect");
            printf("ok\n");
        } else if (sscanf(line, "go %u %u %u %lld", &milliseconds, &pause, &after, &tick) >= 1) {
            /* The haptic API runs what "upload" put on the device: the measured call is the run alone. */
            if (device->haptic && !(device->effect >= 0 && device->length == milliseconds)) {
                fprintf(stderr, "sdl-peer: go %u before upload %u\n", milliseconds, milliseconds);
                exit(2);
            }
            if (pause > 0 || tick > 0) sleep_until_nanoseconds(call_time(now_nanoseconds() + pause * 1000LL, tick));
            int64_t start = now_microseconds();
            int result = device->haptic ? SDL_HapticRunEffect(device->haptic, device->effect, 1)
                                        : rumble(device, 0xFFFF, 0xFFFF, milliseconds);
            if (result < 0) fail(device->haptic ? "SDL_HapticRunEffect" : "rumble");
            if (after > 0) {
                struct timespec quiet = {after / 1000000, (long)(after % 1000000) * 1000};
                nanosleep(&quiet, NULL);
            }
            printf("t %lld\n", (long long)start);
        } else if (strncmp(line, "stop", 4) == 0) {
            int result = !device->haptic   ? rumble(device, 0, 0, 0)
                         : device->effect < 0 ? 0
                                              : SDL_HapticStopEffect(device->haptic, device->effect);
            if (result < 0) fail("rumble off");
            printf("ok\n");
        } else {
            fprintf(stderr, "sdl-peer: unknown command: %s", line);
            exit(2);
        }
        fflush(stdout);
    }
}

/* Reads `time,strong,weak` rows (a header line first) into a new array; levels 0...1 become 0...0xFFFF. */
static Frame *read_frames(const char *path, size_t *count) {
    FILE *file = fopen(path, "r");
    if (!file) {
        fprintf(stderr, "sdl-peer: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    size_t capacity = 256, used = 0;
    Frame *frames = malloc(capacity * sizeof *frames);
    char line[128];
    double time, strong, weak;
    while (frames && fgets(line, sizeof line, file)) {
        if (sscanf(line, "%lf,%lf,%lf", &time, &strong, &weak) != 3) continue;
        if (used == capacity) frames = realloc(frames, (capacity *= 2) * sizeof *frames);
        if (!frames) break;
        frames[used++] = (Frame){time, (Uint16)(SDL_clamp(strong, 0, 1) * 0xFFFF + 0.5),
                                 (Uint16)(SDL_clamp(weak, 0, 1) * 0xFFFF + 0.5)};
    }
    fclose(file);
    if (!frames) fail("out of memory");
    *count = used;
    return frames;
}

static void sleep_until(int64_t microseconds) { sleep_until_nanoseconds(microseconds * 1000); }

/* The game's frame loop: events pumped, then the levels of the row due at this frame sent. */
static void play(Device *device, const char *path, double fps) {
    size_t count;
    Frame *frames = read_frames(path, &count);
    double length = count ? frames[count - 1].time : 0;
    /* The haptic API's effect is made at load time, holding the pattern's first levels, as a game prepares its
     * effects before it needs them. */
    for (size_t first = 0; device->haptic && first < count; first++) {
        if (!frames[first].strong && !frames[first].weak) continue;
        if (upload(device, frames[first].strong, frames[first].weak, SDL_HAPTIC_INFINITY) < 0)
            fail("SDL_HapticNewEffect");
        break;
    }
    int64_t frame_microseconds = (int64_t)(1e6 / fps);
    int64_t start = now_microseconds();
    size_t row = 0;
    for (int64_t frame = 0;; frame++) {
        int64_t due = start + frame * frame_microseconds;
        sleep_until(due);
        SDL_Event event;
        while (SDL_PollEvent(&event)) {
        }
        double elapsed = (double)(now_microseconds() - start) / 1e6;
        if (elapsed > length) {
            if (frame == 0) printf("start %lld\n", (long long)start);
            break;
        }
        while (row + 1 < count && frames[row + 1].time <= elapsed) row++;
        Frame current = frames[row];
        /* The rumble API is called every frame (SDL sends only changes); the haptic one only on a change. */
        int result = device->haptic ? haptic_levels(device, current.strong, current.weak)
                                    : rumble(device, current.strong, current.weak, RUMBLE_DURATION_MS);
        if (result < 0) fail("rumble");
        if (frame == 0) {
            printf("start %lld\n", (long long)start);
            fflush(stdout);
        }
    }
    if ((device->haptic ? haptic_levels(device, 0, 0) : rumble(device, 0, 0, 0)) < 0) fail("rumble off");
    printf("end %lld\n", (long long)now_microseconds());
    fflush(stdout);
    free(frames);
    /* The caller reads this process's CPU time now: stay until it closes standard input. */
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
    }
}

static void idle(void) {
    printf("ready\n");
    fflush(stdout);
    char line[64];
    while (fgets(line, sizeof line, stdin)) {
    }
}

static void usage(void) {
    fprintf(stderr, "usage: sdl-peer [--haptic] [--ids VENDOR:PRODUCT] [--name HAPTIC-NAME] latency | play CSV [--fps N] | idle\n");
    exit(2);
}

int main(int argc, char **argv) {
    int haptic = 0, index = 1;
    unsigned vendor = 0, product = 0;
    const char *haptic_name = NULL;
    for (; index < argc && strncmp(argv[index], "--", 2) == 0; index++) {
        if (strcmp(argv[index], "--haptic") == 0) {
            haptic = 1;
        } else if (strcmp(argv[index], "--ids") == 0 && index + 1 < argc) {
            if (sscanf(argv[++index], "%x:%x", &vendor, &product) != 2) usage();
        } else if (strcmp(argv[index], "--name") == 0 && index + 1 < argc) {
            haptic_name = argv[++index];
        } else {
            usage();
        }
    }
    if (index >= argc) usage();
    const char *mode = argv[index++];
    const char *csv = NULL;
    double fps = 60;
    if (strcmp(mode, "play") == 0) {
        if (index >= argc) usage();
        csv = argv[index++];
        if (index + 1 < argc && strcmp(argv[index], "--fps") == 0) fps = atof(argv[index + 1]);
        if (!(fps > 0 && fps <= 1000)) usage();
    } else if (strcmp(mode, "latency") != 0 && strcmp(mode, "idle") != 0) {
        usage();
    }
    /* SDL drives PlayStation controllers over Bluetooth through hidraw and rumbles them only when the game asks
     * for it with these hints, as SDL's documentation says a game that uses rumble should. */
    SDL_SetHint(SDL_HINT_JOYSTICK_HIDAPI_PS4_RUMBLE, "1");
    SDL_SetHint(SDL_HINT_JOYSTICK_HIDAPI_PS5_RUMBLE, "1");
    if (SDL_Init(SDL_INIT_GAMECONTROLLER | (haptic ? SDL_INIT_HAPTIC : 0)) < 0) fail("SDL_Init");
    Device device = open_device(haptic, (Uint16)vendor, (Uint16)product, haptic_name);
    if (csv) {
        play(&device, csv, fps);
    } else if (strcmp(mode, "latency") == 0) {
        latency(&device);
    } else {
        idle();
    }
    if (device.haptic) SDL_HapticClose(device.haptic);
    if (device.controller) SDL_GameControllerClose(device.controller);
    else SDL_JoystickClose(device.joystick);
    SDL_Quit();
    return 0;
}
