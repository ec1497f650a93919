#include <alsa/asoundlib.h>

// alsa-lib writes its own diagnostics to stderr unless it is given a handler. Our libraries never print: every
// failure alsa-lib reports there also comes back as an error code, which LinuxAudio turns into a Swift error and
// logs. This handler takes the text and drops it.
static void linuxaudio_alsa_quiet(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file;
    (void)line;
    (void)function;
    (void)err;
    (void)fmt;
}

// The handler alsa-lib calls now (its global, which Swift cannot read safely).
static inline snd_lib_error_handler_t linuxaudio_alsa_handler(void) { return snd_lib_error; }

// Installs the quiet handler unless the application installed its own: alsa-lib's handler is one for the whole
// process, and an application that logs alsa-lib's diagnostics keeps them. Returns whether it installed it.
// alsa-lib gives no way to read its default handler but to reset to it, so the handler is reset for a moment.
static inline int linuxaudio_alsa_silence_unless_handled(void) {
    snd_lib_error_handler_t current = snd_lib_error;
    snd_lib_error_set_handler(NULL);
    if (current != snd_lib_error) {
        snd_lib_error_set_handler(current);
        return 0;
    }
    snd_lib_error_set_handler(linuxaudio_alsa_quiet);
    return 1;
}
