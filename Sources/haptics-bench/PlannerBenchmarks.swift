// The write-budgeted planner against the fixed-interval planner it replaced, a 50 ms tick, and a model of SDL's
// haptic loop, over the corpus: the error of what the device is told (both motors, every millisecond, against the
// pattern's motor levels) and the writes a second it takes (changes, and renewals of a held level where the
// engine renews them). Also the whole curve of error against writes, and one pattern planned both ways as an SVG.
import AHAP
import Foundation
import HapticRendering
import HapticTestDevices

let plannerBenchmarks = BenchmarkGroup(name: "Planner") {
    let corpus = try RenderingCorpus.load()
    var results: [BenchmarkResult] = []
    let source = AHAPFixtures.corpusOrFixturesName
    for profile in RenderProfile.builtIn {
        let figures = PlannerFigures(corpus: corpus, profile: profile)
        let before = figures.figures(.fixedInterval)
        let ours = figures.figures(.budgeted)
        let tick = figures.figures(.tick)
        let sdl = figures.figures(.sdlHapticLoop(frameRate: 60))
        results.append(
            BenchmarkResult(
                measurement: Measurement(name: "planner error, \(profile.name)", unit: "rms", samples: [ours.error]),
                baseline: "fixed interval", ratio: ours.error / before.error,
                note: String(
                    format:
                        "\(source): budgeted %.4f at %.1f writes/s; fixed interval %.4f at %.1f; 50 ms tick %.4f "
                        + "at %.1f (ratio %.2f); SDL haptic loop at 60 Hz %.4f at %.1f (ratio %.2f, writes %.2f)",
                    ours.error, ours.writesPerSecond, before.error, before.writesPerSecond, tick.error,
                    tick.writesPerSecond, ours.error / tick.error, sdl.error, sdl.writesPerSecond,
                    ours.error / sdl.error,
                    ours.writesPerSecond / sdl.writesPerSecond)))
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "planner writes/s, \(profile.name)", unit: "writes/s", samples: [ours.writesPerSecond]),
                baseline: "fixed interval", ratio: ours.writesPerSecond / before.writesPerSecond,
                note: "changes and renewals, over \(String(format: "%.1f", figures.seconds)) s of patterns"))
    }
    // The whole curve on the generic profile: our hold error scaled, SDL's frame rate varied.
    let generic = PlannerFigures(corpus: corpus, profile: .genericRumble)
    for scale in [1.0 / 64, 1.0 / 8, 1, 8, 64] {
        let point = generic.figures(.budgetedScaled(scale))
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "curve, budgeted, hold error x\(scale)", unit: "rms", samples: [point.error]),
                note: String(format: "%.1f writes/s", point.writesPerSecond)))
    }
    for rate in [15.0, 30, 60, 120, 250] {
        let point = generic.figures(.sdlHapticLoop(frameRate: rate))
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "curve, SDL haptic loop at \(Int(rate)) Hz", unit: "rms", samples: [point.error]),
                note: String(format: "%.1f writes/s", point.writesPerSecond)))
    }
    results.append(FramesAtBest(corpus: corpus).result())
    results += swingingLoopResults()
    if let plot = PlannerFigures.plotBothWays(corpus: corpus, profile: .genericRumble) {
        let directory = URL(fileURLWithPath: ".build/bench")
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("planner-both-ways.svg")
        try plot.svg.write(to: file, atomically: true, encoding: .utf8)
        results.append(
            BenchmarkResult(
                measurement: Measurement(name: "plot of one pattern planned both ways", unit: "", samples: [0]),
                note: "written to \(file.path)"))
    }
    return results
}

/// Error and writes of a planning strategy over a corpus under one profile.
struct PlannerFigures {
    enum Strategy {
        /// The planner as it is: the profile's write budget.
        case budgeted
        /// The same with its hold error scaled (a point of the curve).
        case budgetedScaled(Double)
        /// The planner before the budget (`FixedIntervalPlanner`).
        case fixedInterval
        /// The level every 50 ms (`FixedTickRenderer`, the Rendering group's baseline).
        case tick
        /// SDL's haptic API as the peer harness drives it: the level at the start of each frame, sent (one update
        /// of an endless effect) when it changed; no renewals.
        case sdlHapticLoop(frameRate: Double)
    }

    struct Figures {
        var error: Double
        var writesPerSecond: Double
    }

    let profile: RenderProfile
    let timelines: [MotorTimeline]
    let seconds: Double

    init(corpus: [HapticPattern], profile: RenderProfile) {
        self.profile = profile
        let renderer = PatternRenderer(profile: profile)
        timelines = corpus.map { renderer.render($0) }.filter { $0.endTime > 0 }
        seconds = timelines.reduce(0) { $0 + $1.endTime }
    }

