// Start paths, on the host with no emulator: for each way a game triggers haptics, the user-space time from the
// call to the moment the output is asked to write (the `write()` a device output would make there), and the
// whole call. The output is a probe that only notes the time of its first write of each call, so what is
// measured is our code alone: the engine's prepared player, HapticManager's prepared pattern and its engine
// adapter, and the ordinary start of a player just made. The baseline is the probe's own write called directly:
// the cost of reading the clock and making one call, which no path can go below. Rounds interleave the paths in
// the order of a balanced Latin square (`balancedOrder`: no path always follows another that shares its code),
// and each round starts with the engine at rest (the pulse over), as
// a game's taps do.
import AHAP
import AppHaptics
import Foundation
import HapticRendering
import LinuxHaptics
@_spi(Internals) import LinuxSystem
import Logging
import Synchronization

let startPathBenchmarks = BenchmarkGroup(name: "Start paths") {
    try await StartPathBench.run(rounds: StartPathBench.rounds)
}

enum StartPathBench {
    static let rounds = 300
    static let warmUp = 20
    /// Between rounds: longer than the tap, so the engine is at rest when the next call comes.
    static let restMicroseconds: UInt32 = 60_000

    enum Path: String, CaseIterable {
        case bareWrite = "the probe's write called directly (the floor)"
        case enginePrepared = "engine player prepared once, start(atTime: 0)"
        case adapterPrepared = "HapticManager's engine adapter, prepare(pattern) once, play(pattern)"
        case managerPrepared = "HapticManager, prepare(pattern:) once, play(pattern:)"
        case ordinaryStart = "makePlayer, then start(atTime: 0)"
    }

    /// The tap the peer bench triggers.
    static let tap = PeerLatency.tap

