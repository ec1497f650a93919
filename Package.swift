// swift-tools-version: 6.0
// Linux force-feedback haptics: AHAP patterns rendered onto evdev rumble motors.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

// How the release build links liblinuxhaptics.so (SwiftPM sets none of this for a dynamic library): the Swift
// runtime and Foundation linked in, so that a C program needs nothing but the .so; the soname of the header's
// LH_VERSION_MAJOR (`make capi` checks they agree); and a version script that exports the `lh_` functions
// alone, so the copy of the Swift runtime inside cannot clash with another in the same process; and `-z
// nodelete`, so that dlclose leaves it loaded: its threads (a hot-plug watch, a playback timer) end shortly
// after the call that stops them returns, and the Swift runtime inside keeps pointers into the image. Release
// only: the debug build links the unit tests, which must not get a soname or lose their symbols.
let cLibraryLinkerFlags = [
    "-static-stdlib", "-Xlinker", "-soname=liblinuxhaptics.so.0",
    "-Xlinker", "--version-script=\(Context.packageDirectory)/Sources/LinuxHapticsC/linuxhaptics.map",
    "-Xlinker", "-z", "-Xlinker", "nodelete",
]

let package = Package(
    name: "LinuxHaptics",
    platforms: [.macOS(.v15)],
    products: [
        // The AHAP model, reader and writer (module AHAP, pure), and its files read (module AHAPFiles, which
        // re-exports AHAP): one product, so that a package that depends on it keeps its manifest; a source file
        // that reads AHAP files imports AHAPFiles.
        .library(name: "AHAP", targets: ["AHAP", "AHAPFiles"]),
        .library(name: "HapticRendering", targets: ["HapticRendering"]),
        .library(name: "LinuxSystem", targets: ["LinuxSystem"]),
        .library(name: "LinuxInput", targets: ["LinuxInput"]),
        // The engine (module LinuxHaptics) and the app layer above it (module AppHaptics: HapticManager, the feedback
        // vocabulary, cue sheets, settings, AudioManager; it re-exports LinuxHaptics), so that a package that
        // depends on this product keeps its manifest when the app layer left the engine's module.
        .library(name: "LinuxHaptics", targets: ["LinuxHaptics", "AppHaptics"]),
        .library(name: "AudioRendering", targets: ["AudioRendering"]),
        .library(name: "LinuxAudio", targets: ["LinuxAudio"]),
        // Doubles for testing code that uses LinuxHaptics: a manual clock, a recording output and a recording log.
        .library(name: "LinuxHapticsTesting", targets: ["LinuxHapticsTesting"]),
        .executable(name: "haptics", targets: ["haptics"]),
        // The C library, liblinuxhaptics.so (include/linuxhaptics.h, docs/c-api.md). Its release build carries
        // unsafe linker flags, so a package that depends on this one cannot use this product (C programs link
        // the .so instead); every other product stays usable as a dependency.
        .library(name: "linuxhaptics", type: .dynamic, targets: ["LinuxHapticsC"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `make docs`: the `generate-documentation` command (DocC); a plugin, so it builds nothing until run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C boundary: system libraries found through pkg-config; the C library's calls Swift cannot make itself
        // (variadic ioctl, pipe2, a signal handler); the evdev, uinput and uhid request numbers and unions.
        .systemLibrary(
            name: "CLibudev", pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]),
        .systemLibrary(
            name: "CLibevdev", pkgConfig: "libevdev",
            providers: [.apt(["libevdev-dev"])]),
        .target(name: "CLinuxSystem"),
        .target(name: "CLinuxInput"),
        // Audio: ALSA output, libsndfile decoding, libsamplerate resampling (docs/audio.md).
        .systemLibrary(
            name: "CALSA", pkgConfig: "alsa",
            providers: [.apt(["libasound2-dev"])]),
        .systemLibrary(
            name: "CSndfile", pkgConfig: "sndfile",
            providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(
            name: "CSamplerate", pkgConfig: "samplerate",
            providers: [.apt(["libsamplerate0-dev"])]),
        // The sound server's sinks, asked through libpulse loaded at run time (its headers from libpulse-dev).
        .target(name: "CSoundServer"),

        // Pure layers: no Glibc, no I/O (AHAPTests' PureLayersTests holds all three to it).
        .target(name: "AHAP", swiftSettings: strict),
        .target(name: "HapticRendering", dependencies: ["AHAP"], swiftSettings: strict),
        // A pattern's audio events as voices on its timeline, rendered into sample frames.
        .target(name: "AudioRendering", dependencies: ["AHAP", "HapticRendering"], swiftSettings: strict),

        // AHAP documents read from files through the system layer: `HapticPattern(contentsOf:)`, the validator's
        // files and the sound files they name. Re-exports AHAP.
        .target(name: "AHAPFiles", dependencies: ["AHAP", "LinuxSystem"], swiftSettings: strict),

        // The system layer: every system call (EINTR retry, typed errno, fault hooks), the lock, threads, the
        // monotonic clock and its deadline waiter. The one place the C library is called.
        .target(
            name: "LinuxSystem", dependencies: ["CLinuxSystem"],
            swiftSettings: strict),

        // The kernel's input devices: discovery, hot-plug, evdev force feedback.
        .target(
            name: "LinuxInput",
            dependencies: [
                "CLibudev", "CLibevdev", "CLinuxInput", "LinuxSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The sound hardware: files decoded and resampled, ALSA PCM output, a null output on the same clock.
        .target(
            name: "LinuxAudio",
            dependencies: [
                "AudioRendering", "LinuxSystem", "CALSA", "CSndfile", "CSamplerate", "CSoundServer",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Test hardware, not product API: the uinput virtual pad with its motor model and record, and the
        // emulated game controllers that the kernel's own drivers bind (uhid, USB gadget).
        .target(
            name: "HapticTestDevices",
            dependencies: [
                "HapticRendering", "LinuxAudio", "LinuxInput", "LinuxSystem", "CLinuxInput", "CLinuxSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The engine, Core Haptics' primitives: engine, players, clock, recovery, outputs; a pattern's sound on the
        // engine's clock.
        .target(
            name: "LinuxHaptics",
            dependencies: [
                "AHAP", "AHAPFiles", "AudioRendering", "HapticRendering", "LinuxAudio", "LinuxInput", "LinuxSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // What an app sees above the engine: HapticManager, the feedback vocabulary, cue sheets, settings,
        // AudioManager and the feedback sounds. Re-exports LinuxHaptics, so one import gives an app both.
        .target(
            name: "AppHaptics",
            dependencies: [
                "AHAP", "AHAPFiles", "AudioRendering", "HapticRendering", "LinuxAudio", "LinuxHaptics", "LinuxInput",
                "LinuxSystem", .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Test doubles: a clock that moves when told to, an output that records and fails on demand, a log that keeps.
        .target(
            name: "LinuxHapticsTesting",
            dependencies: [
                "HapticRendering", "LinuxAudio", "LinuxHaptics", "LinuxInput", "LinuxSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The C interface: include/linuxhaptics.h as a Clang module, so that the Swift side is written against
        // the header's own types, and the `@_cdecl` functions that implement it.
        .systemLibrary(name: "CLinuxHaptics"),
        .target(
            name: "LinuxHapticsC",
            dependencies: [
                "AHAP", "AHAPFiles", "CLinuxHaptics", "LinuxHaptics", "AppHaptics", "LinuxInput", "LinuxSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["linuxhaptics.map", "linuxhaptics.pc.in"],
            swiftSettings: strict, linkerSettings: [.unsafeFlags(cLibraryLinkerFlags, .when(configuration: .release))]),

        .executableTarget(
            name: "haptics",
            dependencies: [
                "AHAP", "AHAPFiles", "AudioRendering", "HapticRendering", "LinuxAudio", "LinuxInput", "LinuxHaptics",
                "AppHaptics", "LinuxSystem", "HapticTestDevices",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Runs inside the VM bench (or directly where /dev/uinput and root exist).
        .executableTarget(
            name: "haptics-kernel-tests",
            dependencies: [
                "AHAP", "AHAPFiles", "AudioRendering", "HapticRendering", "LinuxAudio", "LinuxInput", "LinuxHaptics",
                "AppHaptics", "LinuxHapticsTesting", "HapticTestDevices", "LinuxSystem",
                "CLinuxInput", "CLinuxSystem", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // `make bench`: measurements reported as ratios against a baseline of the same run.
        .executableTarget(
            name: "haptics-bench",
            dependencies: [
                "AHAP", "AHAPFiles", "AudioRendering", "HapticRendering", "LinuxAudio", "LinuxInput", "LinuxHaptics",
                "AppHaptics", "LinuxHapticsTesting", "HapticTestDevices", "LinuxSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // The pure model, parser and writer; its fixtures are read through AHAPFiles. Also the pure layers' check
        // (PureLayersTests), which reads their sources as text and needs none of their code.
        .testTarget(
            name: "AHAPTests", dependencies: ["AHAP", "AHAPFiles", "HapticTestDevices"], swiftSettings: strict),
        // The files read: what each path is said to be, the limits, the kernel's files, the sound files named.
        .testTarget(name: "AHAPFilesTests", dependencies: ["AHAPFiles", "LinuxSystem"], swiftSettings: strict),
        // The `haptics` command line end to end: the built binary run with arguments, its output and status read;
        // and, in-process, the decisions it takes from what this system has (udev, input devices), each branch.
        .testTarget(
            name: "HapticsCLITests",
            dependencies: ["AHAP", "AHAPFiles", "HapticRendering", "HapticTestDevices", "haptics", "LinuxInput"],
            swiftSettings: strict),
        .testTarget(
            name: "AudioRenderingTests", dependencies: ["AHAP", "AudioRendering"], swiftSettings: strict),
        .testTarget(
            name: "LinuxAudioTests",
            dependencies: ["AudioRendering", "CALSA", "CSndfile", "LinuxAudio", "LinuxHapticsTesting", "LinuxSystem"],
            swiftSettings: strict),
        .testTarget(
            name: "HapticRenderingTests", dependencies: ["AHAP", "AHAPFiles", "HapticRendering", "HapticTestDevices"],
            swiftSettings: strict),
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem"], swiftSettings: strict),
        .testTarget(
            name: "LinuxInputTests",
            dependencies: ["LinuxInput", "LinuxSystem", "CLibevdev", "CLinuxInput", "LinuxHapticsTesting"],
            swiftSettings: strict),
        .testTarget(
            name: "HapticTestDevicesTests",
            dependencies: ["HapticTestDevices", "HapticRendering", "LinuxInput", "LinuxSystem"], swiftSettings: strict),
        // The engine's tests and, for now, the app layer's (they share the engine tests' SteppedClock and
        // quietLogger; AppHapticsTests of their own once those have a home both can reach).
        .testTarget(
            name: "LinuxHapticsTests",
            dependencies: [
                "LinuxHaptics", "AppHaptics", "LinuxHapticsTesting", "AHAP", "AHAPFiles", "AudioRendering",
                "HapticRendering", "HapticTestDevices", "LinuxAudio", "LinuxInput", "LinuxSystem",
            ],
            swiftSettings: strict),
        // The arithmetic of the side-by-side bench with SDL (fidelity error, ratios, strace logs, overlays).
        .testTarget(name: "HapticsBenchTests", dependencies: ["haptics-bench"], swiftSettings: strict),
        .testTarget(
            name: "LinuxHapticsCTests",
            dependencies: [
                "AHAP", "AHAPFiles", "CLinuxHaptics", "HapticRendering", "LinuxHapticsC", "LinuxHaptics", "AppHaptics",
                "LinuxHapticsTesting", "LinuxInput", "LinuxSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)

// `scripts/make-sounds`: the tool that writes the feedback sounds (`FeedbackSound`) to Haptics/*.wav, declared only
// when HAPTICS_SOUNDS is set, so that the ordinary builds (and `make test`'s) spend nothing on it; the script
// builds it into .build-sounds.
if Context.environment["HAPTICS_SOUNDS"] != nil {
    package.targets.append(
        .executableTarget(
            name: "make-sounds", dependencies: ["AudioRendering", "LinuxAudio"], path: "Tools/make-sounds",
            swiftSettings: strict))
}

// `scripts/waveform-figures`: the tool that draws the waveform renderer's figures into docs/images, declared only when
// HAPTICS_FIGURES is set, like make-sounds; the script builds it into .build-figures.
if Context.environment["HAPTICS_FIGURES"] != nil {
    package.targets.append(
        .executableTarget(
            name: "waveform-figures", dependencies: ["AHAP", "AHAPFiles", "HapticRendering"],
            path: "Tools/waveform-figures", swiftSettings: strict))
}

// Fuzz targets (`make fuzz`, docs/reliability.md): one libFuzzer executable per input format, declared only when
// HAPTICS_FUZZ is set. libFuzzer supplies `main`, so they link only in a build with `--sanitize fuzzer`: a plain
// `swift build` (or `--build-tests`) must not see them, and spends no time on them. They live in this package
// rather than in a package of their own because they reach `package` declarations (the inotify reader, the
// settings file form), which no other package can see. scripts/fuzz builds them into .build-fuzz.
if Context.environment["HAPTICS_FUZZ"] != nil {
    package.targets.append(
        .target(
            name: "HapticsFuzzing",
            dependencies: [
                "AHAP", "HapticRendering", "LinuxInput", "LinuxHaptics", "AppHaptics", "LinuxSystem",
                "HapticTestDevices",
            ],
            path: "Fuzz/HapticsFuzzing", swiftSettings: strict))
    // AHAP text (JSON reader, decoder, validator, writers); the renderer and planner on what loads; cue sheets;
    // the settings file; inotify records from /dev/input; virtual pad and emulated controller record files.
    for format in ["ahap", "render", "cues", "settings", "inotify", "pad-records"] {
        package.targets.append(
            .executableTarget(
                name: "fuzz-\(format)", dependencies: ["HapticsFuzzing"], path: "Fuzz/Targets/fuzz-\(format)",
                swiftSettings: strict))
    }
}
