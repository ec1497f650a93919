// The native periodic path on the emulated USB PID joystick (hid-pidff binds it) against streamed constant-force
// levels through the same device, corpus-wide: how many reports each sends a second, and how closely the device's
// magnitude over time (its effects' enveloped magnitudes summed, not the signed force) follows the pattern's
// intensity envelope.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput

let pidKernelBenchmarks: [BenchmarkGroup] = [
    BenchmarkGroup(name: "PID periodic", needsKernel: true) { try await PIDBench().run() }
]

struct PIDBench {
    /// Each pattern plays for at most this long on each path.
    static let seconds = 1.0
    /// The constant-force baseline's effect: longer than any pattern played, updated in place.
    static let baselineLengthMilliseconds: UInt16 = 0xffff

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    func run() async throws -> [BenchmarkResult] {
        let device = try EmulatedModel.pidJoystick.start(logger: EngineBench.logger())
        defer { device.destroy() }
        let nodes = try device.waitUntilBound(timeout: 20)
        var options = HapticEngineOptions()
        options.allowsForceDevices = true
        options.playsHapticsOnly = true
        let engine = HapticEngine(
            output: .device(.node(nodes.rumbleNode)), options: options, logger: EngineBench.logger())
        try engine.start()
        defer { engine.stop() }
        guard engine.capabilities?.playsPeriodicEffects == true else {
            throw Failure(description: "the engine does not play periodic effects on \(nodes.rumbleNode)")
        }
        let corpus = try RenderingCorpus.load()
        let renderer = PatternRenderer(profile: .periodicForce)
        var native = Tally(), levels = Tally()
        var periods: [Double] = []
        for pattern in corpus {
            let envelope = renderer.intensityEnvelope(pattern)
            guard envelope.endTime > 0 else { continue }
            let seconds = min(envelope.endTime, Self.seconds)
            periods += NativePeriodicProgram(pattern: pattern, profile: .periodicForce).effects.map(\.period)
            let (origin, played) = try await playedRecords(device, engine, seconds: seconds) {
                try engine.makeAdvancedPlayer(with: pattern)
            }
            native.add(played, origin: origin, seconds: seconds, envelope: envelope)
            try await Task.sleep(for: .milliseconds(100))
            let (baselineOrigin, streamed) = try await streamLevels(device, nodes, envelope: envelope, seconds: seconds)
            levels.add(streamed, origin: baselineOrigin, seconds: seconds, envelope: envelope)
            try await Task.sleep(for: .milliseconds(100))
        }
        let files = "\(native.files) \(AHAPFixtures.corpusOrFixturesName) files, first \(Self.seconds) s of each"
        let range =
            periods.isEmpty
            ? "none"
            : String(
                format: "%.1f-%.1f ms (%.0f-%.0f Hz)", (periods.min() ?? 0) * 1000, (periods.max() ?? 0) * 1000,
                1 / (periods.max() ?? 1), 1 / (periods.min() ?? 1))
        return [
            BenchmarkResult(
                measurement: Measurement(
                    name: "PID joystick: streamed constant-force levels, RMS error per file", unit: "rms",
                    samples: levels.perFile),
                note: String(
                    format: "pooled RMS %.4f (lag-fitted %.4f), %.1f reports/s (%d reports); %@", levels.pooled,
                    levels.alignedPooled, levels.reportsPerSecond, levels.reports, files)),
            BenchmarkResult(
                measurement: Measurement(
                    name: "PID joystick: native periodic effects, RMS error per file", unit: "rms",
                    samples: native.perFile),
                baseline: "PID joystick: streamed constant-force levels, RMS error per file",
                ratio: native.pooled / max(levels.pooled, 1e-12),
                note: String(
                    format:
                        "pooled RMS %.4f against %.4f; each file moved by the lag that fits it best (0-%d ms): %.4f "
                        + "against %.4f, ratio %.3f; %.1f reports/s (%d reports) against %.1f (ratio %.3f); "
                        + "periods used %@; %@",
                    native.pooled, levels.pooled, Self.longestLag, native.alignedPooled, levels.alignedPooled,
                    native.alignedPooled / max(levels.alignedPooled, 1e-12), native.reportsPerSecond, native.reports,
                    levels.reportsPerSecond,
                    native.reportsPerSecond / max(levels.reportsPerSecond, 1e-12), range, files)),
        ]
    }

