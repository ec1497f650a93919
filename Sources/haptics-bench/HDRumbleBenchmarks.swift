// A Switch Pro Controller's HD rumble against hid-nintendo's own rumble, on the emulated pad the real driver binds:
// how well each carries a pattern's sharpness (the correlation of the pattern's sharpness with the frequency of
// the louder band the pad received, or with the weak motor's share on rumble, the measure the voice coils use),
// how close each plays its intensity envelope (against the same rumble sent on a fixed 50 ms tick, the per-driver
// baseline), and how long a start takes to reach the pad as a report on each path.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput

let hdRumbleKernelBenchmarks: [BenchmarkGroup] = [
    BenchmarkGroup(name: "HD rumble", needsKernel: true) { try await HDRumbleBench().run() }
]

struct HDRumbleBench {
    static let startRounds = 60

    func engine(on node: String, actuators: HapticActuators) throws -> HapticEngine {
        try VoiceCoilBench.engine(on: node, actuators: actuators, kind: .hdRumble)
    }

    func run() async throws -> [BenchmarkResult] {
        let device = try EmulatedModel.switchPro.start(logger: EngineBench.logger())
        defer { device.destroy() }
        let nodes = try device.waitUntilBound(timeout: 20)
        let hd = try engine(on: nodes.rumbleNode, actuators: .hd)
        defer { hd.stop() }
        let rumble = try engine(on: nodes.rumbleNode, actuators: .rumble)
        defer { rumble.stop() }
        var results = try await startLatency(device, hd: hd, rumble: rumble)
        results += try await sharpness(device, hd: hd, rumble: rumble)
        return results
    }

    /// The 0x10 reports among `records` that move an actuator.
    static func moving(_ records: some Sequence<PadRecord>) -> [PadRecord] {
        records.filter { record in
            guard let packet = record.hdRumble, record.report?.hasPrefix("10") == true else { return false }
            return !packet.isAtRest
        }
    }

    // MARK: Start to the pad

    /// A short tone started now, alternately on each path: from the call to the first report that moves an
    /// actuator. Each round waits for both paths to come to rest (the HD stream's reports at rest, the driver's
    /// five silent reports 50 ms apart).
    func startLatency(_ device: any EmulatedDevice, hd: HapticEngine, rumble: HapticEngine) async throws
        -> [BenchmarkResult]
    {
        let tone = AHAPFixtures.tone(seconds: 0.03)
        var onHD: [Double] = []
        var onRumble: [Double] = []
        for round in 0..<Self.startRounds {
            let isHD = round % 2 == 0
            let player = try (isHD ? hd : rumble).makePlayer(with: tone)
            let before = device.records().count
            let start = Clock.microseconds()
            try player.start(atTime: 0)
            try await Task.sleep(for: .milliseconds(400))
            let first = Self.moving(device.records().dropFirst(before)).first { $0.time.microseconds >= start }
            guard let first else { continue }
            let milliseconds = Double(first.time.microseconds - start) / 1000
            if isHD { onHD.append(milliseconds) } else { onRumble.append(milliseconds) }
        }
        guard !onHD.isEmpty, !onRumble.isEmpty else {
            throw VoiceCoilBench.Failure(description: "no start reached the pad")
        }
        let rumbleMeasurement = Measurement(
            name: "Switch rumble (hid-nintendo): start -> first report", unit: "ms", samples: onRumble)
        let hdMeasurement = Measurement(name: "Switch HD rumble: start -> first report", unit: "ms", samples: onHD)
        return [
            BenchmarkResult(
                measurement: rumbleMeasurement,
                note: "\(onRumble.count) of \(Self.startRounds / 2) starts seen, interleaved with HD rumble's"),
            BenchmarkResult(
                measurement: hdMeasurement, baseline: "Switch rumble (hid-nintendo): start -> first report",
                ratio: hdMeasurement.percentile(50) / rumbleMeasurement.percentile(50),
                note: String(
                    format: "%d of %d starts seen; p99 %.3f ms against the driver's %.3f ms", onHD.count,
                    Self.startRounds / 2, hdMeasurement.percentile(99), rumbleMeasurement.percentile(99))),
        ]
    }

    // MARK: Sharpness over the corpus

