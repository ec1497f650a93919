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

static inline int linuxaudio_alsa_silence(void) { return snd_lib_error_set_handler(linuxaudio_alsa_quiet); }
