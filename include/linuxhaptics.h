/*
 * linuxhaptics.h: play Apple Haptic and Audio Pattern (AHAP) files on Linux gamepads' rumble motors, from C.
 *
 * The C interface of the LinuxHaptics Swift package (liblinuxhaptics.so, soname liblinuxhaptics.so.0). Build:
 *     cc game.c $(pkg-config --cflags --libs linuxhaptics)
 * docs/c-api.md in the repository describes the library; docs/examples/play.c is a complete program.
 *
 * Conventions, for every function below:
 * - Objects are opaque handles. What a *_create or *_load call gives is freed with the matching *_free or
 *   *_destroy call; freeing NULL does nothing.
 * - Calls that can fail return an lh_status (LH_OK on success). Those with an `lh_error **error` parameter
 *   also store, when it is not NULL and the call fails, an error object saying what failed and why; the
 *   caller frees it with lh_error_free. On success *error is left as it is. Out parameters are written only
 *   on success.
 * - Every call may be made from any thread, at the same time as any other call on the same objects, except
 *   that an object must not be used during or after the call that frees it.
 * - Strings passed in are UTF-8 and NUL-terminated; strings given back are UTF-8.
 */
#ifndef LINUXHAPTICS_H
#define LINUXHAPTICS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version of this header. lh_version() gives the library's; the soname changes with the major version. */
#define LH_VERSION_MAJOR 0
#define LH_VERSION_MINOR 1
#define LH_VERSION_PATCH 0
#define LH_VERSION_STRING "0.1.0"

/* What a call returns. */
typedef enum lh_status {
    LH_OK = 0,
    /* A required pointer was NULL, or a number was out of range (lh_error_message says which). */
    LH_ERROR_INVALID_ARGUMENT = 1,
    /* The AHAP text does not load: lh_error_message has one line per error, as `haptics validate` prints
       them, and lh_error_json_path the JSON path of the first (e.g. "Pattern[0].Event.Time"). */
    LH_ERROR_INVALID_PATTERN = 2,
    /* The AHAP file cannot be read: missing, not readable, a directory, a device or a pipe. (A file over the
       size limit is LH_ERROR_INVALID_PATTERN, code limit-exceeded, as `haptics validate` reports it.) */
    LH_ERROR_FILE = 3,
    /* No device matches: none plugged in, or the one named is absent. */
    LH_ERROR_NO_DEVICE = 4,
    /* The device exists but this process may not open it for writing (see docs/device-access.md). */
    LH_ERROR_PERMISSION = 5,
    /* The device failed or refused what the engine sent. */
    LH_ERROR_DEVICE = 6,
    /* The engine is stopped (lh_engine_stop): start it again with lh_engine_start. */
    LH_ERROR_NOT_RUNNING = 7,
    /* A system resource failed (a thread could not be started). Running out of memory ends the process, as it
       does for the Swift runtime underneath. */
    LH_ERROR_SYSTEM = 8
} lh_status;

/* Why an engine stopped without lh_engine_stop (the stopped handler's argument). */
typedef enum lh_stopped_reason {
    /* The gamepad went away (unplugged). The engine waits for it: when it is back, the reset handler runs and
       plays work again. A play (or lh_engine_start) meanwhile starts the engine again itself once the gamepad
       can be opened (LH_ERROR_NO_DEVICE before): the engine then runs with no reset handler called. */
    LH_STOPPED_DISCONNECTED = 1,
    /* The device refused what the engine needs (no free effect slot, an upload rejected). The next play
       starts the engine again. */
    LH_STOPPED_DEVICE_ERROR = 2,
    /* A system resource failed (the playback thread could not be started). */
    LH_STOPPED_SYSTEM_ERROR = 3,
    /* Reasons the Swift engine has that this interface does not cause (no idle shutdown is configured, the
       engine is destroyed only by lh_engine_destroy, which calls no handler); listed so that every reason
       has a value. */
    LH_STOPPED_IDLE_TIMEOUT = 4,
    LH_STOPPED_ENGINE_DESTROYED = 5,
    LH_STOPPED_NOTIFY_WHEN_FINISHED = 6,
    /* The sound device a pattern's audio events play on went away. The engine waits for it: when it is back,
       the reset handler runs and plays work again. A play (or lh_engine_start) meanwhile, the gamepad being
       there, starts the engine again at once, with no reset handler called. */
    LH_STOPPED_AUDIO_INTERRUPTED = 7
} lh_stopped_reason;