    func sharpness(_ device: any EmulatedDevice, hd: HapticEngine, rumble: HapticEngine) async throws
        -> [BenchmarkResult]
    {
        let patterns = try RenderingCorpus.load()
        var hdPairs: [(Double, Double)] = []
        var rumblePairs: [(Double, Double)] = []
        var spacing: [Double] = []
        var envelopeErrors = EnvelopeErrors()
        for pattern in patterns {
            let renderer = PatternRenderer(profile: rumble.renderProfile)
            let timeline = renderer.render(pattern)
            guard timeline.endTime > 0 else { continue }
            let seconds = min(timeline.endTime, VoiceCoilBench.corpusSeconds)
            let envelope = renderer.intensityEnvelope(pattern)
            let controls = PatternControls(pattern: pattern)

            // HD rumble: the frame in effect at each window's middle (the pad holds each until the next).
            let (hdOrigin, hdRecords) = try await VoiceCoilBench().played(pattern, on: hd, device, seconds: seconds)
            let playback = SwitchRumblePlayback(records: hdRecords)
            spacing += playback.intervals(from: hdOrigin, through: hdOrigin + seconds, reportID: 0x10)
            // hid-nintendo: each actuator at one amplitude in both bands, left for strong, right for weak.
            let (rumbleOrigin, rumbleRecords) = try await VoiceCoilBench().played(
                pattern, on: rumble, device, seconds: seconds)
            let rumblePlayback = SwitchRumblePlayback(records: rumbleRecords)
            // The driver's rumble again, with the envelope sent on a fixed 50 ms tick (the per-driver baseline).
            let (tickOrigin, tickRecords) = try await playedRecords(device, rumble, seconds: seconds) {
                try rumble.makeAdvancedPlayer(
                    timeline: FixedTickRenderer(profile: rumble.renderProfile).timeline(for: timeline))
            }
            let tickPlayback = SwitchRumblePlayback(records: tickRecords)
            // The driver ends its rumble with five reports at rest 50 ms apart: let them pass before the next HD
            // run, whose report spacing is measured.
            try await Task.sleep(for: .milliseconds(400))
            envelopeErrors.add(
                pattern, envelope: envelope, seconds: seconds, gain: rumble.renderProfile.gain,
                hd: { playback.frame(at: hdOrigin + $0)?.packet },
                rumble: { rumblePlayback.frame(at: rumbleOrigin + $0)?.packet },
                tick: { tickPlayback.frame(at: tickOrigin + $0)?.packet })

            var time = VoiceCoilBench.window / 2
            while time < seconds {
                defer { time += VoiceCoilBench.window }
                guard envelope.levels(at: time).strong >= VoiceCoilBench.soundingFloor,
                    let sharpness = VoiceCoilBench.referenceSharpness(pattern, controls, at: time)
                else { continue }
                if let frame = playback.frame(at: hdOrigin + time)?.packet, !frame.isAtRest {
                    let left = frame.left
                    let louder = left.lowAmplitude >= left.highAmplitude ? left.lowFrequency : left.highFrequency
                    hdPairs.append((sharpness, log2(louder)))
                }
                if let frame = rumblePlayback.frame(at: rumbleOrigin + time)?.packet {
                    let strong = frame.left.lowAmplitude, weak = frame.right.highAmplitude
                    if strong + weak > 0.02 { rumblePairs.append((sharpness, weak / (strong + weak))) }
                }
            }
        }
        let hdCorrelation = VoiceCoilBench.correlation(hdPairs)
        let rumbleCorrelation = VoiceCoilBench.correlation(rumblePairs)
        let name = AHAPFixtures.corpusOrFixturesName
        let spaced = Measurement(name: "", unit: "", samples: spacing.map { $0 * 1000 })
        return [
            BenchmarkResult(
                measurement: Measurement(
                    name:
                        "Switch sharpness tracking: correlation of the pattern's sharpness with what the pad received",
                    unit: "r", samples: [hdCorrelation]),
                baseline: "hid-nintendo's rumble (the weak motor's share)", ratio: hdCorrelation / rumbleCorrelation,
                note: String(
                    format:
                        "\(name): HD rumble r = %.3f (log2 of the louder band's frequency, %d windows of 40 ms); "
                        + "hid-nintendo r = %.3f (%d windows; its bands stay at 160 and 320 Hz); HD reports %.1f ms "
                        + "apart at p1, %.1f at p50",
                    hdCorrelation, hdPairs.count, rumbleCorrelation, rumblePairs.count, spaced.percentile(1),
                    spaced.percentile(50))),
            envelopeErrors.result(corpus: name),
        ]
    }
}