    @MainActor
    static func run(rounds: Int) async throws -> [BenchmarkResult] {
        var logger = Logger(label: "bench.start-paths")
        logger.logLevel = .error
        let probe = ProbeOutput()
        let selection = HapticOutputSelection(source: probe)
        let provider = EngineOutputProvider(output: selection, logger: logger)
        let manager = HapticManager(
            resolver: DefaultHapticResourceResolver(), engineProvider: provider, logger: logger)
        guard manager.engineAvailable else { throw PeerFailure(reason: "no HapticManager engine on the probe") }
        let adapter = ManagedEngineAdapter(engine: HapticEngine(output: selection, logger: logger))
        try adapter.start()
        // A prepared pattern stays prepared for every play of it: prepared once, as a game would.
        try adapter.prepare(tap)
        manager.prepare(pattern: tap)
        let engine = HapticEngine(output: selection, logger: logger)
        try engine.start()
        defer {
            engine.stop()
            adapter.stop()
        }
        let prepared = try engine.makePlayer(with: tap)
        guard try prepared.prepare() else { throw PeerFailure(reason: "the engine could not prepare the tap") }

        var before: [Path: [Double]] = [:]
        var whole: [Path: [Double]] = [:]
        /// One call of `path`, its player made or prepared first (after `rest` µs of quiet): the monotonic
        /// nanoseconds of the call, its write and its return.
        func timedCall(_ path: Path, rest: UInt32) throws -> (called: UInt64, wrote: UInt64, returned: UInt64) {
            var player: (any HapticPatternPlayer)?
            switch path {
            // Prepared once, before the rounds. (Written case by case, in this order: merged into one case, the
            // release build's compiler crashes on this function.)
            case .adapterPrepared: break
            case .managerPrepared: break
            case .ordinaryStart: player = try engine.makePlayer(with: tap)
            case .bareWrite, .enginePrepared: break
            }
            if rest > 0 { usleep(rest) }
            probe.arm()
            let called = Sys.monotonicNanoseconds()
            switch path {
            case .bareWrite: probe.noteWrite()
            case .enginePrepared: try prepared.start(atTime: 0)
            case .adapterPrepared: try adapter.play(tap)
            case .managerPrepared: manager.play(pattern: tap)
            case .ordinaryStart: try player?.start(atTime: 0)
            }
            let returned = Sys.monotonicNanoseconds()
            guard let wrote = probe.firstWrite else {
                throw PeerFailure(reason: "\(path.rawValue) wrote nothing on the caller's thread")
            }
            return (called, wrote, returned)
        }
        for round in 0..<(warmUp + rounds) {
            for path in balancedOrder(Path.allCases, round: round) {
                let call = try timedCall(path, rest: restMicroseconds)
                if round >= warmUp {
                    before[path, default: []].append(Double(call.wrote - call.called) / 1000)
                    whole[path, default: []].append(Double(call.returned - call.called) / 1000)
                }
            }
        }
        // Warm: the same calls back to back, caches hot (what the code costs, without the cost of a cold start).
        // Not the ordinary start: its write is the caller's only on a device at rest.
        var warm: [Path: [Double]] = [:]
        for path in Path.allCases where path != .ordinaryStart {
            for _ in 0..<2000 {
                let call = try timedCall(path, rest: 0)
                warm[path, default: []].append(Double(call.wrote - call.called) / 1000)
            }
        }
        let floor = Measurement(
            name: "before the write: \(Path.bareWrite.rawValue)", unit: "µs",
            samples: before[.bareWrite] ?? [])
        var results = [BenchmarkResult(measurement: floor)]
        for path in Path.allCases where path != .bareWrite {
            let measured = Measurement(
                name: "before the write: \(path.rawValue)", unit: "µs",
                samples: before[path] ?? [])
            results.append(
                BenchmarkResult(
                    measurement: measured, baseline: floor.name,
                    ratio: measured.percentile(50) / floor.percentile(50),
                    note: String(
                        format: "+%.2f µs at p50, +%.2f µs at p99 over the floor",
                        measured.percentile(50) - floor.percentile(50),
                        measured.percentile(99) - floor.percentile(99))))
        }
        let plain = { (what: String, paths: [Path], samples: [Path: [Double]]) in
            paths.map { path in
                BenchmarkResult(
                    measurement: Measurement(
                        name: "\(what): \(path.rawValue)", unit: "µs", samples: samples[path] ?? []))
            }
        }
        results += plain("warm, before the write", Path.allCases.filter { $0 != .ordinaryStart }, warm)
        results += plain("whole call", Path.allCases.filter { $0 != .bareWrite }, whole)
        return results
    }
}

/// An output that writes nothing and notes when it was first asked to (a trigger, or a level that is not off)
/// since it was armed.
final class ProbeOutput: OutputSource, MotorOutput {
    /// Monotonic nanoseconds of the first write since `arm()`; 0 for none.
    private let written = Atomic<UInt64>(0)
    private let nextPulse = Atomic<Int>(0)

    func arm() { written.store(0, ordering: .sequentiallyConsistent) }

    var firstWrite: UInt64? {
        let time = written.load(ordering: .sequentiallyConsistent)
        return time == 0 ? nil : time
    }

    func noteWrite() {
        let now = Sys.monotonicNanoseconds()
        _ = written.compareExchange(expected: 0, desired: now, ordering: .sequentiallyConsistent)
    }

    func open(clock: any HapticClock, logger: Logger) throws(OutputFailure) -> any MotorOutput { self }
    func watch(logger: Logger, _ handler: @escaping @Sendable (OutputPresence) -> Void) -> (any OutputWatch)? { nil }

    var capabilities: OutputCapabilities { OutputCapabilities(name: "probe", isVirtual: true) }
    func sendNeutral() {}
    func apply(_ mix: MotorMagnitudes) { if !mix.isOff { noteWrite() } }
    func keepAlive() {}
    func prepare(_ pulse: PreparedPulse) -> Int { nextPulse.add(1, ordering: .relaxed).newValue }
    func trigger(prepared id: Int) { noteWrite() }
    func stop(prepared id: Int) {}
    func release(prepared id: Int) {}
    func close() {}
    func currentLevels() -> MotorMagnitudes? { nil }
}
