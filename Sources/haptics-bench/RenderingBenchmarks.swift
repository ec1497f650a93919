// Rendering (issue 5): render time over the corpus, device commands per second of pattern, and the fidelity
// fidelity figure — the RMS error of what the device receives against the pattern's intensity envelope,
// sampled at 1 kHz, ours against a renderer that updates on a fixed 50 ms tick (gilrs, ff-memless envelopes).
import AHAPFiles
import Foundation
import HapticRendering
import HapticTestDevices

let renderingBenchmarks = BenchmarkGroup(name: "Rendering") {
    let corpus = try RenderingCorpus.load()
    var results: [BenchmarkResult] = []

    // Render time: the whole corpus, pattern -> timeline -> commands, against the tick renderer's pass.
    let profile = RenderProfile.genericRumble
    let renderer = PatternRenderer(profile: profile)
    let planner = DeviceCommandPlanner(profile: profile)
    let tick = FixedTickRenderer(profile: profile)
    let iterations = 20
    let baseline = measure(
        "tick renderer, \(AHAPFixtures.corpusOrFixturesName) pass (\(corpus.count) files)", iterations: iterations
    ) {
        for pattern in corpus { _ = tick.commands(for: renderer.render(pattern)) }
    }
    let ours = measure(
        "render + commands, \(AHAPFixtures.corpusOrFixturesName) pass (\(corpus.count) files)", iterations: iterations
    ) {
        for pattern in corpus { _ = planner.commands(for: renderer.render(pattern)) }
    }
    let renderOnly = measure("render only, \(AHAPFixtures.corpusOrFixturesName) pass", iterations: iterations) {
        for pattern in corpus { _ = renderer.render(pattern) }
    }
    results.append(BenchmarkResult(measurement: baseline))
    results.append(
        BenchmarkResult(
            measurement: ours, baseline: baseline.name, ratio: ours.percentile(50) / baseline.percentile(50),
            note: "the baseline also renders the timeline it samples"))
    results.append(BenchmarkResult(measurement: renderOnly))
    results += VoiceCoilSeek.results()
    results += OverlappingMix.results()

    let totalSeconds = corpus.reduce(0) { $0 + RenderingCorpus.span(of: renderer.render($1)) }
    for profile in RenderProfile.builtIn {
        let figures = FidelityFigures(corpus: corpus, profile: profile)
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "commands/s of pattern, \(profile.name)", unit: "cmd/s", samples: figures.ourRates),
                baseline: "50 ms tick", ratio: figures.ourCommands / figures.tickCommands,
                note: String(
                    format: "\(AHAPFixtures.corpusOrFixturesName): %.1f vs %.1f cmd/s over %.1f s",
                    figures.ourCommands / totalSeconds,
                    figures.tickCommands / totalSeconds, totalSeconds)))
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "fidelity RMS per file, \(profile.name)", unit: "rms", samples: figures.ourErrors),
                baseline: "50 ms tick (pooled RMS)", ratio: figures.pooledOurs / figures.pooledTick,
                note: String(
                    format: "pooled RMS ours %.4f vs tick %.4f; per-file mean ratio %.3f; target <= 0.333",
                    figures.pooledOurs, figures.pooledTick, figures.meanFileRatio)))
    }
    return results
}

/// What mixing many overlapping players costs, as the engine mixes them on every start (`MotorTimeline.mixed`,
/// after each player's part is cut out at its own breakpoints): N plays of the busy second of `EngineBench`, each
/// 10 ms after the last, against summing every play at every breakpoint of the mix (`SummedAtEveryBreakpoint`),
/// which the engine did until 7 December.
enum OverlappingMix {
    static func results() -> [BenchmarkResult] {
        let busy = PatternRenderer(profile: .genericRumble).render(EngineBench.busyPattern())
        return [32, 200].flatMap { count -> [BenchmarkResult] in
            let plays = (0..<count).map { busy.shifted(by: Double($0) * 0.01) }
            let iterations = count > 100 ? 5 : 20
            let baseline = measure(
                "mix of \(count) overlapping plays, summed at every breakpoint", iterations: iterations
            ) {
                _ = SummedAtEveryBreakpoint.mixed(plays)
            }
            let ours = measure("mix of \(count) overlapping plays, pairwise tree", iterations: iterations) {
                _ = MotorTimeline.mixed(plays)
            }
            return [
                BenchmarkResult(measurement: baseline),
                BenchmarkResult(
                    measurement: ours, baseline: baseline.name, ratio: ours.percentile(50) / baseline.percentile(50),
                    note: "\(MotorTimeline.mixed(plays).segments.count) segments mixed; the engine mixes on every start"
                ),
            ]
        }
    }
}

/// What placing a voice-coil cursor part-way into a long event costs, against rendering one 10 ms period of it: a
/// player sought, or sent a control (its waveform is picked up again where it is), places one for each carrier
/// sounding there. The event is 30 s long at 48 kHz (a DualSense over USB); one case holds its sharpness, the
/// other has it changed by a parameter every 100 ms.
enum VoiceCoilSeek {
    static let sampleRate = 48_000.0
    static let offset = 20.0

