// The DualSense's voice coils against its rumble motors, on the emulated pad over Bluetooth that the real
// hid-playstation binds: how well each path carries a pattern's sharpness (the correlation of the pattern's
// sharpness with the received frequency, or with the weak motor's share on rumble), how close each follows the
// intensity envelope at 1 kHz, and how long a start takes to reach the wire. The long group ("HD underrun
// soak") loops a pattern on the voice coils for ten minutes beside two busy processes and counts underruns.
import AHAPFiles
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Logging

let voiceCoilKernelBenchmarks: [BenchmarkGroup] = [
    BenchmarkGroup(name: "Voice coils", needsKernel: true) { try await VoiceCoilBench().run() },
    BenchmarkGroup(name: "HD underrun soak", needsKernel: true, onlyWhenNamed: true) {
        try await VoiceCoilBench().underrunSoak()
    },
]

struct VoiceCoilBench {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static let startRounds = 80
    /// Each corpus pattern is played for at most this long on each path.
    static let corpusSeconds = 1.0
    /// Windows of the sharpness comparison: long enough for a 50 Hz carrier's two cycles.
    static let window = 0.04
    /// A window counts when the pattern sounds in it at least this much (intensity, 0...1).
    static let soundingFloor = 0.05
    /// The envelope comparison's rate.
    static let envelopeRate = 1000.0
    /// The envelope comparison leaves out this long after each transient's time.
    static let transientSpan = 0.08

    /// A started engine on `node` playing on `actuators`, checked to play on `kind` with `.hd` (on the motors
    /// otherwise).
    static func engine(on node: String, actuators: HapticActuators, kind: HDActuators.Kind) throws -> HapticEngine {
        var options = HapticEngineOptions()
        options.actuators = actuators
        options.playsHapticsOnly = true
        let engine = HapticEngine(output: .device(.node(node)), options: options, logger: EngineBench.logger())
        try engine.start()
        guard engine.capabilities?.hdKind == (actuators == .hd ? kind : nil) else {
            throw Failure(description: "the \(actuators) engine plays on \(engine.capabilities as Any)")
        }
        return engine
    }

    func engine(on node: String, actuators: HapticActuators) throws -> HapticEngine {
        try Self.engine(on: node, actuators: actuators, kind: .voiceCoils)
    }

    func run() async throws -> [BenchmarkResult] {
        let device = try EmulatedModel.dualsenseBluetooth.start(logger: EngineBench.logger())
        defer { device.destroy() }
        let nodes = try device.waitUntilBound(timeout: 20)
        let coils = try engine(on: nodes.rumbleNode, actuators: .hd)
        defer { coils.stop() }
        let motors = try engine(on: nodes.rumbleNode, actuators: .rumble)
        defer { motors.stop() }
        var results = try await startLatency(device, coils: coils, motors: motors)
        results += try await corpus(device, coils: coils, motors: motors)
        return results
    }

    // MARK: Start to the wire

    /// A short tone started now, alternately on each path: from the call to the first report that carries it.
    func startLatency(_ device: any EmulatedDevice, coils: HapticEngine, motors: HapticEngine) async throws
        -> [BenchmarkResult]
    {
        let tone = AHAPFixtures.tone(seconds: 0.03)
        var onCoils: [Double] = []
        var onMotors: [Double] = []
        for round in 0..<Self.startRounds {
            let hd = round % 2 == 0
            let player = try (hd ? coils : motors).makePlayer(with: tone)
            let before = device.records().count
            let start = Clock.microseconds()
            try player.start(atTime: 0)
            // Long enough for the tone to end and each path to come to rest (the stream idles, the motors stop).
            try await Task.sleep(for: .milliseconds(150))
            let first = device.records().dropFirst(before).first { record in
                guard record.time.microseconds >= start else { return false }
                if let packet = record.waveform { return hd && (packet.left ?? []).contains { $0 != 0 } }
                return !hd && ((record.strong ?? 0) > 0 || (record.weak ?? 0) > 0)
            }
            guard let first else { continue }
            let milliseconds = Double(first.time.microseconds - start) / 1000
            if hd { onCoils.append(milliseconds) } else { onMotors.append(milliseconds) }
        }
        guard !onCoils.isEmpty, !onMotors.isEmpty else { throw Failure(description: "no start reached the wire") }
        let motorsMeasurement = Measurement(name: "rumble: start -> first report", unit: "ms", samples: onMotors)
        let coilsMeasurement = Measurement(
            name: "voice coils: start -> first sample on the wire", unit: "ms", samples: onCoils)
        return [
            BenchmarkResult(
                measurement: motorsMeasurement,
                note: "\(onMotors.count) of \(Self.startRounds / 2) starts seen, interleaved with the voice coils'"),
            BenchmarkResult(
                measurement: coilsMeasurement, baseline: "rumble: start -> first report",
                ratio: coilsMeasurement.percentile(50) / motorsMeasurement.percentile(50),
                note: String(
                    format: "%d of %d starts seen; p99 %.3f ms against rumble's %.3f ms", onCoils.count,
                    Self.startRounds / 2, coilsMeasurement.percentile(99), motorsMeasurement.percentile(99))),
        ]
    }

