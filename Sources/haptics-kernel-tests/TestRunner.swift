// A small runner for tests that need a real kernel (uinput, evdev): named cases grouped in suites, each
// passing, failing with a reason, or skipping with the prerequisite it lacks and a reason. Suites live in their
// own files and are listed once in Suites.swift.
import Glibc
import LinuxHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem

/// A test case: a name unique across suites ("suite/case") and an async body that throws to fail or skip.
struct KernelTest: Sendable {
    let name: String
    let body: @Sendable () async throws -> Void
}

/// What a test needs from the machine that it cannot make itself. A test that finds one missing skips, naming
/// it; scripts/kernel-tests fails the run on such a skip unless the prerequisite is one the caller allowed
/// (docs/bench.md, "A skip is not a pass"). The names are what `KERNEL_TESTS_ALLOW_SKIP` takes.
enum Prerequisite: String, CaseIterable, Sendable {
    /// /dev/uinput: the virtual pad.
    case uinput
    /// /dev/uhid: the emulated HID controllers.
    case uhid
    /// The USB gadget stack (configfs, dummy_hcd, FunctionFS): the emulated USB controllers.
    case gadget
    /// ALSA's loopback card (snd-aloop), played into and captured from, and unbound as a card unplugged.
    case sndAloop = "snd-aloop"
    /// PulseAudio's daemon with its modules (in the VM bench, vm-run's --pulseaudio layer).
    case pulseaudio
    /// A running systemd-udevd (/run/udev/control): in the VM bench, the second guest's.
    case udevd
    /// The project's udev rule (udev/70-haptics-gamepads.rules) beside the working directory.
    case udevRules = "udev-rules"
    /// The SDL harness of the side-by-side bench (peers/sdl-peer.c, `make peers`).
    case sdlPeer = "sdl-peer"
    /// The C library's example program (`make capi-example`).
    case cExample = "c-example"
    /// The real-world AHAP corpus that `AHAP_CORPUS` names.
    case corpus
    /// Debian's evtest, and fftest (package joystick).
    case evtest, fftest
    /// `su`, to run the CLI as another user.
    case su
    /// A machine with no rumble device of its own (the late-pad tests wait for the first one to appear).
    case noRumbleDevice = "no-rumble-device"

    /// The node or file whose absence means this prerequisite is missing, for suites that need it whole.
    var path: String? {
        switch self {
        case .uinput: "/dev/uinput"
        case .uhid: "/dev/uhid"
        case .sndAloop: "/proc/asound/Loopback"
        default: nil
        }
    }

    /// How to provide it, after the missing path.
    var hint: String {
        switch self {
        case .uinput: " (load the module: modprobe uinput; run as root)"
        case .uhid: " (load the module: modprobe uhid; run as root)"
        case .sndAloop: " (load ALSA's loopback card: modprobe snd-aloop)"
        default: ""
        }
    }
}

/// A group of tests with what they need from the machine.
struct KernelTestSuite: Sendable {
    let name: String
    /// What the suite cannot run without, each found by its `path`; a missing one skips every test, naming it.
    var requires: [Prerequisite] = []
    let tests: [KernelTest]
}

/// Thrown by a test that failed; `reason` says what was expected and what happened.
struct TestFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Thrown by a test that cannot run here: the prerequisite it lacks, and what exactly is missing.
struct TestSkip: Error, CustomStringConvertible {
    let prerequisite: Prerequisite
    let reason: String

    init(_ prerequisite: Prerequisite, _ reason: String) {
        self.prerequisite = prerequisite
        self.reason = reason
    }

    /// As the runner prints it after the test's name: "PREREQUISITE: REASON".
    var description: String { "\(prerequisite.rawValue): \(reason)" }
}

/// Fails the current test with `reason` unless `condition` holds.
func require(_ condition: Bool, _ reason: @autoclosure () -> String) throws(TestFailure) {
    if !condition { throw TestFailure(reason: reason()) }
}

/// Fails unless the two values are equal, naming both.
func requireEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws(TestFailure) {
    if actual != expected { throw TestFailure(reason: "\(what): expected \(expected), got \(actual)") }
}

/// Writes a line into the kernel's log as each test starts, so that a kernel message on the console can be
/// traced to the test that was running (scripts/lib/console-check reads these lines). At warning level: the
/// VM bench's console shows warnings and worse.
final class KernelLogMarks: Sendable {
    static let path = "/dev/kmsg"
    /// What starts every mark; console-check looks for it.
    static let prefix = "haptics-kernel-tests: start "
    private let fd: Int32

    /// nil when the kernel's log cannot be written (not root, no `/dev/kmsg`).
    init?() {
        guard let fd = try? Sys.open(Self.path, flags: O_WRONLY) else { return nil }
        self.fd = fd
    }

    deinit { Sys.close(fd) }

    func mark(testStarting name: String) {
        let line = Array("<4>\(Self.prefix)\(name)\n".utf8)
        _ = try? line.withUnsafeBytes { (bytes) throws(SystemCallError) in try Sys.write(fd, bytes) }
    }
}

struct TestRunner {
    let suites: [KernelTestSuite]

    func names() -> [String] { suites.flatMap { $0.tests.map(\.name) } }

    /// Runs the tests whose names start with one of `prefixes` (all when empty), marking each start in `marks`
    /// when given. Returns whether all passed.
    func run(prefixes: [String], marks: KernelLogMarks? = nil) async -> Bool {
        var passed = 0
        var failed = 0
        var skipped = 0
        for suite in suites {
            let missing = suite.requires.compactMap { prerequisite -> TestSkip? in
                guard let path = prerequisite.path, access(path, F_OK) != 0 else { return nil }
                return TestSkip(prerequisite, "\(path) is missing\(prerequisite.hint)")
            }
            for test in suite.tests where prefixes.isEmpty || prefixes.contains(where: { test.name.hasPrefix($0) }) {
                if let skip = missing.first {
                    print("SKIP \(test.name): \(skip)")
                    skipped += 1
                    continue
                }
                marks?.mark(testStarting: test.name)
                let start = monotonicSeconds()
                do {
                    try await test.body()
                    print("PASS \(test.name) (\(Self.milliseconds(since: start)) ms)")
                    passed += 1
                } catch let skip as TestSkip {
                    print("SKIP \(test.name): \(skip)")
                    skipped += 1
                } catch {
                    print("FAIL \(test.name): \(error)")
                    failed += 1
                }
                flushOutput()
            }
        }
        print("\(passed) passed, \(failed) failed" + (skipped > 0 ? ", \(skipped) skipped" : ""))
        return failed == 0
    }

    static func milliseconds(since start: Double) -> String {
        let tenths = Int(((monotonicSeconds() - start) * 10_000).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }
}

/// Now on the engine's clock, which is also the clock uinput stamps its events with.
func monotonicSeconds() -> Double { MonotonicClock().now }

/// Flushes every C stream; stdout is what matters when output is piped through the VM's serial port.
func flushOutput() { fflush(nil) }