    static func results() -> [BenchmarkResult] {
        let event = HapticEvent(
            type: .hapticContinuous,
            parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                HapticEventParameter(parameterID: .hapticSharpness, value: 0.5),
            ], relativeTime: 0, duration: 30)
        let steps = (0..<300).map {
            HapticDynamicParameter(
                parameterID: .hapticSharpnessControl, value: Double($0 % 5) / 10 - 0.2, relativeTime: Double($0) / 10)
        }
        var results: [BenchmarkResult] = []
        for (name, parameters) in [("steady sharpness", [HapticDynamicParameter]()), ("sharpness every 100 ms", steps)]
        {
            let renderer = WaveformRenderer(
                pattern: HapticPattern(events: [event], parameters: parameters), sampleRate: sampleRate)
            let frame = Int(offset * sampleRate)
            let period = Int(sampleRate / 100)
            let baseline = measure("voice coils, \(name): render one 10 ms period", iterations: 20) {
                var cursor = renderer.cursor(at: 0)
                _ = cursor.render(count: period)
            }
            let seek = measure("voice coils, \(name): place a cursor 20 s into a 30 s event", iterations: 20) {
                _ = renderer.cursor(at: frame)
            }
            results.append(BenchmarkResult(measurement: baseline))
            results.append(
                BenchmarkResult(
                    measurement: seek, baseline: baseline.name, ratio: seek.percentile(50) / baseline.percentile(50),
                    note: "48 kHz; the placement in periods of rendering"))
        }
        return results
    }
}

/// The corpus when `AHAP_CORPUS` names it, otherwise the package's fixtures (`AHAPFixtures.corpusOrFixtures`), as
/// parsed patterns.
enum RenderingCorpus {
    static func load() throws -> [HapticPattern] {
        // Files invalid on purpose are the AHAP tests' business, not the renderer's.
        try AHAPFixtures.corpusOrFixtures().files.compactMap { try? HapticPattern(contentsOf: $0) }
    }

    /// The stretch of time a fidelity comparison covers: the output's end plus a margin for a late final command.
    static func span(of timeline: MotorTimeline) -> Double {
        timeline.endTime + FixedTickRenderer.tick
    }
}

/// The baseline: every 50 ms, the level the timeline has at that instant (quantised like ours) is sent and
/// held until the next tick — the granularity of gilrs' effect server and of ff-memless envelopes.
struct FixedTickRenderer {
    /// gilrs' `UPDATE_INTERVAL` and ff-memless' `FF_ENVELOPE_INTERVAL`, in seconds.
    static let tick = 0.050
    let profile: RenderProfile

    func commands(for timeline: MotorTimeline) -> [RumbleCommand] {
        let planner = DeviceCommandPlanner(profile: profile)
        var commands: [RumbleCommand] = []
        var index = 0
        while true {
            let time = Double(index) * Self.tick
            let levels = planner.quantized(timeline.levels(at: time))
            commands.append(
                RumbleCommand(time: time, levels: levels, holdDuration: Self.tick)
            )
            if time >= timeline.endTime { break }
            index += 1
        }
        return commands
    }
}

/// Per-file and pooled RMS errors of device output (the louder motor) against the intensity envelope.
struct FidelityFigures {
    /// The comparison samples at 1 kHz.
    static let sampleRate = 1000.0

    var ourErrors: [Double] = []
    var tickErrors: [Double] = []
    var ourRates: [Double] = []
    var ourCommands = 0.0
    var tickCommands = 0.0
    var pooledOurs = 0.0
    var pooledTick = 0.0
    var meanFileRatio = 0.0

    init(corpus: [HapticPattern], profile: RenderProfile) {
        let renderer = PatternRenderer(profile: profile)
        let planner = DeviceCommandPlanner(profile: profile)
        let tick = FixedTickRenderer(profile: profile)
        var ourSquares = 0.0
        var tickSquares = 0.0
        var sampleCount = 0
        var ratios: [Double] = []
        for pattern in corpus {
            let timeline = renderer.render(pattern)
            let envelope = renderer.intensityEnvelope(pattern)
            guard timeline.endTime > 0 else { continue }
            let ours = planner.commands(for: timeline)
            let baseline = tick.commands(for: timeline)
            let ourOutput = DeviceOutput(commands: ours)
            let tickOutput = DeviceOutput(commands: baseline)
            let count = Int((RenderingCorpus.span(of: timeline) * Self.sampleRate).rounded(.up))
            var fileOurs = 0.0
            var fileTick = 0.0
            for index in 0..<count {
                let time = Double(index) / Self.sampleRate
                let target = envelope.levels(at: time).strong * profile.gain
                fileOurs += square(ourOutput.levels(at: time).peak - target)
                fileTick += square(tickOutput.levels(at: time).peak - target)
            }
            ourSquares += fileOurs
            tickSquares += fileTick
            sampleCount += count
            let ourRMS = (fileOurs / Double(count)).squareRoot()
            let tickRMS = (fileTick / Double(count)).squareRoot()
            ourErrors.append(ourRMS)
            tickErrors.append(tickRMS)
            if tickRMS > 0 { ratios.append(ourRMS / tickRMS) }
            ourRates.append(Double(ours.count) / timeline.endTime)
            ourCommands += Double(ours.count)
            tickCommands += Double(baseline.count)
        }
        pooledOurs = (ourSquares / Double(Swift.max(sampleCount, 1))).squareRoot()
        pooledTick = (tickSquares / Double(Swift.max(sampleCount, 1))).squareRoot()
        meanFileRatio = ratios.isEmpty ? .nan : ratios.reduce(0, +) / Double(ratios.count)
    }
}

private func square(_ x: Double) -> Double { x * x }