/// The intensity envelope error at 1 kHz of three ways to play the corpus on a Switch pad, as the voice coils'
/// bench measures it: HD rumble (each frame's bands brought back through the felt-amplitude curve at their
/// frequencies, `feltLevel`), hid-nintendo's rumble as the engine plans it, and the same
/// rumble sent on a fixed 50 ms tick (the louder motor, over the profile's gain). The 80 ms after each transient
/// are left out: there the paths differ by design. No lag is fitted: each path's timing counts.
struct EnvelopeErrors {
    private var squares = (hd: 0.0, rumble: 0.0, tick: 0.0)
    private var samples = 0
    private var perFile: [Double] = []
    private var rumblePerFile: [Double] = []
    private var tickPerFile: [Double] = []

    mutating func add(
        _ pattern: HapticPattern, envelope: MotorTimeline, seconds: Double, gain: Double,
        hd: (Double) -> SwitchRumblePacket?, rumble: (Double) -> SwitchRumblePacket?,
        tick: (Double) -> SwitchRumblePacket?
    ) {
        var file = (hd: 0.0, rumble: 0.0, tick: 0.0)
        var count = 0
        for time in VoiceCoilBench.envelopeInstants(of: pattern, seconds: seconds) {
            count += 1
            let target = envelope.levels(at: time).strong
            file.hd += pow(Self.feltLevel(hd(time)) - target, 2)
            file.rumble += pow(Self.motorLevel(rumble(time)) / gain - target, 2)
            file.tick += pow(Self.motorLevel(tick(time)) / gain - target, 2)
        }
        guard count > 0 else { return }
        squares.hd += file.hd
        squares.rumble += file.rumble
        squares.tick += file.tick
        samples += count
        perFile.append((file.hd / Double(count)).squareRoot())
        rumblePerFile.append((file.rumble / Double(count)).squareRoot())
        tickPerFile.append((file.tick / Double(count)).squareRoot())
    }

    /// The level an HD rumble frame is felt at: each band through the felt-amplitude curve at its frequency, the
    /// two bands of an actuator added (the renderer puts voices of different sharpness in different bands so that
    /// both are felt, as the envelope adds their levels), the louder actuator.
    static func feltLevel(_ packet: SwitchRumblePacket?) -> Double {
        guard let packet, !packet.isAtRest else { return 0 }
        func felt(_ frequency: Double, _ amplitude: Double) -> Double {
            amplitude > 0 ? pow(amplitude, VibrationAmplitude.feltExponent(frequency: frequency)) : 0
        }
        return [packet.left, packet.right].map { actuator in
            min(
                1,
                felt(actuator.lowFrequency, actuator.lowAmplitude)
                    + felt(actuator.highFrequency, actuator.highAmplitude))
        }.max() ?? 0
    }

    /// The louder motor of a frame hid-nintendo built for FF_RUMBLE (strong on the left actuator's low band, weak
    /// on the right's high band, amplitude in proportion to magnitude); a frame the pad ignores plays as rest.
    static func motorLevel(_ packet: SwitchRumblePacket?) -> Double {
        guard let packet, !packet.isAtRest else { return 0 }
        return max(packet.left.lowAmplitude, packet.right.highAmplitude)
    }

    func result(corpus name: String) -> BenchmarkResult {
        let pooled = { (sum: Double) in (sum / Double(max(samples, 1))).squareRoot() }
        let median = { (errors: [Double]) in Measurement(name: "", unit: "", samples: errors).percentile(50) }
        return BenchmarkResult(
            measurement: Measurement(
                name: "Switch HD rumble: intensity envelope error at 1 kHz, RMS per file", unit: "rms",
                samples: perFile),
            baseline: "50 ms tick through hid-nintendo's rumble", ratio: pooled(squares.hd) / pooled(squares.tick),
            note: String(
                format:
                    "\(name): pooled RMS HD rumble %.4f, hid-nintendo's rumble as planned %.4f (%.3fx the tick), "
                    + "the tick %.4f; median per file %.4f, %.4f, %.4f; over %d files, first %.1f s of each, the 80 "
                    + "ms after each transient left out, no lag fitted",
                pooled(squares.hd), pooled(squares.rumble), pooled(squares.rumble) / pooled(squares.tick),
                pooled(squares.tick), median(perFile), median(rumblePerFile), median(tickPerFile), perFile.count,
                VoiceCoilBench.corpusSeconds))
    }
}
