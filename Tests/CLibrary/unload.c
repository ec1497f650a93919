/*
 * unload.c: loads liblinuxhaptics with dlopen, as a plug-in host does, makes an engine on a device that is not
 * there (the call fails, and the engine it made waits for that device on a thread of its own), makes and
 * destroys one on the first gamepad after a tap, unloads the library with dlclose, and keeps running for a while. A library
 * that left its code while one of its threads still ran it would crash this program.
 *
 *     ./unload PATH/liblinuxhaptics.so.MAJOR
 *
 * Prints "unloaded" and exits with 0; the kernel tests run it beside a virtual pad.
 */
#include <linuxhaptics.h>

#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

typedef lh_status (*create_fn)(const char *, lh_engine **, lh_error **);
typedef lh_status (*transient_fn)(lh_engine *, double, double, lh_error **);
typedef void (*destroy_fn)(lh_engine *);
typedef const char *(*message_fn)(const lh_error *);
typedef void (*error_free_fn)(lh_error *);

static void *symbol(void *library, const char *name) {
    void *found = dlsym(library, name);
    if (found == NULL) {
        fprintf(stderr, "unload: %s: %s\n", name, dlerror());
    }
    return found;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: unload PATH/liblinuxhaptics.so.MAJOR\n");
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        fprintf(stderr, "unload: %s\n", dlerror());
        return 1;
    }
    create_fn create = (create_fn)symbol(library, "lh_engine_create");
    transient_fn transient = (transient_fn)symbol(library, "lh_engine_play_transient");
    destroy_fn destroy = (destroy_fn)symbol(library, "lh_engine_destroy");
    message_fn message = (message_fn)symbol(library, "lh_error_message");
    error_free_fn error_free = (error_free_fn)symbol(library, "lh_error_free");
    if (create == NULL || transient == NULL || destroy == NULL || message == NULL || error_free == NULL) {
        return 1;
    }

    lh_engine *engine = NULL;
    lh_error *error = NULL;
    lh_status status = create("/dev/input/event999", &engine, &error);
    if (status == LH_OK) {
        fprintf(stderr, "unload: an engine on /dev/input/event999 was made\n");
        return 1;
    }
    printf("no engine on a missing device: %s\n", message(error));
    error_free(error);

    error = NULL;
    if (create(NULL, &engine, &error) != LH_OK) {
        fprintf(stderr, "unload: no engine on the first gamepad: %s\n", message(error));
        return 1;
    }
    if (transient(engine, 1.0, 0.5, &error) != LH_OK) {
        fprintf(stderr, "unload: the transient did not play: %s\n", message(error));
        return 1;
    }
    destroy(engine);

    if (dlclose(library) != 0) {
        fprintf(stderr, "unload: dlclose: %s\n", dlerror());
        return 1;
    }
    /* Time for any thread the library left to run into code that is no longer there. */
    struct timespec pause = {.tv_sec = 0, .tv_nsec = 500 * 1000 * 1000};
    nanosleep(&pause, NULL);
    printf("unloaded\n");
    return 0;
}
