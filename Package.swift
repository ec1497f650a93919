// swift-tools-version: 6.0
// Linux force-feedback haptics: AHAP patterns rendered onto evdev rumble motors.
import PackageDescription

let strict: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "LinuxHaptics",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "AHAP", targets: ["AHAP"]),
        .library(name: "HapticRendering", targets: ["HapticRendering"]),
        .library(name: "LinuxInput", targets: ["LinuxInput"]),
        .library(name: "LinuxHaptics", targets: ["LinuxHaptics"]),
        // Doubles for testing code that uses LinuxHaptics: a manual clock, a recording output and a recording log.
        .library(name: "LinuxHapticsTesting", targets: ["LinuxHapticsTesting"]),
        .executable(name: "haptics", targets: ["haptics"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // `make docs`: the `generate-documentation` command (DocC); a plugin, so it builds nothing until run.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // C boundary: system libraries found through pkg-config, and the ioctl shim.
        .systemLibrary(
            name: "CLibudev", pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]),
        .systemLibrary(
            name: "CLibevdev", pkgConfig: "libevdev",
            providers: [.apt(["libevdev-dev"])]),
        .target(name: "CLinuxInput"),

        // Pure layers: no Glibc, no I/O.
        .target(name: "AHAP", swiftSettings: strict),
        .target(name: "HapticRendering", dependencies: ["AHAP"], swiftSettings: strict),

        // The kernel: discovery, evdev force feedback.
        .target(
            name: "LinuxInput",
            dependencies: [
                "CLibudev", "CLibevdev", "CLinuxInput",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Test hardware, not product API: the uinput virtual pad with its motor model and record, and the
        // emulated game controllers that the kernel's own drivers bind (uhid, USB gadget).
        .target(
            name: "HapticTestDevices",
            dependencies: [
                "HapticRendering", "LinuxInput", "CLinuxInput",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Engine, players, clock, recovery, HapticManager, feedback vocabulary.
        .target(
            name: "LinuxHaptics",
            dependencies: [
                "AHAP", "HapticRendering", "LinuxInput",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Test doubles: a clock that moves when told to, an output that records and fails on demand, a log that keeps.
        .target(
            name: "LinuxHapticsTesting",
            dependencies: [
                "HapticRendering", "LinuxHaptics", "LinuxInput",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        .executableTarget(
            name: "haptics",
            dependencies: [
                "AHAP", "HapticRendering", "LinuxInput", "LinuxHaptics", "HapticTestDevices",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // Runs inside the VM bench (or directly where /dev/uinput and root exist).
        .executableTarget(
            name: "haptics-kernel-tests",
            dependencies: [
                "AHAP", "HapticRendering", "LinuxInput", "LinuxHaptics", "LinuxHapticsTesting", "HapticTestDevices",
                "CLinuxInput", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // `make bench`: measurements reported as ratios against a baseline of the same run.
        .executableTarget(
            name: "haptics-bench",
            dependencies: [
                "AHAP", "HapticRendering", "LinuxInput", "LinuxHaptics", "LinuxHapticsTesting", "HapticTestDevices",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        .testTarget(name: "AHAPTests", dependencies: ["AHAP"], swiftSettings: strict),
        .testTarget(
            name: "HapticRenderingTests", dependencies: ["AHAP", "HapticRendering"],
            swiftSettings: strict),
        .testTarget(
            name: "LinuxInputTests", dependencies: ["LinuxInput", "CLibevdev", "CLinuxInput"],
            swiftSettings: strict),
        .testTarget(
            name: "HapticTestDevicesTests", dependencies: ["HapticTestDevices", "HapticRendering", "LinuxInput"],
            swiftSettings: strict),
        .testTarget(
            name: "LinuxHapticsTests",
            dependencies: ["LinuxHaptics", "LinuxHapticsTesting", "AHAP", "HapticRendering", "LinuxInput"],
            swiftSettings: strict),
    ],
    swiftLanguageModes: [.v6]
)

// Fuzz targets (`make fuzz`, docs/reliability.md): one libFuzzer executable per input format, declared only when
// HAPTICS_FUZZ is set. libFuzzer supplies `main`, so they link only in a build with `--sanitize fuzzer`: a plain
// `swift build` (or `--build-tests`) must not see them, and spends no time on them. They live in this package
// rather than in a package of their own because they reach `package` declarations (the inotify reader, the
// settings file form), which no other package can see. scripts/fuzz builds them into .build-fuzz.
if Context.environment["HAPTICS_FUZZ"] != nil {
    package.targets.append(
        .target(
            name: "HapticsFuzzing",
            dependencies: ["AHAP", "HapticRendering", "LinuxInput", "LinuxHaptics", "HapticTestDevices"],
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
