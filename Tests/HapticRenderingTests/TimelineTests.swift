import AHAP
import HapticTestDevices
@testable import HapticRendering
import Testing

/// Time operations and mixing on timelines, and the native periodic program.
@Suite struct TimelineTests {
    let renderer = PatternRenderer()
    let pulse = TransientPulse.rumbleMotor.length

    func flat(_ level: Double, from: Double, to: Double) -> MotorTimeline {
        let levels = MotorMagnitudes(strong: level, weak: 0)
        var segments: [MotorTimeline.Segment] = []
        if from > 0 { segments.append(.init(start: 0, end: from, startLevels: .off, endLevels: .off)) }
        segments.append(.init(start: from, end: to, startLevels: levels, endLevels: levels))
        return MotorTimeline(segments: segments)
    }

    @Test func gapsBecomeSilenceAndOverlapsAreCut() {
        let on = MotorMagnitudes(strong: 1, weak: 0)
        let timeline = MotorTimeline(segments: [
            .init(start: 0.1, end: 0.2, startLevels: on, endLevels: on),
            .init(start: 0.3, end: 0.5, startLevels: on, endLevels: .off),
            .init(start: 0.4, end: 0.6, startLevels: on, endLevels: on),
        ])
        #expect(timeline.segments.first?.start == 0)
        #expect(timeline.levels(at: 0.05) == .off && timeline.levels(at: 0.25) == .off)
        #expect(
            close(timeline.levels(at: 0.4).strong, 0.5),
            "the earlier segment keeps its span; the later one is cut to start at its end")
        #expect(timeline.levels(at: 0.55) == on)
        #expect(zip(timeline.segments, timeline.segments.dropFirst()).allSatisfy { $0.end == $1.start })
    }

    @Test func theLevelsJustBeforeAnInstantAreTheOnesBeforeAJumpThere() {
        let on = MotorMagnitudes(strong: 1, weak: 0)
        let half = MotorMagnitudes(strong: 0.5, weak: 0)
        let timeline = MotorTimeline(segments: [
            .init(start: 0.1, end: 0.2, startLevels: on, endLevels: half),
            .init(start: 0.2, end: 0.3, startLevels: on, endLevels: on),
        ])
        #expect(timeline.levels(justBefore: 0.2) == half && timeline.levels(at: 0.2) == on, "at the jump")
        #expect(close(timeline.levels(justBefore: 0.15).strong, 0.75), "inside a ramp, its value")
        #expect(timeline.levels(justBefore: 0.1) == .off, "the silence before the first level")
        #expect(timeline.levels(justBefore: 0.3) == on && timeline.levels(at: 0.3) == .off, "at the end")
        #expect(timeline.levels(justBefore: 0) == .off && timeline.levels(justBefore: 0.31) == .off)
    }

    @Test func theMeanIntegratesRampsAndJumpsAndCountsSilenceOutsideTheTimeline() {
        let on = MotorMagnitudes(strong: 1, weak: 0.5)
        let timeline = MotorTimeline(segments: [
            .init(start: 0.1, end: 0.2, startLevels: on, endLevels: .off),
            .init(start: 0.2, end: 0.3, startLevels: on, endLevels: on),
        ])
        // 0.1 s of silence, a ramp down from `on` (its mean half of it), then `on`: 0.15 s of `on` in 0.3 s.
        #expect(close(timeline.mean(from: 0, to: 0.3), 0.5, 0.25))
        #expect(close(timeline.mean(from: 0.25, to: 0.35), 0.5, 0.25), "off from the end on")
        #expect(close(timeline.mean(from: -0.1, to: 0.1), 0, 0), "off before the start")
        #expect(close(timeline.mean(from: 0.15, to: 0.25), 0.625, 0.3125), "part of the ramp, across the jump")
        #expect(timeline.mean(from: 0.2, to: 0.2) == .off && timeline.mean(from: 0.3, to: 0.2) == .off)
    }

    @Test func playbackRateDividesEveryTime() {
        let timeline = renderer.render(Build.pattern([Build.transient(at: 0.1, intensity: 1, sharpness: 0)])).scaled(
            rate: 2)
        #expect(timeline.levels(at: 0.049) == .off)
        #expect(timeline.levels(at: 0.05).strong == 1)
        #expect(close(timeline.endTime, (0.1 + pulse) / 2))
    }

    @Test func seekSlicesFromAnOffset() {
        let timeline = renderer.render(Build.pattern([Build.transient(at: 0.1, intensity: 1, sharpness: 0)])).slice(
            from: 0.12)
        #expect(timeline.levels(at: 0).strong == 1)
        #expect(close(timeline.endTime, pulse - 0.02))
        #expect(timeline.slice(from: 5) == .silent)
    }

    @Test func shiftingStartsWithSilence() {
        let timeline = flat(0.5, from: 0, to: 0.1).shifted(by: 0.5)
        #expect(timeline.levels(at: 0.4) == .off)
        #expect(timeline.levels(at: 0.55).strong == 0.5)
        #expect(close(timeline.endTime, 0.6))
    }

    @Test func loopingRepeatsUpToTheLoopEndAndPlaysTheLastPassWhole() {
        let once = renderer.render(Build.pattern([Build.transient(at: 0, intensity: 1, sharpness: 0)]))
        let looped = once.looped(loopEnd: 0.2, repeatCount: 3)
        for start in [0.0, 0.2, 0.4] {
            #expect(looped.levels(at: start + 0.01).strong == 1)
            #expect(looped.levels(at: start + 0.1) == .off)
        }
        #expect(close(looped.endTime, 0.4 + pulse))
        let cut = flat(1, from: 0, to: 0.3).looped(loopEnd: 0.2, repeatCount: 2)
        #expect(cut.levels(at: 0.25).strong == 1)
        #expect(close(cut.endTime, 0.5))
    }

    @Test func mixingSumsAndSaturatesWithABreakpointAtTheCrossing() {
        let ramp = MotorTimeline(segments: [
            .init(start: 0, end: 1, startLevels: .off, endLevels: MotorMagnitudes(strong: 1, weak: 0))
        ])
        let mixed = MotorTimeline.mixed([ramp, flat(0.5, from: 0, to: 1)])
        #expect(close(mixed.levels(at: 0.25).strong, 0.75))
        #expect(close(mixed.levels(at: 0.75).strong, 1))
        #expect(mixed.breakpoints.contains { close($0, 0.5) })
        #expect(mixed.segments.allSatisfy { $0.startLevels.strong <= 1 && $0.endLevels.strong <= 1 })
        #expect(MotorTimeline.mixed([ramp]) == ramp)
        #expect(MotorTimeline.mixed([]) == .silent)
    }

    /// One timeline is clamped as a mix of two is: a ramp from off to twice full is full from where it crosses
    /// full, a weak motor ramping up from below off is off until it crosses off. It came back as it was, so a
    /// player's own timeline built past full reached the planner unclamped (1.5 at 0.75 s) while the same ramp
    /// beside a silent player was full there.
    @Test func oneTimelineOutsideFullScaleIsClampedAsAMixOfTwo() {
        let ramp = MotorTimeline(segments: [
            .init(
                start: 0, end: 1, startLevels: MotorMagnitudes(strong: 0, weak: -1),
                endLevels: MotorMagnitudes(strong: 2, weak: 1))
        ])
        let expected = MotorTimeline(segments: [
            .init(start: 0, end: 0.5, startLevels: .off, endLevels: MotorMagnitudes(strong: 1, weak: 0)),
            .init(
                start: 0.5, end: 1, startLevels: MotorMagnitudes(strong: 1, weak: 0),
                endLevels: MotorMagnitudes(strong: 1, weak: 1)),
        ])
        #expect(MotorTimeline.mixed([ramp]) == expected)
        #expect(MotorTimeline.mixed([ramp, .silent]) == expected)
        #expect(MotorTimeline.mixed([ramp]).levels(at: 0.75) == MotorMagnitudes(strong: 1, weak: 0.5))
    }

    /// A timeline that never ends (one `looped` and the planner take) mixes like any other: the sum while both
    /// sound, then the endless one alone, its level held to the end, in either order and deeper in the tree. The
    /// sweep read past the last piece once the endless one was summed (an index out of range).
    @Test func anEndlessTimelineMixesAsTheSumThenAlone() {
        let endless = flat(0.5, from: 0, to: .infinity)
        let short = flat(0.25, from: 0, to: 1)
        let half = MotorMagnitudes(strong: 0.5, weak: 0)
        let both = MotorMagnitudes(strong: 0.75, weak: 0)
        let expected = MotorTimeline(segments: [
            .init(start: 0, end: 1, startLevels: both, endLevels: both),
            .init(start: 1, end: .infinity, startLevels: half, endLevels: half),
        ])
        #expect(MotorTimeline.mixed([endless, short]) == expected)
        #expect(MotorTimeline.mixed([short, endless]) == expected)
        let later = flat(0.25, from: 2, to: 3)
        let deeper = MotorTimeline.mixed([short, later, endless])
        #expect(deeper.levels(at: 0.5) == both && deeper.levels(at: 1.5) == half && deeper.levels(at: 2.5) == both)
        #expect(deeper.levels(at: 1e300) == half && deeper.endTime == .infinity)
        #expect(deeper.segments.last?.endLevels == half)
    }

    /// The balanced tree of pairwise sums gives the mix that summing every timeline at every breakpoint gives
    /// (`SummedAtEveryBreakpoint`), on random timelines with gaps, jumps, shared breakpoints and sums far past
    /// full, one to 70 at a time: at each breakpoint of either, and halfway between.
    @Test func mixingInATreeOfPairwiseSumsMatchesSummingEveryTimelineAtEveryBreakpoint() {
        var random = SeededGenerator(seed: 0x6D69_7865)
        for round in 0..<60 {
            let count = round < 10 ? round + 1 : Int.random(in: 1...70, using: &random)
            let timelines = (0..<count).map { _ in
                var segments: [MotorTimeline.Segment] = []
                var time = Double(Int.random(in: 0...8, using: &random)) / 8
                for _ in 0..<Int.random(in: 1...12, using: &random) {
                    // Eighths of a second for some breakpoints, so that timelines share them.
                    let length =
                        Bool.random(using: &random)
                        ? Double(Int.random(in: 1...4, using: &random)) / 8
                        : Double.random(in: 0.001...0.4, using: &random)
                    let level = {
                        MotorMagnitudes(
                            strong: Double.random(in: 0...1, using: &random),
                            weak: Double.random(in: 0...1, using: &random))
                    }
                    segments.append(.init(start: time, end: time + length, startLevels: level(), endLevels: level()))
                    time += length + (Bool.random(using: &random) ? Double.random(in: 0...0.2, using: &random) : 0)
                }
                return MotorTimeline(segments: segments)
            }
            let tree = MotorTimeline.mixed(timelines)
            let reference = SummedAtEveryBreakpoint.mixed(timelines)
            #expect(close(tree.endTime, reference.endTime, within: 1e-12), "round \(round)")
            let times = Set(tree.breakpoints + reference.breakpoints).sorted()
            for (time, next) in zip(times, times.dropFirst() + [times.last.map { $0 + 1 } ?? 1]) {
                for at in [time, (time + next) / 2] {
                    let expected = reference.levels(at: at)
                    #expect(
                        close(tree.levels(at: at), expected.strong, expected.weak, within: 1e-12),
                        "round \(round) at \(at)")
                }
            }
        }
    }

    @Test func mixingPlayersMatchesRenderingTheirEventsTogether() {
        let a = Build.pattern([Build.continuous(at: 0, duration: 0.5, intensity: 0.3, sharpness: 0.2)])
        let b = Build.pattern([Build.transient(at: 0.25, intensity: 0.9, sharpness: 0.8)])
        let together = renderer.render(Build.pattern(a.events + b.events))
        let mixed = MotorTimeline.mixed([renderer.render(a), renderer.render(b)])
        for step in 0...60 {
            let time = Double(step) / 100
            let x = together.levels(at: time)
            let y = mixed.levels(at: time)
            #expect(close(x, y.strong, y.weak, within: 1e-9), "at \(time)")
        }
    }

    @Test func aTransientCompilesToOneExactPeriodicEffect() throws {
        let pattern = Build.pattern([Build.transient(at: 0.1, intensity: 0.8, sharpness: 1, decay: 0.5)])
        let program = NativePeriodicProgram(pattern: pattern, profile: .genericRumble)
        #expect(program.isExact)
        try #require(program.effects.count == 1)
        let effect = program.effects[0]
        let decay = 15.0 / 255
        #expect(effect.delay == 0.1 && effect.delayMilliseconds == 100)
        #expect(close(effect.length, pulse + decay))
        #expect(effect.magnitude == 0.8 && effect.attackLength == 0 && close(effect.fadeLength, decay))
        #expect(effect.fadeLevel == 0)
        #expect(effect.periodMilliseconds == 5, "sharpness 1 -> 200 Hz")
        #expect(effect.magnitudeUnits == Int16((0.8 * 0x7fff).rounded()))
        let envelope = renderer.intensityEnvelope(pattern)
        for step in 0...20 {
            let time = 0.09 + Double(step) * 0.005
            #expect(close(program.level(at: time), envelope.levels(at: time).strong, within: 1e-9), "at \(time)")
        }
    }

    @Test func attackAndReleaseBecomeTheKernelEnvelope() throws {
        let event = Build.continuous(
            at: 0, duration: 2, intensity: 0.5, sharpness: 0, extra: [(.attackTime, 1), (.releaseTime, 1)])
        let program = NativePeriodicProgram(pattern: Build.pattern([event]), profile: .genericRumble)
        try #require(program.effects.count == 1)
        let effect = program.effects[0]
        #expect(close(effect.attackLength, 1) && effect.attackLevel == 0)
        #expect(close(effect.fadeLength, 1) && effect.fadeLevel == 0)
        #expect(close(effect.length, 3) && effect.magnitude == 0.5)
        #expect(effect.periodMilliseconds == 25, "sharpness 0 -> 40 Hz")
        #expect(close(NativePeriodicProgram.frequency(sharpness: 0.5), 40 * 5.0.squareRoot(), within: 1e-9))
    }

    @Test func anEventUnderASharpnessCurveGetsPeriodUpdatesAtItsLevelAtMostOnePerInterval() throws {
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 0.5, sharpness: 0)],
            curves: [Build.curve(.hapticSharpnessControl, at: 0, [(0, 0), (1, 1)])])
        let profile = RenderProfile.periodicForce
        let program = NativePeriodicProgram(pattern: pattern, profile: profile)
        try #require(program.effects.count == 1 && program.inexactEvents == [0])
        let followed = program.effects[0]
        #expect(followed.updates.count >= 10)
        #expect(followed.updates.allSatisfy { $0.magnitude == followed.magnitude }, "the level holds")
        let periods = [followed.period] + followed.updates.map(\.period)
        #expect(zip(periods, periods.dropFirst()).allSatisfy { $1 < $0 }, "a sharper event is a shorter period")
        #expect(abs(followed.period(at: 0.99) - 1 / NativePeriodicProgram.sharpFrequency) < 0.0005)
        let times = followed.updates.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= profile.minimumUpdateInterval - 1e-9 })
    }

    @Test func anEventUnderAChangingCurveIsOneEffectWhoseUpdatesThePlannerPlacesAsItPlacesLevels() throws {
        let pattern = Build.pattern(
            [
                Build.transient(at: 0, intensity: 1, sharpness: 0.5),
                Build.continuous(at: 0.5, duration: 1, intensity: 1, sharpness: 0.5),
            ],
            curves: [Build.curve(.hapticIntensityControl, at: 0.5, [(0, 1), (1, 0)])])
        let profile = RenderProfile.periodicForce
        let program = NativePeriodicProgram(pattern: pattern, profile: profile)
        #expect(program.inexactEvents == [1])
        try #require(program.effects.count == 2)
        #expect(program.effects[0].updates.isEmpty)
        let followed = program.effects[1]
        #expect(followed.delay == 0.5 && close(followed.length, 1))
        #expect(followed.attackLength == 0 && followed.fadeLength == 0)
        // The planner's own commands for the event alone: the first is the effect's level, the others its updates.
        var alone = pattern
        alone.events = [pattern.events[1]]
        let planned = DeviceCommandPlanner(profile: profile).commands(for: renderer.intensityEnvelope(alone))
            .filter { $0.time < 1.5 }
        #expect(followed.magnitude == planned.first?.levels.strong)
        #expect(followed.updates.map(\.time) == planned.dropFirst().map(\.time))
        #expect(followed.updates.map(\.magnitude) == planned.dropFirst().map(\.levels.strong))
        // A fall over the full range in a second: about one update per 20 ms, never two within the interval.
        #expect(followed.updates.count >= 40 && followed.updates.count <= 52)
        let times = followed.updates.map(\.time)
        #expect(zip(times, times.dropFirst()).allSatisfy { $1 - $0 >= profile.minimumUpdateInterval - 1e-9 })
        #expect(followed.period(at: 1.2) == followed.period, "sharpness does not change")
        let envelope = renderer.intensityEnvelope(pattern)
        let worst =
            (0..<1000).map { step -> Double in
                let time = 0.5 + Double(step) / 1000
                return abs(followed.level(at: time) - envelope.levels(at: time).strong)
            }.max() ?? 0
        #expect(worst <= 0.021, "the held levels stray \(worst) from the event")
    }

    @Test func anEventItsControlsSilenceAtFirstIsSilentAsAPeriodicEffectUntilTheyLetItSound() throws {
        let pattern = Build.pattern(
            [Build.continuous(at: 0.5, duration: 3, intensity: 1, sharpness: 0.5)],
            parameters: [
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0, relativeTime: 0),
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 1, relativeTime: 2),
            ])
        let program = NativePeriodicProgram(pattern: pattern, profile: .periodicForce)
        #expect(program.inexactEvents == [0])
        let followed = try #require(program.effects.first)
        #expect(followed.delay == 0.5 && followed.magnitude == 0)
        #expect(program.level(at: 0.6) == 0 && program.level(at: 1.9) == 0, "silent while the control is 0")
        #expect(program.level(at: 2.1) == 1 && program.level(at: 3.4) == 1)
        #expect(followed.updates.first?.time == 2 && followed.updates.first?.magnitude == 1)
    }

    /// A followed event is planned from the intensity envelope of its own span, rendered with only the control
    /// knots inside it (found by binary search, so that a program of thousands of such events is not quadratic):
    /// it must be the envelope of the pattern holding that event alone with all the pattern's controls, whatever
    /// lies before, across and after it.
    @Test func anEventsOwnEnvelopeIsTheWholeRenderOfThatEventAloneUnderThePatternsControls() throws {
        let events = [
            Build.continuous(at: 0, duration: 0.5, intensity: 0.9, sharpness: 0.3),
            Build.transient(at: 0.6, intensity: 1, sharpness: 0.8, decay: 0.2),
            Build.continuous(at: 1.0, duration: 0.8, intensity: 0.7, sharpness: 0.6, extra: [(.attackTime, 0.1)]),
            Build.continuous(at: 1.5, duration: 1.2, intensity: 1, sharpness: 0.1, extra: [(.releaseTime, 0.3)]),
            Build.continuous(at: 3.0, duration: 0.4, intensity: 0.5, sharpness: 0.5),
            Build.continuous(at: 4.0, duration: 0.3, intensity: 0.8, sharpness: 0.9),
        ]
        let pattern = Build.pattern(
            events,
            parameters: [
                HapticDynamicParameter(parameterID: .hapticSharpnessControl, value: 0.2, relativeTime: 1.2),
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.6, relativeTime: 3.1),
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.9, relativeTime: 4.3),
            ],
            curves: [
                Build.curve(.hapticIntensityControl, at: 0, [(0, 1), (0.3, 0.4), (0.6, 1)]),
                Build.curve(.hapticIntensityControl, at: 1.4, [(0, 0.2), (0.2, 1), (0.9, 0.5)]),
                Build.curve(.hapticIntensityControl, at: 2.5, [(0, 0.3), (0.2, 0.8)]),
            ])
        let profile = RenderProfile.periodicForce
        let renderer = PatternRenderer(profile: profile)
        let controls = ControlSet(parameters: pattern.dynamicParameters, curves: pattern.parameterCurves)
        let knots = controls.knots.sorted()
        for (index, event) in events.enumerated() {
            let voice = try #require(EventVoice(event: event, controls: controls, pulse: profile.transientPulse))
            var alone = pattern
            alone.events = [event]
            let whole = renderer.intensityEnvelope(alone)
            let own = renderer.intensityEnvelope(of: voice, controls: controls, sortedKnots: knots)
            #expect(own == whole, "event \(index)")
        }
        #expect(NativePeriodicProgram(pattern: pattern, profile: profile).inexactEvents == [0, 2, 3, 4, 5])
    }
}