    // MARK: Sharpness and envelope over the corpus

    /// The pattern's sharpness at `time`: the mean sharpness of the haptic events sounding then (a transient for
    /// 40 ms after its time), weighted by their intensity; nil when none sounds.
    static func referenceSharpness(_ pattern: HapticPattern, _ controls: PatternControls, at time: Double) -> Double? {
        var weighted = 0.0
        var weights = 0.0
        for event in pattern.events where event.isHaptic {
            let end = event.relativeTime + (event.type == .hapticTransient ? window : event.effectiveDuration)
            guard event.relativeTime <= time, time < end else { continue }
            let weight = event.value(of: .hapticIntensity) ?? 1
            weighted += weight * controls.sharpness(of: event, at: time)
            weights += weight
        }
        return weights > 0 ? weighted / weights : nil
    }

    func corpus(_ device: any EmulatedDevice, coils: HapticEngine, motors: HapticEngine) async throws
        -> [BenchmarkResult]
    {
        let patterns = try RenderingCorpus.load()
        var coilPairs: [(Double, Double)] = []
        var motorPairs: [(Double, Double)] = []
        var coilSquares = 0.0, motorSquares = 0.0, envelopeSamples = 0
        var coilErrors: [Double] = [], motorErrors: [Double] = []
        for pattern in patterns {
            let renderer = PatternRenderer(profile: motors.renderProfile)
            let timeline = renderer.render(pattern)
            guard timeline.endTime > 0 else { continue }
            let seconds = min(timeline.endTime, Self.corpusSeconds)
            let envelope = renderer.intensityEnvelope(pattern)
            let controls = PatternControls(pattern: pattern)

            // The voice coils: what the pad played, by window and by millisecond.
            let (coilOrigin, coilRecords) = try await played(pattern, on: coils, device, seconds: seconds)
            let waveform = VoiceCoilPlayback(records: coilRecords).waveform(
                from: coilOrigin, through: coilOrigin + seconds)
            let coilWindows = waveform.windows(.left, length: Self.window)
            // The motors: the levels the driver sent, held until the next report.
            let (motorOrigin, motorRecords) = try await played(pattern, on: motors, device, seconds: seconds)
            let steps = motorRecords.filter { $0.event == .output && $0.waveform == nil }.map {
                (time: $0.time.seconds - motorOrigin, strong: $0.strong ?? 0, weak: $0.weak ?? 0)
            }
            func motorLevels(at time: Double) -> (strong: Double, weak: Double) {
                steps.last { $0.time <= time }.map { ($0.strong, $0.weak) } ?? (0, 0)
            }

            for window in coilWindows {
                let middle = window.start - coilOrigin + Self.window / 2
                guard envelope.levels(at: middle).strong >= Self.soundingFloor,
                    let sharpness = Self.referenceSharpness(pattern, controls, at: middle),
                    let frequency = window.dominantFrequency, window.rms > 0.01
                else { continue }
                coilPairs.append((sharpness, log2(frequency)))
                // The motors over the same window: the weak (sharp) motor's share of the drive.
                let samples = (0..<8).map { motorLevels(at: middle - Self.window / 2 + Self.window * Double($0) / 8) }
                let strong = samples.reduce(0) { $0 + $1.strong }, weak = samples.reduce(0) { $0 + $1.weak }
                if strong + weak > 0.02 { motorPairs.append((sharpness, weak / (strong + weak))) }
            }

            // The envelope at 1 kHz: each path's level against the pattern's intensity. The coils' level is
            // their amplitude (the peak over one carrier period around the instant, at least 4 ms) brought back
            // through the felt-amplitude curve at the frequency they played. The instants just after a
            // transient are left out: there the paths differ by design (a motor's pulse is held while it spins
            // up, a coil's burst is two cycles), and the reference is the motors' (`intensityEnvelope`).
            var fileCoils = 0.0, fileMotors = 0.0, count = 0
            let left = waveform.left
            for time in Self.envelopeInstants(of: pattern, seconds: seconds) {
                count += 1
                let target = envelope.levels(at: time).strong
                let frequency =
                    coilWindows.last { $0.start - coilOrigin <= time }?.dominantFrequency
                    ?? SharpnessFrequencyMap.voiceCoil.frequency(sharpness: 0.5)
                let frame = Int(time * VoiceCoilPlayback.sampleRate)
                let half = Int(max(0.002, 0.5 / frequency) * VoiceCoilPlayback.sampleRate)
                let span = max(0, frame - half)..<min(left.count, frame + half)
                let amplitude = span.isEmpty ? 0 : Double(left[span].map(abs).max() ?? 0)
                let coilLevel = pow(amplitude, VibrationAmplitude.feltExponent(frequency: frequency))
                let motorLevel = motorLevels(at: time)
                fileCoils += pow(coilLevel - target, 2)
                fileMotors += pow(max(motorLevel.strong, motorLevel.weak) / motors.renderProfile.gain - target, 2)
            }
            coilSquares += fileCoils
            motorSquares += fileMotors
            envelopeSamples += count
            guard count > 0 else { continue }
            coilErrors.append((fileCoils / Double(count)).squareRoot())
            motorErrors.append((fileMotors / Double(count)).squareRoot())
        }
        let coilCorrelation = Self.correlation(coilPairs)
        let motorCorrelation = Self.correlation(motorPairs)
        let pooledCoils = (coilSquares / Double(max(envelopeSamples, 1))).squareRoot()
        let pooledMotors = (motorSquares / Double(max(envelopeSamples, 1))).squareRoot()
        let name = AHAPFixtures.corpusOrFixturesName
        return [
            BenchmarkResult(
                measurement: Measurement(
                    name: "sharpness tracking: correlation of the pattern's sharpness with what the pad received",
                    unit: "r", samples: [coilCorrelation]),
                baseline: "rumble motors (the weak motor's share)", ratio: coilCorrelation / motorCorrelation,
                note: String(
                    format:
                        "\(name): voice coils r = %.3f (log2 of the received frequency, %d windows of 40 ms); motors r = %.3f (%d windows)",
                    coilCorrelation, coilPairs.count, motorCorrelation, motorPairs.count)),
            BenchmarkResult(
                measurement: Measurement(
                    name: "intensity envelope error at 1 kHz, voice coils, RMS per file", unit: "rms",
                    samples: coilErrors),
                baseline: "rumble motors through the same pad", ratio: pooledCoils / pooledMotors,
                note: String(
                    format:
                        "\(name): pooled RMS voice coils %.4f vs motors %.4f, median per file %.4f vs %.4f, over %d files, first %.1f s of each, the 80 ms after each transient left out",
                    pooledCoils, pooledMotors, Measurement(name: "", unit: "", samples: coilErrors).percentile(50),
                    Measurement(name: "", unit: "", samples: motorErrors).percentile(50), coilErrors.count,
                    Self.corpusSeconds)),
        ]
    }