/* Which actuators an engine plays on (lh_engine_create_with_actuators). */
typedef enum lh_actuators {
    /* The rumble motors, through the kernel's force feedback, on every pad (lh_engine_create). */
    LH_ACTUATORS_RUMBLE = 0,
    /* HD actuators (a pattern's sharpness as the vibration's frequency) where the pad has them and their node
       may be written: a DualSense's voice coils, a Switch controller's HD rumble; else the rumble motors. */
    LH_ACTUATORS_AUTO = 1,
    /* HD actuators; a pad without them, or whose node may not be written, plays on its rumble motors and the
       library logs why. */
    LH_ACTUATORS_HD = 2
} lh_actuators;

/* Options of an audio resource (lh_engine_register_audio_resource), or-ed together. 0 is Core Haptics'
   defaults: the sound follows the event's volume envelope and does not loop. An AudioCustom event's own
   EventWaveformUseVolumeEnvelope and EventWaveformLoopEnabled win over them. */
typedef enum lh_audio_resource_options {
    LH_AUDIO_RESOURCE_DEFAULT = 0,
    /* The sound starts and ends at once rather than along the event's volume envelope (attack, decay,
       release): Core Haptics' CHHapticAudioResourceKeyUseVolumeEnvelope false. */
    LH_AUDIO_RESOURCE_NO_VOLUME_ENVELOPE = 1,
    /* The sound starts again from its beginning until the event's EventDuration is over:
       CHHapticAudioResourceKeyLoopEnabled true. */
    LH_AUDIO_RESOURCE_LOOP_ENABLED = 2
} lh_audio_resource_options;

typedef struct lh_error lh_error;
typedef struct lh_pattern lh_pattern;
typedef struct lh_engine lh_engine;

/* ---- Library ------------------------------------------------------------------------------------------- */

/* The library's version, "MAJOR.MINOR.PATCH". Static: never freed. */
const char *lh_version(void);

/* ---- Errors -------------------------------------------------------------------------------------------- */

/* The status of the failed call that made `error`; LH_ERROR_INVALID_ARGUMENT for NULL. The functions below
   give "" for NULL. */
lh_status lh_error_code(const lh_error *error);

/* What failed and why, in one or more lines. Owned by `error`: valid until lh_error_free(error). */
const char *lh_error_message(const lh_error *error);

/* For LH_ERROR_INVALID_PATTERN, the JSON path of the first error ("" when the error concerns the whole
   document, e.g. a syntax error at its top level); "" for other errors. Owned by `error`. */
const char *lh_error_json_path(const lh_error *error);

void lh_error_free(lh_error *error);

/* ---- Patterns ------------------------------------------------------------------------------------------ */

/* Reads an AHAP file as Core Haptics' CHHapticPattern(contentsOf:) does: a file with errors does not load
   (LH_ERROR_INVALID_PATTERN, or LH_ERROR_FILE when it cannot be read); warnings are allowed. The error's
   message is what `haptics validate PATH` prints for each error: "PATH: JSONPATH: error: MESSAGE [CODE]" (no
   JSONPATH for an error about the whole document; a syntax error's MESSAGE starts with its line and column;
   CODE may name the Core Haptics error too, "[wrong-type, Core Haptics -4831]"). A path that is not UTF-8
   text is LH_ERROR_INVALID_ARGUMENT: load such a file's bytes with lh_pattern_load_data. */
lh_status lh_pattern_load_file(const char *path, lh_pattern **pattern, lh_error **error);

/* The same for AHAP text in memory (`length` bytes, no NUL needed); the message lines have no file name. A
   `length` over the document limit (16 MiB) is LH_ERROR_INVALID_PATTERN, [limit-exceeded], before any byte is
   read. */
lh_status lh_pattern_load_data(const void *bytes, size_t length, lh_pattern **pattern, lh_error **error);

/* The pattern's length in seconds: where its last event, parameter or curve ends (a transient is an instant
   unless its EventDuration pads the pattern, as Core Haptics' duration counts it; an AudioCustom event lasts its
   EventDuration, and without one is an instant here, since its sound file is not read); 0 for NULL. */
double lh_pattern_duration(const lh_pattern *pattern);

/* A pattern may be freed as soon as the last play of it has been started: the engine keeps its own copy. */
void lh_pattern_free(lh_pattern *pattern);