    func commands(_ strategy: Strategy, for timeline: MotorTimeline) -> [RumbleCommand] {
        switch strategy {
        case .budgeted:
            return DeviceCommandPlanner(profile: profile).commands(for: timeline)
        case .budgetedScaled(let scale):
            var scaled = profile
            scaled.budget.holdError *= scale
            return DeviceCommandPlanner(profile: scaled).commands(for: timeline)
        case .fixedInterval:
            return FixedIntervalPlanner(profile: profile).commands(for: timeline)
        case .tick:
            return FixedTickRenderer(profile: profile).commands(for: timeline)
        case .sdlHapticLoop(let rate):
            return Self.sampled(timeline, every: 1 / rate, profile: profile)
        }
    }

    /// SDL's frame loop as the peer harness runs it: the level at each multiple of `period`, quantised, sent only
    /// where it changed (the tick renderer sends every tick), and off after the end.
    static func sampled(_ timeline: MotorTimeline, every period: Double, profile: RenderProfile) -> [RumbleCommand] {
        let planner = DeviceCommandPlanner(profile: profile)
        var commands: [RumbleCommand] = []
        var sent = MotorMagnitudes.off
        var index = 0
        while true {
            let time = Double(index) * period
            let levels = planner.quantized(timeline.levels(at: time))
            if levels != sent {
                commands.append(RumbleCommand(time: time, levels: levels, holdDuration: nil))
                sent = levels
            }
            if time >= timeline.endTime { break }
            index += 1
        }
        return commands
    }

    func figures(_ strategy: Strategy) -> Figures {
        var squares = 0.0
        var samples = 0
        var writes = 0
        let renews: Bool
        if case .sdlHapticLoop = strategy { renews = false } else { renews = true }
        for timeline in timelines {
            let commands = commands(strategy, for: timeline)
            writes += renews ? profile.budget.writeTimes(of: commands).count : commands.count
            let output = DeviceOutput(commands: commands)
            let count = Int(((timeline.endTime + 0.05) * FidelityFigures.sampleRate).rounded(.up))
            for index in 0..<count {
                let time = Double(index) / FidelityFigures.sampleRate
                let target = timeline.levels(at: time)
                let played = output.levels(at: time)
                let strong = played.strong - (profile.hasStrongMotor ? min(target.strong * profile.gain, 1) : 0)
                let weak = played.weak - (profile.hasWeakMotor ? min(target.weak * profile.gain, 1) : 0)
                squares += strong * strong + weak * weak
                samples += 2
            }
        }
        return Figures(
            error: (squares / Double(max(samples, 1))).squareRoot(), writesPerSecond: Double(writes) / seconds)
    }

    /// The corpus pattern whose plan differs most between the two planners, among those of 0.5 to 3 s, as an
    /// overlay of the pattern's levels, the fixed-interval plan and the budgeted one.
    static func plotBothWays(corpus: [HapticPattern], profile: RenderProfile) -> OverlayPlot? {
        let figures = PlannerFigures(corpus: corpus, profile: profile)
        let candidates = figures.timelines.filter { $0.endTime >= 0.5 && $0.endTime <= 3 }
        let scored = candidates.map { timeline -> (MotorTimeline, Int) in
            let fixed = figures.commands(.fixedInterval, for: timeline).count
            let ours = figures.commands(.budgeted, for: timeline).count
            return (timeline, abs(fixed - ours))
        }
        guard let chosen = scored.max(by: { $0.1 < $1.1 })?.0 else { return nil }
        let series = { (commands: [RumbleCommand]) in
            LevelSeries(points: commands.map { .init(time: $0.time, strong: $0.levels.strong, weak: $0.levels.weak) })
        }
        let pattern = LevelSeries(
            points: stride(from: 0, through: chosen.endTime, by: 0.001).map {
                let levels = chosen.levels(at: $0)
                return .init(time: $0, strong: levels.strong, weak: levels.weak)
            })
        let fixed = figures.commands(.fixedInterval, for: chosen)
        let ours = figures.commands(.budgeted, for: chosen)
        return OverlayPlot(
            title:
                "One pattern under the \(profile.name) profile: fixed interval, \(fixed.count) commands; "
                + "write budget, \(ours.count) commands",
            length: chosen.endTime + 0.05,
            lines: [
                .init(label: "pattern", color: "#999999", series: pattern),
                .init(label: "fixed interval", color: "#e08000", series: series(fixed)),
                .init(label: "write budget", color: "#208020", series: series(ours)),
            ])
    }
}

/// What hid-nintendo's frames allow at best, host-side: the corpus planned on a 30 ms frame grid
/// (`switch-frames`), each frame the pattern's mean over it and played exactly on its instant, against the 50 ms
/// tick's steps planned and played the same way; each motor against the render, the first second of each file,
/// as `Driver switch-pro` measures what the pad played. Six phases of the grid, 5 ms apart. The device can only
/// come near this, never under it.
struct FramesAtBest {
    let corpus: [HapticPattern]
    static let phases = 6

