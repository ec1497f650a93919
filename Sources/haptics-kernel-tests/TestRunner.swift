// A small runner for tests that need a real kernel (uinput, evdev): named cases grouped in suites, each
// passing, failing with a reason, or skipping with a reason. Suites live in their own files and are
// listed once in Suites.swift.
import Glibc
import LinuxHaptics

/// A test case: a name unique across suites ("suite/case") and an async body that throws to fail or skip.
struct KernelTest: Sendable {
    let name: String
    let body: @Sendable () async throws -> Void
}

/// A group of tests with what they need from the machine.
struct KernelTestSuite: Sendable {
    let name: String
    /// Device nodes the suite cannot run without; missing ones skip every test with a reason.
    var requiredPaths: [String] = []
    let tests: [KernelTest]
}

/// Thrown by a test that failed; `reason` says what was expected and what happened.
struct TestFailure: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Thrown by a test that cannot run here.
struct TestSkip: Error, CustomStringConvertible {
    let reason: String
    var description: String { reason }
}

/// Fails the current test with `reason` unless `condition` holds.
func require(_ condition: Bool, _ reason: @autoclosure () -> String) throws(TestFailure) {
    if !condition { throw TestFailure(reason: reason()) }
}

/// Fails unless the two values are equal, naming both.
func requireEqual<T: Equatable>(_ actual: T, _ expected: T, _ what: String) throws(TestFailure) {
    if actual != expected { throw TestFailure(reason: "\(what): expected \(expected), got \(actual)") }
}

struct TestRunner {
    let suites: [KernelTestSuite]

    func names() -> [String] { suites.flatMap { $0.tests.map(\.name) } }

    /// Runs the tests whose names start with one of `prefixes` (all when empty). Returns whether all passed.
    func run(prefixes: [String]) async -> Bool {
        var passed = 0
        var failed = 0
        var skipped = 0
        for suite in suites {
            let missing = suite.requiredPaths.filter { access($0, F_OK) != 0 }
            for test in suite.tests where prefixes.isEmpty || prefixes.contains(where: { test.name.hasPrefix($0) }) {
                if let path = missing.first {
                    print("SKIP \(test.name): \(path) is missing\(Self.hint(for: path))")
                    skipped += 1
                    continue
                }
                let start = monotonicSeconds()
                do {
                    try await test.body()
                    print("PASS \(test.name) (\(Self.milliseconds(since: start)) ms)")
                    passed += 1
                } catch let skip as TestSkip {
                    print("SKIP \(test.name): \(skip.reason)")
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

    static func hint(for path: String) -> String {
        switch path {
        case "/dev/uinput": " (load the module: modprobe uinput; run as root)"
        case "/proc/asound/Loopback": " (load ALSA's loopback card: modprobe snd-aloop)"
        default: ""
        }
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