/* ---- Engines ------------------------------------------------------------------------------------------- */

/* Called when an engine stops without lh_engine_stop. */
typedef void (*lh_stopped_handler)(lh_stopped_reason reason, void *user);
/* Called when an engine rebuilt its output: the gamepad came back after LH_STOPPED_DISCONNECTED. */
typedef void (*lh_reset_handler)(void *user);

/* Creates an engine on a gamepad and starts it (opens the device). `device` is NULL for the first
   rumble-capable device this process may write (gamepads first), or names one: an event node
   ("/dev/input/event5", or a /dev/input/by-id/ link), an event name ("event5"), a stable id as
   `haptics devices` prints it ("usb-045e:028e-1a2b3c4d", the same after a replug), or "all" for every
   rumble-capable gamepad driven together. There is no virtual output: "virtual" (the haptics tool's) is
   LH_ERROR_INVALID_ARGUMENT, and so is a number ("0"), which the tool reads as an index of `haptics devices`:
   pass the node or stable id that list shows. A force-feedback wheel or joystick that runs effects itself (a USB PID device)
   is listed by lh_devices_json but never opened here: its force moves the controls in the player's hands, and
   only the Swift engine has the opt-in for it (named, it fails with LH_ERROR_DEVICE). Fails with
   LH_ERROR_NO_DEVICE, LH_ERROR_PERMISSION (also for "all" when every gamepad is one this process may not
   write), LH_ERROR_DEVICE, LH_ERROR_INVALID_ARGUMENT or LH_ERROR_SYSTEM, and then gives no engine. A failure
   after the gamepads were looked for may leave the hot-plug monitor it started ending on its own thread for a
   few milliseconds more (it calls nothing): a game waiting for a pad should try again every second or so, not
   every frame. */
lh_status lh_engine_create(const char *device, lh_engine **engine, lh_error **error);

/* lh_engine_create, playing on `actuators` (LH_ERROR_INVALID_ARGUMENT for a value not listed). */
lh_status lh_engine_create_with_actuators(
    const char *device, lh_actuators actuators, lh_engine **engine, lh_error **error);

/* lh_engine_create_with_actuators at `locality`, as Core Haptics' createEngine(withLocality:): "all" (or NULL,
   or "default"), "left", "right", or on an Xbox Wireless Controller over Bluetooth its trigger motors:
   "left-trigger", "right-trigger", "triggers" (Core Haptics' "leftTrigger"... are accepted too). A locality the
   pad does not have fails with LH_ERROR_DEVICE and a message that says so; an unknown name with
   LH_ERROR_INVALID_ARGUMENT. */
lh_status lh_engine_create_with_locality(
    const char *device, lh_actuators actuators, const char *locality, lh_engine **engine, lh_error **error);

/* 1 when the engine plays on the pad's voice coils now, 0 on its rumble motors (and for NULL). */
int lh_engine_uses_voice_coils(const lh_engine *engine);

/* What the engine plays on now: "rumble" (the kernel's force feedback), "voice-coils", "hd-rumble" or
   "trigger-motors"; "rumble" for NULL, and while the engine has no device open (stopped, or its pad unplugged: it
   says again what it plays on once the pad is back). Static: never freed. */
const char *lh_engine_actuators(const lh_engine *engine);

/* Starts an engine stopped by lh_engine_stop. Starting a running engine does nothing. With no gamepad to open
   it fails with LH_ERROR_NO_DEVICE and then waits for one, as after LH_STOPPED_DISCONNECTED: plays fail with
   LH_ERROR_NO_DEVICE until a gamepad it would take is plugged in, which it opens by itself, and the reset
   handler runs. */
lh_status lh_engine_start(lh_engine *engine, lh_error **error);

/* Plays `pattern` now, fire-and-forget, mixed with anything already playing. After LH_STOPPED_DEVICE_ERROR
   it starts the engine again; while the gamepad is away it fails with LH_ERROR_NO_DEVICE. A pattern whose
   AudioCustom event names an audio resource by number that this engine does not hold (never registered, or
   unregistered) fails with LH_ERROR_INVALID_ARGUMENT, naming the event. */
lh_status lh_engine_play(lh_engine *engine, const lh_pattern *pattern, lh_error **error);