    func result() -> BenchmarkResult {
        let profile = RenderProfile.switchProOnFrames
        let renderer = PatternRenderer(profile: profile)
        var ours = 0.0, tick = 0.0, samples = 0
        for pattern in corpus {
            let whole = renderer.render(pattern)
            guard whole.endTime > 0 else { continue }
            let seconds = min(whole.endTime, DriverBench.fidelitySeconds)
            // Stopped there, as the device bench stops its players.
            let timeline = MotorTimeline(
                segments: whole.segments.compactMap { segment in
                    guard segment.start < seconds else { return nil }
                    guard segment.end > seconds else { return segment }
                    return MotorTimeline.Segment(
                        start: segment.start, end: seconds, startLevels: segment.startLevels,
                        endLevels: segment.levels(at: seconds))
                })
            let count = Int((seconds + FixedTickRenderer.tick) * FidelityFigures.sampleRate)
            let ticked = FixedTickRenderer(profile: profile).timeline(for: timeline)
            for phase in 0..<Self.phases {
                let origin = Double(phase) * RenderProfile.switchFrameSeconds / Double(Self.phases)
                let frames = FrameGrid(origin: origin, period: RenderProfile.switchFrameSeconds)
                let planner = DeviceCommandPlanner(profile: profile, frames: frames)
                let played = DeviceOutput(commands: planner.commands(for: timeline))
                let tickPlayed = DeviceOutput(commands: planner.commands(for: ticked))
                for index in 0..<count {
                    let time = Double(index) / FidelityFigures.sampleRate
                    let target = time <= seconds ? timeline.levels(at: time) : .off
                    let wanted = MotorMagnitudes(strong: target.strong * profile.gain, weak: target.weak * profile.gain)
                    ours += Self.squares(played.levels(at: time), wanted)
                    tick += Self.squares(tickPlayed.levels(at: time), wanted)
                }
                samples += 2 * count
            }
        }
        let pooled = { (squares: Double) in (squares / Double(max(samples, 1))).squareRoot() }
        return BenchmarkResult(
            measurement: Measurement(name: "frames at best, switch-frames", unit: "rms", samples: [pooled(ours)]),
            baseline: "50 ms tick on the same frames", ratio: pooled(ours) / pooled(tick),
            note: String(
                format:
                    "\(AHAPFixtures.corpusOrFixturesName), first %.1f s of each file, each motor against the render, "
                    + "%d phases: ours %.4f, the tick's %.4f",
                DriverBench.fidelitySeconds, Self.phases, pooled(ours), pooled(tick)))
    }

    static func squares(_ played: MotorMagnitudes, _ wanted: MotorMagnitudes) -> Double {
        (played.strong - wanted.strong) * (played.strong - wanted.strong)
            + (played.weak - wanted.weak) * (played.weak - wanted.weak)
    }
}

/// The time to plan what an engine plans at once for a loop (2.25 s, its horizon and look-ahead) that swings
/// between full and 0.2 every half period, on the generic profile (10 ms interval), against a swing of 20 ms,
/// which the device follows. One faster than the interval can only be held at its mean; a planner that weighed
/// it again each time the error of that level came due (every 17 µs here) took 0.2 s of a playback thread for
/// one plan.
func swingingLoopResults() -> [BenchmarkResult] {
    let planner = DeviceCommandPlanner(profile: .genericRumble)
    func swing(period: Double) -> MotorTimeline {
        let full = MotorMagnitudes(strong: 1, weak: 1)
        let low = MotorMagnitudes(strong: 0.2, weak: 0.2)
        let count = Int((2.25 / period).rounded(.up))
        return MotorTimeline(
            segments: (0..<count).flatMap { index -> [MotorTimeline.Segment] in
                let start = Double(index) * period
                return [
                    .init(start: start, end: start + period / 2, startLevels: full, endLevels: full),
                    .init(start: start + period / 2, end: start + period, startLevels: low, endLevels: low),
                ]
            })
    }
    func planned(period: Double) -> (measurement: Measurement, commands: Int) {
        let timeline = swing(period: period)
        var commands = 0
        let measurement = measure("planning a \(period * 1000) ms swing for 2.25 s", iterations: 5, warmup: 1) {
            commands = planner.commands(for: timeline).count
        }
        return (measurement, commands)
    }
    let baseline = planned(period: 0.020)
    return [0.010, 0.005].map { period in
        let result = planned(period: period)
        return BenchmarkResult(
            measurement: result.measurement, baseline: baseline.measurement.name,
            ratio: result.measurement.percentile(50) / baseline.measurement.percentile(50),
            note: String(
                format: "%d commands (the 20 ms swing: %d, in %.3f ms)", result.commands, baseline.commands,
                baseline.measurement.percentile(50)))
    }
}