    /// The instants at which an envelope error is taken: every millisecond (`envelopeRate`) of the first `seconds`,
    /// but the `transientSpan` after each of `pattern`'s transients, where a path's pulse or burst differs from the
    /// envelope by design.
    static func envelopeInstants(of pattern: HapticPattern, seconds: Double) -> [Double] {
        let transients = pattern.events.filter { $0.type == .hapticTransient }.map(\.relativeTime)
        return (0..<Int(seconds * envelopeRate)).map { Double($0) / envelopeRate }.filter { time in
            !transients.contains { $0 <= time && time < $0 + transientSpan }
        }
    }

    /// Plays `pattern` on `engine` from a known instant for `seconds` (`playedRecords`).
    func played(_ pattern: HapticPattern, on engine: HapticEngine, _ device: any EmulatedDevice, seconds: Double)
        async throws -> (origin: Double, records: [PadRecord])
    {
        try await playedRecords(device, engine, seconds: seconds) { try engine.makeAdvancedPlayer(with: pattern) }
    }

    /// Pearson's correlation of the pairs; 0 for fewer than two or no spread.
    static func correlation(_ pairs: [(Double, Double)]) -> Double {
        guard pairs.count > 1 else { return 0 }
        let count = Double(pairs.count)
        let meanX = pairs.reduce(0) { $0 + $1.0 } / count, meanY = pairs.reduce(0) { $0 + $1.1 } / count
        var xy = 0.0, xx = 0.0, yy = 0.0
        for (x, y) in pairs {
            xy += (x - meanX) * (y - meanY)
            xx += (x - meanX) * (x - meanX)
            yy += (y - meanY) * (y - meanY)
        }
        return xx > 0 && yy > 0 ? xy / (xx * yy).squareRoot() : 0
    }