/* Plays one tap (an AHAP HapticTransient event) now, without a pattern. `intensity` and `sharpness` are within
   0...1 (LH_ERROR_INVALID_ARGUMENT otherwise). A tap replaces the previous tap still playing, so rapid calls
   (a wheel's detents) do not pile up. */
lh_status lh_engine_play_transient(lh_engine *engine, double intensity, double sharpness, lh_error **error);

/* Registers the sound file at `path` (WAV, FLAC, Ogg, Opus, MP3, AIFF, ...) with the engine, as Core Haptics'
   registerAudioResource: the file is read and decoded now, and *resource gets a number this engine never gave
   before (from 1), which a pattern's AudioCustom event names to play it: "EventWaveformPath": 1, a number where
   a file name would be, as Core Haptics writes such a pattern. `options` is LH_AUDIO_RESOURCE_DEFAULT or
   LH_AUDIO_RESOURCE_* values or-ed together. A file that cannot be read or decoded, and a bit no option names,
   fail with LH_ERROR_INVALID_ARGUMENT, saying why, and register nothing. A registration lasts until it is
   unregistered or the engine destroyed, through stops and resets, and keeps the decoded sound in memory. A
   relative path is taken from the current directory. */
lh_status lh_engine_register_audio_resource(
    lh_engine *engine, const char *path, unsigned int options, uint64_t *resource, lh_error **error);

/* Forgets the audio resource `resource`: plays started before go on with its sound; a play started after of a
   pattern that names it fails (lh_engine_play). A number this engine does not hold (never given, or already
   unregistered) fails with LH_ERROR_INVALID_ARGUMENT. */
lh_status lh_engine_unregister_audio_resource(lh_engine *engine, uint64_t resource, lh_error **error);

/* Motors off, every play stopped, the device released; lh_engine_start may follow. No handler is called for it,
   and, as with lh_engine_destroy, none runs once it returns: one begun before it (the gamepad lost or back just
   then) is waited for, unless this call is made from within a handler, of this engine or another. */
lh_status lh_engine_stop(lh_engine *engine);

/* Installs the stopped handler (NULL removes it); `user` is passed to it. Handlers run on an engine thread: the
   playback thread, the hot-plug monitor's, the sound stream's (LH_STOPPED_AUDIO_INTERRUPTED and the reset
   after it), or, for LH_STOPPED_SYSTEM_ERROR, possibly the thread of the call that could not start the
   playback thread. Two may run at once on two threads. They may call lh_engine_* functions on the engine,
   lh_engine_destroy included, and should return quickly. When this call returns, the handler it replaced is
   not running on another thread and will not be called again, with one exception: a handler whose thread is
   itself in a call of any engine that waits for others (a handler's replacement, lh_engine_stop,
   lh_engine_destroy) is not waited for, since two handlers replacing each other's would otherwise wait for
   each other for ever. That handler goes on once its own call returns. */
lh_status lh_engine_set_stopped_handler(lh_engine *engine, lh_stopped_handler handler, void *user);

/* Installs the reset handler, on the same terms as the stopped handler. */
lh_status lh_engine_set_reset_handler(lh_engine *engine, lh_reset_handler handler, void *user);

/* Stops the engine and frees it. No handler is called during the call or after it returns, and none is still
   running on another thread then (but the exception of lh_engine_set_stopped_handler): the handlers' `user`
   data may be freed next. The engine's hot-plug monitor may take a few milliseconds more to end (it calls no
   handler). dlclose leaves the library loaded (it is built NODELETE), so a host may call it at any time. */
void lh_engine_destroy(lh_engine *engine);

/* ---- Devices ------------------------------------------------------------------------------------------- */

/* The rumble-capable input devices as a JSON array, the document `haptics devices --json` prints (schema in
   docs/devices.md), force-feedback wheels and joysticks included ("runsWaveformsItself": true; lh_engine_create
   opens none of them); "[]" when there is none. The caller frees *json with lh_string_free. */
lh_status lh_devices_json(char **json, lh_error **error);

/* Frees a string the library gave (lh_devices_json). NULL does nothing. */
void lh_string_free(char *string);

/* The stopped reason as the Swift engine and `haptics play --json` name it ("gameControllerDisconnect", ...);
   "unknown" for a value not listed. Static: never freed. */
const char *lh_stopped_reason_name(lh_stopped_reason reason);

#ifdef __cplusplus
}
#endif

#endif /* LINUXHAPTICS_H */
