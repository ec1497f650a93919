import AHAP
import Dispatch
import HapticRendering
import Testing

/// Patterns no file can hold (built in code) and patterns at the readers' limits: the renderer and the planner
/// finish, skip what is out of bounds, and stay exact for the rest.
@Suite struct ExtremePatternTests {
    let renderer = PatternRenderer(profile: Build.profile())
    let planner = DeviceCommandPlanner(profile: Build.profile())

    /// Events, parameters and curves at times outside `HapticPattern.isWithinTimeBound` are skipped: the
    /// rendering is the one of the pattern without them.
    @Test func outOfBoundTimesAreSkipped() {
        let kept = Build.continuous(at: 0.1, duration: 0.5, intensity: 0.6, sharpness: 0.3)
        let extremes: [Double] = [1e308, -1e308, .nan, .infinity, -.infinity, HapticPattern.maximumTime + 1]
        let hostile = Build.pattern(
            [kept] + extremes.map { Build.transient(at: $0, intensity: 1, sharpness: 0.5) }
                + extremes.map { Build.continuous(at: $0, duration: 1, intensity: 1, sharpness: 0.5) },
            parameters: extremes.map {
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0, relativeTime: $0)
            },
            curves: extremes.map { Build.curve(.hapticSharpnessControl, at: 0, [(0, 0.5), ($0, -0.5)]) }
                + extremes.map { Build.curve(.hapticIntensityControl, at: $0, [(0, 0)]) })
        let expected = renderer.render(Build.pattern([kept]))
        #expect(renderer.render(hostile) == expected)
        #expect(planner.commands(for: renderer.render(hostile)) == planner.commands(for: expected))
    }

    /// At most `maximumSoundingEvents` events sound at once: one that starts while that many sound is not
    /// played, and one that starts after they end is.
    @Test func eventsBeyondTheSoundingLimitAreNotPlayed() {
        let limit = PatternRenderer.maximumSoundingEvents
        let quiet = (0..<limit).map { _ in Build.continuous(at: 0, duration: 1, intensity: 0.01, sharpness: 0.5) }
        let late = Build.continuous(at: 0.5, duration: 0.2, intensity: 0.2, sharpness: 0.5)
        let after = Build.continuous(at: 2, duration: 0.2, intensity: 0.2, sharpness: 0.5)
        let timeline = renderer.render(Build.pattern(quiet + [late, after]))
        #expect(close(timeline.levels(at: 0.6), Double(limit) * 0.01, Double(limit) * 0.01))
        #expect(close(timeline.levels(at: 2.1), 0.2, 0.2))
        let fewer = renderer.render(Build.pattern(Array(quiet.dropLast()) + [late]))
        #expect(close(fewer.levels(at: 0.6), Double(limit - 1) * 0.01 + 0.2, Double(limit - 1) * 0.01 + 0.2))
    }

    /// Parameters in any order give the rendering of the same parameters in time order, the later one in the
    /// pattern winning at equal times.
    @Test func parameterOrderDoesNotMatter() {
        let event = Build.continuous(at: 0, duration: 2, intensity: 1, sharpness: 0.5)
        let parameters = (0..<200).map {
            HapticDynamicParameter(
                parameterID: .hapticIntensityControl, value: Double($0 % 7) / 7, relativeTime: Double($0) / 100)
        }
        let forward = renderer.render(Build.pattern([event], parameters: parameters))
        #expect(renderer.render(Build.pattern([event], parameters: parameters.reversed())) == forward)
        let tie = [0.2, 0.8].map {
            HapticDynamicParameter(parameterID: .hapticIntensityControl, value: $0, relativeTime: 1)
        }
        #expect(close(renderer.render(Build.pattern([event], parameters: tie)).levels(at: 1.5), 0.8, 0.8))
    }

    /// Two thousand events, every one overlapping all the others, listed latest first: the first
    /// `maximumSoundingEvents` to start play, the rest never do. (The entry limit's 100,000 such events take
    /// 2 s in a release build, too slow for a debug unit test: docs/reliability.md has the measurements.)
    @Test func thousandsOfOverlappingEventsRender() {
        let count = 2_000
        let limit = PatternRenderer.maximumSoundingEvents
        let events = (0..<count).map {
            Build.continuous(at: Double(count - $0) * 0.015, duration: 30, intensity: 0.001, sharpness: 0.5)
        }
        let timeline = renderer.render(Build.pattern(events))
        #expect(close(timeline.endTime, 30 + Double(limit) * 0.015, within: 1e-9))
        #expect(close(timeline.levels(at: 15), Double(limit) * 0.001, Double(limit) * 0.001))
        #expect(planner.commands(for: timeline).last?.levels == .off)
    }

    /// Hundreds of overlapping events under one intensity curve (a swell over the whole pattern): the native
    /// program plays the voices the motors play, the first `maximumSoundingEvents` to start, and plans only
    /// those, so its cost is bounded by the limit however many events overlap. An event that starts after they
    /// end is played again, under its own index.
    @Test func aNativeProgramFollowsOnlyTheEventsTheSoundingLimitLetsIn() {
        let limit = PatternRenderer.maximumSoundingEvents
        let overlapping = (0..<400).map {
            Build.continuous(at: Double($0) * 0.0003, duration: 2, intensity: 0.5, sharpness: 0.5)
        }
        let after = Build.continuous(at: 3, duration: 0.5, intensity: 0.5, sharpness: 0.5)
        let points: [(Double, Double)] = (0...7).map { step -> (Double, Double) in
            let level: Double = step.isMultiple(of: 2) ? 0.25 : 0.75
            return (Double(step) * 0.5, level)
        }
        let swell = Build.curve(.hapticIntensityControl, at: 0, points)
        let program = NativePeriodicProgram(
            pattern: Build.pattern(overlapping + [after], curves: [swell]), profile: .periodicForce)
        #expect(program.effects.count == limit + 1)
        #expect(program.inexactEvents == Array(0..<limit) + [overlapping.count])
        let admitted = NativePeriodicProgram(
            pattern: Build.pattern(Array(overlapping.prefix(limit)) + [after], curves: [swell]), profile: .periodicForce
        )
        #expect(program.effects == admitted.effects)
    }

    /// Timelines built by hand with times near the limits of a Double: the planner finishes, and ends off.
    @Test(arguments: [1e308, Double.infinity, 1e20])
    func hugeTimelinesArePlanned(end: Double) {
        let ramp = MotorTimeline.Segment(
            start: 0, end: end, startLevels: MotorMagnitudes(strong: 1, weak: 1), endLevels: .off)
        let step = MotorTimeline.Segment(
            start: 0, end: end, startLevels: MotorMagnitudes(strong: 0.5, weak: 0.5),
            endLevels: MotorMagnitudes(strong: 0.5, weak: 0.5))
        for segment in [ramp, step] {
            let commands = planner.commands(for: MotorTimeline(segments: [segment]))
            #expect(commands.first?.time == 0)
            #expect(commands.count < 1_000)
        }
    }

    /// Sampling a timeline never traps and never asks for more than `MotorTimeline.maximumSampleCount` samples: a
    /// rate that is not a positive finite number gives none (an infinite one trapped converting an infinite count
    /// to `Int`), and a rate or a timeline so large that the samples would pass the maximum gives the first that
    /// many, still one every `1 / rate` seconds from 0 (a rate of 1e300, or an end of 1e300 s, trapped).
    @Test func samplingAHugeRateOrTimelineGivesAtMostTheMaximumCountAndNeverTraps() {
        let half = MotorMagnitudes(strong: 0.5, weak: 0.5)
        let second = MotorTimeline(segments: [.init(start: 0, end: 1, startLevels: half, endLevels: half)])
        #expect(second.samples(rate: 4).map(\.time) == [0, 0.25, 0.5, 0.75, 1])
        for rate in [Double.infinity, .nan, -1, 0] {
            #expect(second.samples(rate: rate).isEmpty, "rate \(rate)")
        }
        let limit = MotorTimeline.maximumSampleCount
        let fast = second.samples(rate: 1e300)
        #expect(fast.count == limit)
        #expect(fast.last?.time == Double(limit - 1) / 1e300)
        #expect(fast.last?.levels == half)
        for end in [1e300, Double.infinity] {
            let long = MotorTimeline(segments: [.init(start: 0, end: end, startLevels: half, endLevels: half)])
            let samples = long.samples(rate: 1000)
            #expect(samples.count == limit, "end \(end)")
            #expect(samples.last?.time == Double(limit - 1) / 1000)
            #expect(samples.last?.levels == half)
        }
    }

    /// Timelines built by hand that end far beyond any pattern, planned on a device's frames (`FrameGrid`): the
    /// planner finishes within seconds and ends off.
    @Test(arguments: [1e20, 1e308, Double.infinity])
    func hugeTimelinesArePlannedOnADevicesFrames(end: Double) throws {
        let step = MotorTimeline.Segment(
            start: 0, end: end, startLevels: MotorMagnitudes(strong: 0.5, weak: 0.5),
            endLevels: MotorMagnitudes(strong: 0.5, weak: 0.5))
        let frames = try #require(FrameGrid(origin: 0, period: 0.030))
        let framed = DeviceCommandPlanner(profile: .switchProOnFrames, frames: frames)
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            let commands = framed.commands(for: MotorTimeline(segments: [step]))
            precondition(commands.count < 1_000)
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "not planned in 10 s")
    }

    /// A loop asked to repeat more often than memory holds plays as many passes as `maximumLoopedSegments`
    /// segments of its pass hold, the last with its release; a loop over an endless timeline is that timeline. Two million passes built four
    /// million segments (and `Int.max` passes, more than memory holds); an endless one's passes were all at NaN.
    @Test func aLoopRepeatedBeyondTheSegmentLimitStopsThereAndAnEndlessOneIsTheTimeline() {
        let ramp = MotorTimeline(segments: [
            .init(start: 0, end: 0.01, startLevels: .off, endLevels: MotorMagnitudes(strong: 1, weak: 1)),
            .init(start: 0.01, end: 0.02, startLevels: MotorMagnitudes(strong: 0.5, weak: 0.5), endLevels: .off),
        ])
        let limit = MotorTimeline.maximumLoopedSegments
        let looped = ramp.looped(loopEnd: 0, repeatCount: 1 << 21)
        // 2^19 passes of two segments; a join of two passes may add a silent sliver where the offsets round apart.
        #expect(abs(looped.endTime - Double(limit / 2) * 0.02) < 1e-6, "\(looped.endTime)")
        #expect(looped.segments.count < 2 * limit)
        #expect(looped.levels(at: 0.005) == MotorMagnitudes(strong: 0.5, weak: 0.5))
        let endless = MotorTimeline(segments: [
            .init(start: 0, end: .infinity, startLevels: MotorMagnitudes(strong: 1, weak: 1), endLevels: .off)
        ])
        #expect(endless.looped(loopEnd: 0, repeatCount: 3) == endless)
        #expect(endless.looped(loopEnd: .infinity, repeatCount: 3) == endless)
    }
}