    // MARK: Underruns under load

    /// Seconds the soak runs: `HD_SOAK_SECONDS`, else ten minutes.
    static var soakSeconds: Double {
        ProcessInfo.processInfo.environment["HD_SOAK_SECONDS"].flatMap(Double.init) ?? 600
    }

    /// A pattern looped on the voice coils for `soakSeconds` beside two processes that never sleep: the
    /// writer's own count of underruns (a report that found the pad's queue empty mid-sound) and the emulated
    /// pad's (a report that arrived after its FIFO ran dry, whose arrival the emulator's own thread stamps, so
    /// its scheduling counts against the stream too).
    func underrunSoak() async throws -> [BenchmarkResult] {
        let device = try EmulatedModel.dualsenseBluetooth.start(logger: EngineBench.logger())
        defer { device.destroy() }
        let nodes = try device.waitUntilBound(timeout: 20)
        let coils = try engine(on: nodes.rumbleNode, actuators: .hd)
        defer { coils.stop() }
        let busy = try (0..<2).map { _ in try Subprocess(["sh", "-c", "while :; do :; done"]) }
        defer {
            for process in busy {
                process.signal(SIGKILL)
                _ = process.finish(timeout: 5)
            }
        }
        let pattern = try HapticPattern(contentsOf: URL(fileURLWithPath: "Haptics/capacitor_charge.ahap"))
        let player = try coils.makeAdvancedPlayer(with: pattern)
        player.loopEnabled = true
        let before = device.records().count
        let started = Clock.microseconds()
        try player.start(atTime: 0)
        try await Task.sleep(for: .seconds(Self.soakSeconds))
        try player.stop(atTime: 0)
        try await Task.sleep(for: .milliseconds(200))
        let counts = coils.hdStreamCounts ?? (0, 0)
        let playback = VoiceCoilPlayback(records: device.records().dropFirst(before))
        let silences = playback.underruns.map { $0.silence * 1000 }
        let queued = playback.played.map { $0.queued * 1000 }
        let elapsed = Double(Clock.microseconds() - started) / 1e6
        return [
            BenchmarkResult(
                measurement: Measurement(
                    name: "voice coils looped \(Int(Self.soakSeconds)) s beside 2 busy processes: underruns",
                    unit: "count", samples: [Double(counts.underruns)]),
                note: String(
                    format:
                        "the writer counted %d underruns in %d reports over %.0f s; the emulated pad's model %d (longest silence %.1f ms, queue p1 %.1f ms, p50 %.1f ms)",
                    counts.underruns, counts.reports, elapsed, playback.underruns.count, silences.max() ?? 0,
                    Measurement(name: "", unit: "", samples: queued).percentile(1),
                    Measurement(name: "", unit: "", samples: queued).percentile(50)))
        ]
    }
}
