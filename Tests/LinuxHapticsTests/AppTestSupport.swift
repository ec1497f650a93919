// Shared by the app-layer tests: the repository's Haptics/ folder, scratch folders, waiting on a recording
// log, and an engine that records what the manager asks of it and fails on demand.
import AHAP
import Foundation
import LinuxHaptics
import AppHaptics
import LinuxHapticsTesting
import LinuxInput
import Logging
import Synchronization
import Testing
@_spi(Internals) import LinuxSystem

enum AppAssets {
    /// `<package>/Haptics`, found from this file's path (`<package>/Tests/LinuxHapticsTests/...`).
    static let folder: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // LinuxHapticsTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .appendingPathComponent("Haptics", isDirectory: true)

    static func url(_ name: String) -> URL { folder.appendingPathComponent(name) }
}

/// A fresh empty folder under the system's temporary folder, removed by `remove()`.
struct ScratchFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("haptics-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }

    func write(_ text: String, to name: String) throws -> URL {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
        return file
    }
}

extension RecordingLog {
    /// Lets the main actor run the recovery tasks an engine's callbacks queued, until `count` have ended (each
    /// ends in one message with `recovery` metadata): each yield lets queued main-actor tasks run, and a
    /// millisecond's sleep every hundred yields lets the threads of a busy test run have their turn. Fewer ended
    /// within 30 s (a hang guard, not a timing) is the test's failure: what it expects next would otherwise hold of
    /// a recovery that never ran.
    func waitForRecovery(count: Int, sourceLocation: SourceLocation = #_sourceLocation) async {
        func ended() -> Int { entries.count(where: { $0.message.contains("recovery=") }) }
        let deadline = ContinuousClock.now + .seconds(30)
        var yields = 0
        while ended() < count, ContinuousClock.now < deadline {
            yields += 1
            if yields % 100 == 0 { try? await Task.sleep(for: .milliseconds(1)) } else { await Task.yield() }
        }
        if ended() < count {
            Issue.record("\(ended()) of \(count) recoveries ended within 30 s", sourceLocation: sourceLocation)
        }
    }
}

/// An engine that records what it is asked and fails where a test says; its handlers can be fired by hand,
/// as the real engine fires them on unplug and replug.
final class RecordingEngine: ManagedHapticEngine {
    struct State {
        var starts = 0
        var stops = 0
        var prepares = 0
        var prepared: [HapticPattern] = []
        var played: [HapticPattern] = []
        var transients: [(intensity: Double, sharpness: Double)] = []
        var stopped: (@Sendable (String) -> Void)?
        var reset: (@Sendable () -> Void)?
    }

    let state = Lock(State())
    /// Whether the device is there: `start`, `prepare` and plays fail while it is not.
    let devicePresent: Atomic<Bool>

    init(devicePresent: Bool = true) {
        self.devicePresent = Atomic(devicePresent)
    }

    struct DeviceGone: Error {}

    private func requireDevice() throws {
        if !devicePresent.load(ordering: .relaxed) { throw DeviceGone() }
    }

    func setRecoveryHandlers(stopped: @escaping @Sendable (String) -> Void, reset: @escaping @Sendable () -> Void) {
        state.withLock {
            $0.stopped = stopped
            $0.reset = reset
        }
    }

    func start() throws {
        state.withLock { $0.starts += 1 }
        try requireDevice()
    }

    func stop() { state.withLock { $0.stops += 1 } }

    func prepare() throws {
        try requireDevice()
        state.withLock { $0.prepares += 1 }
    }

    func prepare(_ pattern: HapticPattern) throws {
        try requireDevice()
        state.withLock { $0.prepared.append(pattern) }
    }

    func play(_ pattern: HapticPattern) throws {
        try requireDevice()
        state.withLock { $0.played.append(pattern) }
    }

    func playTransient(intensity: Double, sharpness: Double) throws {
        try requireDevice()
        state.withLock { $0.transients.append((intensity, sharpness)) }
    }

    func fireStopped(_ reason: String) { state.withLock { $0.stopped }?(reason) }
    func fireReset() { state.withLock { $0.reset }?() }
    var hasHandlers: Bool { state.withLock { $0.stopped != nil && $0.reset != nil } }
}

/// Hands out `RecordingEngine`s; the hardware check and the builds are counted and can be made to fail.
final class RecordingEngineProvider: HapticEngineProvider {
    struct State {
        var hardwarePresent: Bool
        /// What the provider says of missing hardware.
        var unavailableReason: String?
        var capabilityChecks = 0
        var engines: [RecordingEngine] = []
        var failBuilds = false
        var connected: (@Sendable () -> Void)?
        var watchCancelled = false
    }

    let state: Lock<State>

    init(hardwarePresent: Bool) {
        state = Lock(State(hardwarePresent: hardwarePresent))
    }

    struct BuildFailed: Error {}

    func hardwareSupportsHaptics() -> Bool {
        state.withLock {
            $0.capabilityChecks += 1
            return $0.hardwarePresent
        }
    }

    func hardwareUnavailableReason() -> String? { state.withLock { $0.unavailableReason } }

    func makeEngine() throws -> any ManagedHapticEngine {
        try state.withLock { state in
            if state.failBuilds { throw BuildFailed() }
            let engine = RecordingEngine()
            state.engines.append(engine)
            return engine
        }
    }

    func watchForHardware(_ connected: @escaping @Sendable () -> Void) -> Task<Void, Never>? {
        state.withLock { $0.connected = connected }
        // A task that lives until cancelled, as a real device watch does. The cancel is noted by the call that
        // cancels (its handler runs there), so a test reads it right after, whenever the task itself wakes.
        return Task { [self] in
            await withTaskCancellationHandler {
                while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
            } onCancel: {
                self.state.withLock { $0.watchCancelled = true }
            }
        }
    }

    /// Plugs a capable device in: the hardware check passes from now on and the watch hears of it.
    func plugIn() {
        let connected = state.withLock { state in
            state.hardwarePresent = true
            return state.connected
        }
        connected?()
    }

    var engines: [RecordingEngine] { state.withLock { $0.engines } }
    var latest: RecordingEngine? { engines.last }
}

/// A resolver over one folder that counts its look-ups (to prove work is not repeated).
final class CountingResolver: HapticResourceResolving {
    let base: HapticResourceDirectory
    let lookups = Atomic<Int>(0)

    init(directory: URL) {
        base = HapticResourceDirectory(directory: directory)
    }

    func url(forResource name: String, withExtension fileExtension: String) -> URL? {
        lookups.add(1, ordering: .relaxed)
        return base.url(forResource: name, withExtension: fileExtension)
    }
}
