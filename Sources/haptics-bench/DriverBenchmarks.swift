// Per driver, measured on an emulated controller that the kernel's own driver binds (`haptics emulate`): how
// long an update takes to reach the wire, how fast updates can come before the driver coalesces them, what it
// does with gain, effect length and FF_PERIODIC, and how faithfully the device's motors follow the corpus,
// against a renderer on a fixed 50 ms tick played through the same device in the same run.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import LinuxHaptics
import LinuxInput
import Logging

/// One group per rumble model, so `make bench "Driver dualsense"` runs one (the PID joystick has no rumble motors).
let driverKernelBenchmarks: [BenchmarkGroup] = EmulatedModel.allCases.filter(\.hasRumbleMotors).map { model in
    BenchmarkGroup(name: "Driver \(model.rawValue)", needsKernel: true) { try await DriverBench(model: model).run() }
}

struct DriverBench {
    let model: EmulatedModel

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Updates are this far apart when latency is measured: longer than any driver needs to send one (an update
    /// in place then a play makes ff-memless call the driver twice; hid-nintendo queues a frame for each and
    /// sends one per 30 ms), so each update is measured on its own and not behind a backlog.
    static let latencySpacing = Duration.milliseconds(100)
    /// Between phases, long enough for a driver's queue to drain.
    static let drain = Duration.milliseconds(400)
    static let latencyRounds = 100
    /// Update intervals of the coalescing sweep, in milliseconds; 0 is back to back (the writes only yield).
    static let sweepIntervals = [0, 2, 5, 10, 20, 40, 70]
    static let sweepRounds = 40
    /// Each corpus pattern is played for at most this long (twice: ours and the tick baseline).
    static let fidelitySeconds = 1.0
    /// A rate is useful while at least this share of its updates reaches the wire.
    static let usefulShare = 0.9

    func run() async throws -> [BenchmarkResult] {
        let device = try model.start(logger: EngineBench.logger())
        defer { device.destroy() }
        let nodes = try device.waitUntilBound(timeout: 20)
        var results: [BenchmarkResult] = []
        results.append(try await latency(device, nodes))
        try await Task.sleep(for: Self.drain)
        results.append(contentsOf: try await sweep(device, nodes))
        try await Task.sleep(for: Self.drain)
        results.append(try await behaviour(device, nodes))
        try await Task.sleep(for: Self.drain)
        results.append(contentsOf: try await fidelity(device, nodes, profile: nil))
        if let alternative = Self.alternativeProfile(for: model) {
            try await Task.sleep(for: Self.drain)
            results.append(contentsOf: try await fidelity(device, nodes, profile: alternative))
        }
        return results
    }

    // MARK: Update -> report

    /// Two levels the controller can tell apart, alternated so that every update changes the motors.
    func level(_ index: Int) -> (strong: Double, weak: Double) {
        index % 2 == 0 ? (0.7, 0.4) : (0.3, 0.15)
    }

    func matches(_ record: PadRecord, _ target: (strong: Double, weak: Double)) -> Bool {
        let tolerance = model.motorStep * 1.5
        return abs((record.strong ?? -1) - target.strong) <= tolerance
            && abs((record.weak ?? -1) - target.weak) <= tolerance
    }

    /// Sends `count` updates `spacing` apart (update in place, then play: the engine's primitive) and returns
    /// when each started and what it asked for.
    func sendUpdates(
        _ nodes: EmulatedDeviceNodes, count: Int, spacing: Duration
    ) async throws -> [(start: Int64, target: (strong: Double, weak: Double))] {
        let event = try EventDevice(node: nodes.rumbleNode, logger: EngineBench.logger())
        defer { event.close() }
        let effect = try event.uploadEffect(.rumble(strong: 0, weak: 0, lengthMilliseconds: 0))
        var sent: [(start: Int64, target: (strong: Double, weak: Double))] = []
        for index in 0..<count {
            let target = level(index)
            let start = Clock.microseconds()
            try effect.update(.rumble(strong: target.strong, weak: target.weak, lengthMilliseconds: 0, id: effect.id))
            try effect.play()
            sent.append((start, target))
            if spacing > .zero { try await Task.sleep(for: spacing) } else { await Task.yield() }
        }
        try effect.stop()
        try await Task.sleep(for: .milliseconds(100))
        return sent
    }

    /// For each update, the first report carrying its levels before the next update started.
    func arrivals(
        _ sent: [(start: Int64, target: (strong: Double, weak: Double))], _ records: [PadRecord]
    ) -> [Double?] {
        sent.enumerated().map { index, update in
            let end = index + 1 < sent.count ? sent[index + 1].start : Int64.max
            let hit = records.first {
                $0.event == .output && $0.time.microseconds >= update.start && $0.time.microseconds < end
                    && matches($0, update.target)
            }
            return hit.map { Double($0.time.microseconds - update.start) / 1000 }
        }
    }

    func latency(_ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes) async throws -> BenchmarkResult {
        let before = device.records().count
        let sent = try await sendUpdates(nodes, count: Self.latencyRounds, spacing: Self.latencySpacing)
        let found = arrivals(sent, Array(device.records().dropFirst(before)))
        let samples = found.compactMap { $0 }
        guard !samples.isEmpty else { throw Failure(description: "\(model.rawValue): no update reached the wire") }
        return BenchmarkResult(
            measurement: Measurement(name: "\(model.rawValue): update -> output report", unit: "ms", samples: samples),
            note: "\(samples.count) of \(sent.count) updates seen on the wire, 100 ms apart")
    }

    // MARK: Coalescing

    func sweep(_ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes) async throws -> [BenchmarkResult] {
        var shares: [(interval: Int, share: Double, reports: Int)] = []
        for interval in Self.sweepIntervals {
            let before = device.records().count
            let sent = try await sendUpdates(nodes, count: Self.sweepRounds, spacing: .milliseconds(interval))
            try await Task.sleep(for: Self.drain)
            let records = Array(device.records().dropFirst(before))
            let arrived = arrivals(sent, records).compactMap { $0 }.count
            shares.append(
                (interval, Double(arrived) / Double(sent.count), records.filter { $0.event == .output }.count))
        }
        // The shortest spaced interval at which (nearly) every update still reaches the wire; back-to-back
        // writes show whether the driver coalesces, but name no rate.
        let spaced = shares.filter { $0.interval > 0 }
        let useful = spaced.filter { $0.share >= Self.usefulShare }.map(\.interval).min()
        let table = shares.map { String(format: "%d ms: %.0f%% (%d reports)", $0.interval, $0.share * 100, $0.reports) }
        let rate: String
        switch useful {
        case nil: rate = "below every rate tried"
        case spaced.first?.interval:
            rate = "at least \(1000 / (useful ?? 1)) Hz (every \(useful ?? 0) ms, the fastest spaced rate tried)"
        case let interval?: rate = "\(1000 / interval) Hz (every \(interval) ms)"
        }
        return [
            BenchmarkResult(
                measurement: Measurement(
                    name: "\(model.rawValue): share of updates on the wire", unit: "share", samples: shares.map(\.share)
                ),
                note: table.joined(separator: ", ") + "; highest useful rate: " + rate)
        ]
    }

    // MARK: Gain, length, periodic

    /// What the driver does with a half gain, a 100 ms effect and a periodic effect (ff-memless, for all of
    /// ours, turns a periodic into rumble of its magnitude on both motors). Each is read from the reports that
    /// follow the effect's first non-zero one, so a driver that queues (hid-nintendo) is measured from when its
    /// frames start, not from stale ones still in its queue.
    func behaviour(_ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes) async throws -> BenchmarkResult {
        let event = try EventDevice(node: nodes.rumbleNode, logger: EngineBench.logger())
        defer { event.close() }
        var notes: [String] = []
        notes.append(try await halfGainNote(device, event))
        try await Task.sleep(for: Self.drain)
        notes.append(try await effectLengthNote(device, event))
        try await Task.sleep(for: Self.drain)
        notes.append(await periodicNote(device, event))
        return BenchmarkResult(
            measurement: Measurement(name: "\(model.rawValue): driver behaviour", unit: "-", samples: []),
            note: notes.joined(separator: "; "))
    }

    /// Gain: the strongest level a full rumble reaches at half gain. Leaves the gain at 1 again.
    func halfGainNote(_ device: any EmulatedDevice, _ event: EventDevice) async throws -> String {
        try event.setGain(0.5)
        let before = device.records().count
        let full = try event.uploadEffect(.rumble(strong: 1, weak: 1, lengthMilliseconds: 0))
        try full.play()
        try await Task.sleep(for: .milliseconds(300))
        let peak = device.records().dropFirst(before).filter { $0.event == .output }.map {
            max($0.strong ?? 0, $0.weak ?? 0)
        }.max()
        let note = String(format: "gain 0.5 on a full rumble: motors at %.3f", peak ?? .nan)
        try full.stop()
        try event.setGain(1)
        return note
    }

    /// Length: from a 100 ms effect's first report to the first report at rest after it.
    func effectLengthNote(_ device: any EmulatedDevice, _ event: EventDevice) async throws -> String {
        let before = device.records().count
        let short = try event.uploadEffect(.rumble(strong: 0.8, weak: 0.8, lengthMilliseconds: 100))
        try short.play()
        try await Task.sleep(for: .milliseconds(500))
        let outputs = device.records().dropFirst(before).filter { $0.event == .output }
        guard let on = outputs.firstIndex(where: { ($0.strong ?? 0) > 0 }),
            let off = outputs[on...].first(where: { $0.strong == 0 && $0.weak == 0 })
        else {
            return "a 100 ms effect did not both start and end within 500 ms"
        }
        let held = Double(off.time.microseconds - outputs[on].time.microseconds) / 1000
        return String(format: "a 100 ms effect drives the motors for %.1f ms", held)
    }

    /// Periodic: the distinct levels a sine of magnitude 0x4000 produces, or why the driver refused it.
    func periodicNote(_ device: any EmulatedDevice, _ event: EventDevice) async -> String {
        let before = device.records().count
        do {
            let sine = try event.uploadEffect(
                ForceFeedbackEffect(
                    id: -1,
                    kind: .periodic(
                        waveform: .sine, period: 50, magnitude: 0x4000, offset: 0, phase: 0,
                        envelope: ForceFeedbackEnvelope()),
                    replayLength: 200))
            try sine.play()
            try await Task.sleep(for: .milliseconds(500))
            let levels = device.records().dropFirst(before).filter { $0.event == .output }.map {
                String(format: "%.2f/%.2f", $0.strong ?? 0, $0.weak ?? 0)
            }
            return "FF_PERIODIC sine 0x4000 for 200 ms, levels seen: "
                + (levels.isEmpty ? "no report" : Array(Set(levels)).sorted().joined(separator: " "))
        } catch {
            return "FF_PERIODIC refused: \(error)"
        }
    }

    /// A second profile to compare through the same device, where the choice of the profile's values is open:
    /// the Switch's with twice the interval (one change per two HD rumble frames, which is what an update in
    /// place plus a play costs there).
    static func alternativeProfile(for model: EmulatedModel) -> RenderProfile? {
        guard model == .switchPro else { return nil }
        var profile = RenderProfile.switchPro
        profile.name = "switch, 60 ms"
        profile.minimumUpdateInterval = 0.060
        profile.transientPulse = TransientPulse(length: 0.120)
        return profile
    }

    // MARK: Device-observed fidelity

    /// Device-observed fidelity with the profile the engine chooses for the device, or with `profile`, two ways:
    /// the louder motor against the pattern's intensity envelope (every voice on one motor), and each motor
    /// against the pattern's render for the profile (the measure of the side-by-side and planner benchmarks).
    func fidelity(
        _ device: any EmulatedDevice, _ nodes: EmulatedDeviceNodes, profile chosen: RenderProfile?
    ) async throws -> [BenchmarkResult] {
        let corpus = try RenderingCorpus.load()
        var options = HapticEngineOptions()
        options.renderProfile = chosen
        let engine = HapticEngine(
            output: .device(.node(nodes.rumbleNode)), options: options, logger: EngineBench.logger())
        try engine.start()
        defer { engine.stop() }
        let profile = engine.renderProfile
        let renderer = PatternRenderer(profile: profile)
        var envelope = FidelityTally(), motors = FidelityTally()
        for pattern in corpus {
            let timeline = renderer.render(pattern)
            guard timeline.endTime > 0 else { continue }
            let seconds = min(timeline.endTime, Self.fidelitySeconds)
            let intensity = renderer.intensityEnvelope(pattern)
            let ours = try await deviceOutput(device, engine, seconds: seconds) {
                try engine.makeAdvancedPlayer(with: pattern)
            }
            let tick = try await deviceOutput(device, engine, seconds: seconds) {
                try engine.makeAdvancedPlayer(timeline: FixedTickRenderer(profile: profile).timeline(for: timeline))
            }
            let count = Int((seconds + FixedTickRenderer.tick) * FidelityFigures.sampleRate)
            let levels = { (source: MotorTimeline, time: Double) -> MotorMagnitudes in
                time <= seconds ? source.levels(at: time) : .off
            }
            envelope.add(
                target: Self.targetSamples(count: count) { levels(intensity, $0).strong * profile.gain },
                ours: { max(ours($0).strong, ours($0).weak) }, tick: { max(tick($0).strong, tick($0).weak) })
            motors.add(
                target: Self.targetSamples(count: count) { levels(timeline, $0).strong * profile.gain },
                ours: { ours($0).strong }, tick: { tick($0).strong })
            motors.add(
                target: Self.targetSamples(count: count) { levels(timeline, $0).weak * profile.gain },
                ours: { ours($0).weak }, tick: { tick($0).weak }, sameFile: true)
        }
        return [
            envelope.result(
                name: "\(model.rawValue): device-observed fidelity RMS per file, profile \(profile.name)",
                what: "louder motor against the intensity envelope"),
            motors.result(
                name:
                    "\(model.rawValue): device-observed fidelity of both motors RMS per file, profile \(profile.name)",
                what: "each motor against the render"),
        ]
    }

    static func targetSamples(count: Int, _ level: (Double) -> Double) -> [Double] {
        (0..<count).map { level(Double($0) / FidelityFigures.sampleRate) }
    }

    /// The squared errors of ours and the tick against a target, over files, as played and with each file's
    /// output moved by the lag that fits it best.
    struct FidelityTally {
        var ours = 0.0, tick = 0.0, alignedOurs = 0.0, alignedTick = 0.0
        var samples = 0
        var oursLags: [Int] = [], tickLags: [Int] = []
        var perFile: [Double] = []
        var fileSquares = 0.0, fileSamples = 0

        /// One file's target and outputs; `sameFile` adds another motor of the file just added (its samples and
        /// squares join that file's, its lags are not counted twice).
        mutating func add(
            target: [Double], ours oursLevel: (Double) -> Double, tick tickLevel: (Double) -> Double,
            sameFile: Bool = false
        ) {
            let early = DriverBench.earliestAlignment
            let count = target.count + DriverBench.longestAlignment
            let oursLevels = DriverBench.sampled(oursLevel, count: count, before: early)
            let tickLevels = DriverBench.sampled(tickLevel, count: count, before: early)
            let fileOurs = DriverBench.squaredError(oursLevels, target, lag: 0, before: early)
            ours += fileOurs
            tick += DriverBench.squaredError(tickLevels, target, lag: 0, before: early)
            let oursBest = DriverBench.bestLag(oursLevels, target, before: early)
            let tickBest = DriverBench.bestLag(tickLevels, target, before: early)
            alignedOurs += oursBest.squares
            alignedTick += tickBest.squares
            samples += target.count
            if sameFile, !perFile.isEmpty {
                fileSquares += fileOurs
                fileSamples += target.count
                perFile[perFile.count - 1] = (fileSquares / Double(fileSamples)).squareRoot()
            } else {
                oursLags.append(oursBest.lag)
                tickLags.append(tickBest.lag)
                fileSquares = fileOurs
                fileSamples = target.count
                perFile.append((fileOurs / Double(max(target.count, 1))).squareRoot())
            }
        }

        func pooled(_ squares: Double) -> Double { (squares / Double(max(samples, 1))).squareRoot() }

        func result(name: String, what: String) -> BenchmarkResult {
            BenchmarkResult(
                measurement: Measurement(name: name, unit: "rms", samples: perFile),
                baseline: "50 ms tick through the same device", ratio: pooled(ours) / pooled(tick),
                note: String(
                    format:
                        "\(what): pooled RMS ours %.4f vs tick %.4f over %d \(AHAPFixtures.corpusOrFixturesName) "
                        + "files, first %.1f s of each; each file's output moved by the lag that fits it best (-%d to "
                        + "%d ms, the driver's latency left out): ours %.4f vs tick %.4f, ratio %.3f; that lag's median "
                        + "ours %.1f ms, tick %.1f ms",
                    pooled(ours), pooled(tick), perFile.count, DriverBench.fidelitySeconds,
                    DriverBench.earliestAlignment, DriverBench.longestAlignment, pooled(alignedOurs),
                    pooled(alignedTick), pooled(alignedOurs) / pooled(alignedTick),
                    PeerMetrics.median(oursLags.map(Double.init)), PeerMetrics.median(tickLags.map(Double.init))))
        }
    }

    /// The longest lag, in samples (milliseconds), the aligned figure tries: beyond hid-nintendo's 45-60 ms.
    static let longestAlignment = 100
    /// The longest lead, in samples, it tries: an output written ahead of its driver's latency may land early.
    static let earliestAlignment = 50

    /// `level` at every sample time from `before` samples before 0.
    static func sampled(_ level: (Double) -> Double, count: Int, before: Int = 0) -> [Double] {
        (-before..<count).map { level(Double($0) / FidelityFigures.sampleRate) }
    }

    /// The squared error summed over `target`'s samples of `levels` (which begin `before` samples before the
    /// target) read `lag` samples later.
    static func squaredError(_ levels: [Double], _ target: [Double], lag: Int, before: Int = 0) -> Double {
        target.indices.reduce(0) { sum, index in
            let at = index + lag + before
            let level = levels.indices.contains(at) ? levels[at] : 0
            return sum + (level - target[index]) * (level - target[index])
        }
    }

    /// The least squared error over every lag from 0 to `longest` samples.
    static func bestAligned(_ levels: [Double], _ target: [Double], longest: Int = longestAlignment) -> Double {
        bestLag(levels, target, longest: longest).squares
    }

    /// The lag from `-before` to `longest` samples whose squared error is least (the earliest of equals), and that
    /// error; `levels` begin `before` samples before the target.
    static func bestLag(_ levels: [Double], _ target: [Double], before: Int = 0, longest: Int = longestAlignment)
        -> (lag: Int, squares: Double)
    {
        (-before...longest).map { (lag: $0, squares: squaredError(levels, target, lag: $0, before: before)) }
            .min { $0.squares < $1.squares } ?? (0, 0)
    }

    /// Plays what `makePlayer` makes from a known instant, and returns the device's motors over time (seconds
    /// after that instant), as decoded from the reports its driver sent.
    func deviceOutput(
        _ device: any EmulatedDevice, _ engine: HapticEngine, seconds: Double,
        _ makePlayer: () throws -> any HapticAdvancedPatternPlayer
    ) async throws -> @Sendable (Double) -> MotorMagnitudes {
        let (origin, records) = try await playedRecords(device, engine, seconds: seconds, makePlayer)
        // Engine times are CLOCK_MONOTONIC seconds, the clock of the records.
        let originMicroseconds = Int64((origin * 1e6).rounded())
        let steps = records.filter { $0.event == .output }
            .map {
                (
                    time: Double($0.time.microseconds - originMicroseconds) / 1e6,
                    levels: MotorMagnitudes(strong: $0.strong ?? 0, weak: $0.weak ?? 0)
                )
            }
        return { time in steps.last { $0.time <= time }?.levels ?? .off }
    }
}

/// Plays what `makePlayer` makes from a known instant (100 ms ahead: later than any device's output latency, so
/// that its first change too goes out ahead of its time) for `seconds`, and returns that instant (engine
/// time, `CLOCK_MONOTONIC` seconds, the records' clock) and what the device recorded meanwhile.
func playedRecords(
    _ device: any EmulatedDevice, _ engine: HapticEngine, seconds: Double,
    _ makePlayer: () throws -> any HapticAdvancedPatternPlayer
) async throws -> (origin: Double, records: [PadRecord]) {
    let before = device.records().count
    let player = try makePlayer()
    let origin = engine.currentTime + 0.1
    try player.start(atTime: origin)
    try player.stop(atTime: origin + seconds)
    try await Task.sleep(for: .seconds(seconds + 0.25))
    return (origin, Array(device.records().dropFirst(before)))
}

extension FixedTickRenderer {
    /// The tick renderer's commands as a timeline of held levels, for the engine to play like any other.
    func timeline(for timeline: MotorTimeline) -> MotorTimeline {
        let commands = commands(for: timeline)
        return MotorTimeline(
            segments: commands.map { command in
                MotorTimeline.Segment(
                    start: command.time, end: command.time + Self.tick, startLevels: command.levels,
                    endLevels: command.levels)
            })
    }
}