    /// The baseline: the pattern's intensity envelope planned for the pid profile (the engine's own planner),
    /// each command sent at its time as an in-place update of one constant-force effect started at the origin.
    func streamLevels(
        _ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes, envelope: MotorTimeline, seconds: Double
    ) async throws -> (origin: Double, records: [PadRecord]) {
        let event = try EventDevice(node: nodes.rumbleNode, logger: EngineBench.logger())
        defer { event.close() }
        let commands = DeviceCommandPlanner(profile: .periodicForce).commands(for: envelope)
            .filter { $0.time < seconds }
        func effect(_ level: Double, id: Int16 = -1) -> ForceFeedbackEffect {
            ForceFeedbackEffect(
                id: id, kind: .constant(level: Int16((min(max(level, 0), 1) * 0x7fff).rounded()), envelope: .init()),
                replayLength: Self.baselineLengthMilliseconds)
        }
        let before = device.records().count
        let slot = try event.uploadEffect(effect(0))
        let origin = Double(Clock.microseconds()) / 1e6 + 0.05
        for (index, command) in commands.enumerated() {
            let wait = origin + command.time - Double(Clock.microseconds()) / 1e6
            if wait > 0 { try await Task.sleep(for: .microseconds(Int64(wait * 1e6))) }
            try slot.update(effect(command.levels.strong, id: slot.id))
            if index == 0 { try slot.play() }
        }
        let end = origin + seconds - Double(Clock.microseconds()) / 1e6
        if end > 0 { try await Task.sleep(for: .microseconds(Int64(end * 1e6))) }
        try slot.erase()
        try await Task.sleep(for: .milliseconds(250))
        return (origin, Array(device.records().dropFirst(before)))
    }

    /// The longest lag, in milliseconds, the aligned figure tries: an upload's round trip and a late play.
    static let longestLag = 30

    /// Error and reports over the corpus for one path.
    struct Tally {
        var squares = 0.0
        var alignedSquares = 0.0
        var samples = 0
        var perFile: [Double] = []
        var reports = 0
        var seconds = 0.0
        var files: Int { perFile.count }
        var pooled: Double { (squares / Double(max(samples, 1))).squareRoot() }
        var alignedPooled: Double { (alignedSquares / Double(max(samples, 1))).squareRoot() }
        var reportsPerSecond: Double { Double(reports) / max(seconds, 1e-9) }

        /// The device's magnitude against the envelope every millisecond over the played span (and one tick
        /// after, for a late end), as played and moved by the lag (0-30 ms) that fits it best; and the PID
        /// reports the device received.
        mutating func add(_ records: [PadRecord], origin: Double, seconds: Double, envelope: MotorTimeline) {
            let playback = PIDPlayback(records: records)
            let count = Int((seconds + FixedTickRenderer.tick) * FidelityFigures.sampleRate)
            let target = (0..<count).map { index in
                let time = Double(index) / FidelityFigures.sampleRate
                return time <= seconds ? envelope.levels(at: time).strong : 0
            }
            let levels = DriverBench.sampled(
                { playback.output(at: origin + $0).magnitude }, count: count + PIDBench.longestLag)
            let fileSquares = DriverBench.squaredError(levels, target, lag: 0)
            squares += fileSquares
            alignedSquares += DriverBench.bestAligned(levels, target, longest: PIDBench.longestLag)
            samples += count
            perFile.append((fileSquares / Double(count)).squareRoot())
            reports += records.filter { $0.pid != nil }.count
            self.seconds += seconds
        }
    }
}
