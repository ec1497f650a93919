// What reaches the device is the renderer's DeviceCommandPlanner output for the engine's profile: per profile,
// across a mix change, and the profile itself chosen from the device (or the option).
import AHAP
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import LinuxInput
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct PlannedOutputTests {
    static func transient(at time: Double, intensity: Double, sharpness: Double) -> HapticEvent {
        HapticEvent(
            type: .hapticTransient,
            parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
                HapticEventParameter(parameterID: .hapticSharpness, value: sharpness),
            ], relativeTime: time)
    }

    static func continuous(at time: Double, duration: Double, intensity: Double, sharpness: Double) -> HapticEvent {
        HapticEvent(
            type: .hapticContinuous,
            parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
                HapticEventParameter(parameterID: .hapticSharpness, value: sharpness),
            ], relativeTime: time, duration: duration)
    }

    /// Steps, a ramp under a curve, and two transients 6 ms apart (closer than any built-in profile's interval but
    /// the virtual pad's 4 ms).
    static let pattern = HapticPattern(
        events: [
            transient(at: 0, intensity: 1, sharpness: 0),
            continuous(at: 0.1, duration: 0.4, intensity: 0.9, sharpness: 0.3),
            transient(at: 0.6, intensity: 0.8, sharpness: 1),
            transient(at: 0.606, intensity: 0.4, sharpness: 0.2),
        ],
        parameters: [],
        parameterCurves: [
            HapticParameterCurve(
                parameterID: .hapticIntensityControl,
                controlPoints: [.init(relativeTime: 0, value: 0.2), .init(relativeTime: 0.3, value: 1)],
                relativeTime: 0.15)
        ])

    /// Plays `pattern` from engine time 10 and returns what the output received, next to the planner's commands.
    static func play(
        _ pattern: HapticPattern, outputProfile: RenderProfile, option: RenderProfile? = nil
    ) throws -> (sent: [(time: Double, mix: MotorMagnitudes)], planned: [RumbleCommand], engine: RenderProfile) {
        var options = HapticEngineOptions()
        options.renderProfile = option
        let clock = ManualClock(startingAt: 10)
        let recorder = RecordingOutput(renderProfile: outputProfile)
        let engine = HapticEngine(output: .recording(recorder), options: options, clock: clock, logger: quietLogger())
        try engine.start()
        try engine.makePlayer(with: pattern).start(atTime: 0)
        clock.advance(by: 2)
        let profile = engine.renderProfile
        let planned = DeviceCommandPlanner(profile: profile).commands(
            for: PatternRenderer(profile: profile).render(pattern))
        return (recorder.appliedMixes().map { ($0.time - 10, $0.mix) }, planned, profile)
    }

    @Test(arguments: RenderProfile.builtIn)
    func commandsSentAreThePlannersForTheOutputsProfile(profile: RenderProfile) throws {
        let run = try Self.play(Self.pattern, outputProfile: profile)
        #expect(run.engine == profile)
        try #require(run.sent.count == run.planned.count, "\(run.sent.count) sent, \(run.planned.count) planned")
        for (sent, command) in zip(run.sent, run.planned) {
            #expect(abs(sent.time - command.time) < 1e-9, "at \(command.time) (\(profile.name))")
            #expect(sent.mix == command.levels, "at \(command.time) (\(profile.name))")
        }
    }

    @Test func twoBreakpointsCloserThanTheIntervalAreOneCommandAtTheDeadline() throws {
        // 0.5 for 10 ms then 0.8: the profile allows one update per 20 ms. The planner sends at 0 (waiting for
        // the jump would leave the motor off for 10 ms: more error) the mean over the 20 ms that level holds,
        // 0.65, and 0.8 at the deadline, 20 ms.
        let rig = try Rig(renderProfile: .everyTwentyMilliseconds)
        let steps = timeline(pulse(0.5, 0.5, to: 0.01), pulse(0.8, 0.8, from: 0.01, to: 0.2))
        try rig.engine.makeAdvancedPlayer(timeline: steps).start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.65), weak: q(0.65)), Change(at: 0.02, strong: q(0.8), weak: q(0.8)),
                Change(at: 0.2, .off),
            ])
        #expect(rig.applied() == planned(steps, profile: .everyTwentyMilliseconds))
        #expect(!rig.applied().contains { $0.time == 10_000 }, "nothing is sent at the second breakpoint itself")
    }

    @Test func aChangeBetweenTwoNonZeroLevelsGoesOutTheOutputsLeadEarlyAStartAndAStopOnTime() throws {
        // An output whose such changes land on the kernel's next tick (evdev beside the keeper) asks for them 2 ms
        // early. The start from rest (a play) and the stop land at once: on time. Renewals count from the
        // commands' times, as the planner counts them: none just before the stop.
        let rig = try Rig(changeLead: 0.002)
        let steps = timeline(pulse(0.5, 0.5, to: 0.1), pulse(0.8, 0.8, from: 0.1, to: 0.2))
        try rig.engine.makeAdvancedPlayer(timeline: steps).start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.098, strong: q(0.8), weak: q(0.8)),
                Change(at: 0.2, .off),
            ])
        let renewals = rig.recorder.records().filter { $0.time >= 10 && $0.action == .keepAlive }
        #expect(renewals.map { (($0.time - 10) * 1000).rounded() } == [50, 150], "milliseconds after the start")
    }

    @Test func aThreadWokenLateWithinAnUpdatesLeadOfAStopWritesTheLevelDueAndTheStopNeverBeforeItsTime() throws {
        // 0.5, then 0.3 at 0.1 for 10 ms, then off at 0.11 (the generic profile's minimum interval is 10 ms). The
        // thread wakes at 0.1085: the 0.3 is due, and the stop lies within the 2 ms an update alone is written
        // early. A stop lands at once, so it has no lead: the 0.3 goes out now, late, and the stop once the device
        // takes a change again, a minimum interval later, never 1.5 ms before its time.
        let rig = try Rig(changeLead: 0.002)
        let steps = timeline(pulse(0.5, 0.5, to: 0.1), pulse(0.3, 0.3, from: 0.1, to: 0.11))
        #expect(
            planned(steps) == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.1, strong: q(0.3), weak: q(0.3)),
                Change(at: 0.11, .off),
            ], "the plan this test is about")
        try rig.engine.makeAdvancedPlayer(timeline: steps).start(atTime: 0)
        rig.clock.advance(by: 0.09)
        rig.clock.wakeLate(at: 10.1085)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.1085, strong: q(0.3), weak: q(0.3)),
                Change(at: 0.1185, .off),
            ])
    }

    @Test func aRestInsideAPatternStagesTheLevelTheNextCommandRisesToRightAfterItsStop() throws {
        let rig = try Rig()
        let pulses = timeline(pulse(0.5, 0.5, to: 0.05), pulse(0.7, 0.3, from: 0.1, to: 0.15))
        try rig.engine.makeAdvancedPlayer(timeline: pulses).start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(pulses))
        let staged = rig.recorder.stagedMixes().filter { $0.time > 10 }.map { Change(at: $0.time - 10, $0.mix) }
        #expect(staged == [Change(at: 0.05, strong: q(0.7), weak: q(0.3))])
    }

    @Test func aThreadWokenPastTheStagedRiseAndTheCommandAfterItWritesTheLaterLevelInsteadOfTheStagedOne() throws {
        var options = HapticEngineOptions()
        options.renderProfile = .virtualPad
        let rig = try Rig(options: options)
        let pulses = timeline(
            pulse(0.5, 0.5, to: 0.05), pulse(0.3, 0.3, from: 0.1, to: 0.11), pulse(0.6, 0.6, from: 0.11, to: 0.2))
        try rig.engine.makeAdvancedPlayer(timeline: pulses).start(atTime: 0)
        rig.clock.advance(by: 0.06)
        rig.clock.wakeLate(at: 10.112)
        rig.clock.advance(by: 1)
        let staged = rig.recorder.stagedMixes().filter { $0.time > 10 }.map { Change(at: $0.time - 10, $0.mix) }
        #expect(staged == [Change(at: 0.05, strong: 0.3, weak: 0.3)], "the rise's first level, staged in the rest")
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 0.5, weak: 0.5), Change(at: 0.05, .off),
                Change(at: 0.112, strong: 0.6, weak: 0.6), Change(at: 0.2, .off),
            ], "the level that holds when the thread woke, not the staged one it passed")
    }

    @Test func aPatternOpeningWithSilenceStagesItsFirstLevelWhenItStarts() throws {
        let rig = try Rig()
        let late = timeline(pulse(0.5, 0.5, from: 0.035, to: 0.075))
        try rig.engine.makeAdvancedPlayer(timeline: late).start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(late))
        let staged = rig.recorder.stagedMixes().map { Change(at: $0.time - 10, $0.mix) }
        #expect(staged == [Change(at: 0, strong: q(0.5), weak: q(0.5))])
    }

    @Test func theSameBreakpointsGoOutAtOnceOnAFasterProfile() throws {
        var options = HapticEngineOptions()
        options.renderProfile = .virtualPad
        let rig = try Rig(options: options)
        let steps = timeline(pulse(0.5, 0.5, to: 0.01), pulse(0.8, 0.8, from: 0.01, to: 0.2))
        try rig.engine.makeAdvancedPlayer(timeline: steps).start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: 0.5, weak: 0.5), Change(at: 0.01, strong: 0.8, weak: 0.8), Change(at: 0.2, .off),
            ])
    }

    @Test func aPlayerStartingMidwayReplansFromItsStart() throws {
        let rig = try Rig()
        let ramp = MotorTimeline.Segment(
            start: 0, end: 0.4, startLevels: MotorMagnitudes(strong: 0.2, weak: 0),
            endLevels: MotorMagnitudes(strong: 0.61, weak: 0))
        let tap = timeline(pulse(0, 0.7, to: 0.05))
        try rig.engine.makeAdvancedPlayer(timeline: timeline(ramp)).start(atTime: 0)
        try rig.engine.makeAdvancedPlayer(timeline: tap).start(atTime: 10.1)
        rig.clock.advance(by: 1)
        // The plan made at 0.1 resumes from what the device holds: the planner run on the whole mix, resumed at
        // the last command before 0.1, gives the same commands. (The ramp avoids a level exactly half-way between
        // two steps at 0.1: engine times carry rounding of ~1e-15 s that could tip such a tie.)
        let mix = MotorTimeline.mixed([timeline(ramp), tap.shifted(by: 0.1)])
        let planner = DeviceCommandPlanner(profile: .genericRumble)
        let before = planner.commands(for: timeline(ramp)).filter { $0.time < 0.1 }
        let last = try #require(before.last)
        let after = planner.commands(
            for: mix, from: 0.1, resuming: .init(sent: last.levels, lastCommandTime: last.time))
        #expect(rig.applied() == (before + after).map { Change(at: $0.time, $0.levels) })
        #expect(rig.applied().contains { $0.weak > 0 }, "the tap is in the mix")
    }

    /// One player whose timeline ramps from off to twice full over a second is sent full from 0.5 s on, where it
    /// crosses full: the planner's commands for the ramp clamped there, as two players' sum is clamped. The mix
    /// of one player was its timeline as it was, clamped only at each stretch's ends, so the line from off to
    /// full over the whole second was sent (0.761 at 742 ms).
    @Test func onePlayerAboveFullIsSentFullFromWhereItCrosses() throws {
        let rig = try Rig()
        let ramp = MotorTimeline.Segment(
            start: 0, end: 1, startLevels: .off, endLevels: MotorMagnitudes(strong: 2, weak: 0))
        try rig.engine.makeAdvancedPlayer(timeline: timeline(ramp)).start(atTime: 0)
        rig.clock.advance(by: 2)
        let clamped = timeline(
            MotorTimeline.Segment(
                start: 0, end: 0.5, startLevels: .off, endLevels: MotorMagnitudes(strong: 1, weak: 0)),
            pulse(1, 0, from: 0.5, to: 1))
        let planned = DeviceCommandPlanner(profile: .genericRumble).commands(for: clamped)
        #expect(rig.applied() == planned.map { Change(at: $0.time, $0.levels) })
        for moment in [500_000, 600_000, 742_000, 999_000] {
            #expect(rig.applied().last { $0.time <= moment }?.strong == 1000, "at \(moment) us: \(rig.applied())")
        }
    }

    // MARK: A playback thread woken late

    /// Three taps of 30 ms, 100 ms apart, at 0.5, 0.7 and 0.6 on both motors.
    static let taps = timeline(
        pulse(0.5, 0.5, to: 0.03), pulse(0.7, 0.7, from: 0.1, to: 0.13), pulse(0.6, 0.6, from: 0.2, to: 0.23))

    /// Plays `taps` on `rig` from 10 s, on time for `onTime` seconds, then wakes the thread late, `late` seconds
    /// in, and runs a second more on time.
    static func playTaps(on rig: Rig, onTimeFor onTime: Double, wakingLateAt late: Double) throws {
        try rig.engine.makeAdvancedPlayer(timeline: taps).start(atTime: 0)
        rig.clock.advance(by: onTime)
        rig.clock.wakeLate(at: 10 + late)
        rig.clock.advance(by: 1)
    }

    @Test func aTapTheThreadSleptThroughWholeIsWrittenWhenItWakesAndTheTapsAfterItStayOnTime() throws {
        // Woken at 0.14, past the second tap's rise (0.1) and its end (0.13): it goes out then, holds the
        // profile's 20 ms interval, and the third tap comes at its own time. The playback observer is told.
        let samples = Lock<[PlaybackSample]>([])
        var options = HapticEngineOptions()
        options.playbackObserver = { sample in samples.withLock { $0.append(sample) } }
        let rig = try Rig(options: options, renderProfile: .everyTwentyMilliseconds)
        try Self.playTaps(on: rig, onTimeFor: 0.05, wakingLateAt: 0.14)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.03, .off),
                Change(at: 0.14, strong: q(0.7), weak: q(0.7)), Change(at: 0.16, .off),
                Change(at: 0.2, strong: q(0.6), weak: q(0.6)), Change(at: 0.23, .off),
            ])
        // What follows the late level is the planner's plan resumed from its write (as the kernel tier checks it).
        let planner = DeviceCommandPlanner(profile: .everyTwentyMilliseconds)
        let first = planner.commands(for: Self.taps).prefix(2)
        var holds = first.reduce(DeviceCommandPlanner.Resumption.deviceOff) { planner.resumption(after: $1, from: $0) }
        holds = planner.resumption(
            after: RumbleCommand(time: 0.14, levels: MotorMagnitudes(strong: q(0.7), weak: q(0.7)), holdDuration: nil),
            from: holds)
        let resumed = planner.commands(for: Self.taps, from: 0.14, resuming: holds)
        #expect(Array(rig.applied().dropFirst(3)) == resumed.map { Change(at: $0.time, $0.levels) })
        let late = samples.withLock { $0 }.filter(\.wokeLate).map { [$0.deadline, $0.sent, $0.mix.strong] }
        #expect(late == [[10.1, 10.14, q(0.7)]])
    }

    @Test func aRampsOpeningSleptThroughGoesOnAsTheWholeTimelinesPlanResumedFromItsWriteNotAsARiseFromSilence()
        throws
    {
        // A ramp down from 0.9 on the virtual pad, started ahead: its plan opens with two commands 4 ms apart, and
        // the thread wakes 4.15 ms after the start, past the first. That level goes out then (slept through, and a
        // step stronger than the second); the plan made after it is the whole ramp's resumed from that write, as
        // for any level slept through. It used to read the instant of the write as a rise from silence (the mix
        // planned from there had nothing before it) and send the next level at the rate limit, 4 ms later.
        let samples = Lock<[PlaybackSample]>([])
        var options = HapticEngineOptions()
        options.playbackObserver = { sample in samples.withLock { $0.append(sample) } }
        let rig = try Rig(options: options, renderProfile: .virtualPad)
        let ramp = timeline(
            MotorTimeline.Segment(
                start: 0, end: 4, startLevels: .init(strong: 0.9, weak: 0.7), endLevels: .init(strong: 0.1, weak: 0.05))
        )
        let planner = DeviceCommandPlanner(profile: .virtualPad)
        let whole = planner.commands(for: ramp)
        #expect(whole[1].time - whole[0].time < 0.005, "the ramp's plan does not open with two close commands")
        let start = 10.05
        try rig.engine.makeAdvancedPlayer(timeline: ramp).start(atTime: start)
        rig.clock.set(to: start - 0.0001)
        rig.clock.wakeLate(at: start + 0.00415)
        rig.clock.advance(by: 5)
        let applied = samples.withLock { $0 }.filter { $0.kind == .apply }
        let first = try #require(applied.first)
        #expect(first.wokeLate && first.deadline == start && first.mix == whole[0].levels)
        let written = first.sent - start
        let resumed = planner.commands(
            for: ramp, from: written,
            resuming: planner.resumption(
                after: RumbleCommand(time: written, levels: first.mix, holdDuration: nil), from: .deviceOff))
        expectSameChanges(
            applied.dropFirst().map { Change(at: $0.deadline - start, $0.mix) },
            resumed.map { Change(at: $0.time, $0.levels) }, "after the level slept through")
    }

    @Test func aLastTapTheThreadSleptThroughWithThePlayersEndIsWrittenWhenItWakes() throws {
        // Woken at 0.25, past the last tap and the pattern's end: the player has finished and the mix is planned
        // again from its end, but the tap still goes out, then the motors stop after one interval (20 ms).
        let rig = try Rig(renderProfile: .everyTwentyMilliseconds)
        try Self.playTaps(on: rig, onTimeFor: 0.15, wakingLateAt: 0.25)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.03, .off),
                Change(at: 0.1, strong: q(0.7), weak: q(0.7)), Change(at: 0.13, .off),
                Change(at: 0.25, strong: q(0.6), weak: q(0.6)), Change(at: 0.27, .off),
            ])
    }

    @Test(arguments: [[0.8, 0.5, 0.3], [0.3, 0.5, 0.8]])
    func stepsTheThreadSleptThroughBetweenTwoLevelsAreNotReplayed(levels: [Double]) throws {
        // A fall or a rise whose middle step was never sent: the level that holds when the thread wakes covers it.
        let rig = try Rig()
        let steps = timeline(
            pulse(levels[0], levels[0], to: 0.05), pulse(levels[1], levels[1], from: 0.05, to: 0.1),
            pulse(levels[2], levels[2], from: 0.1, to: 0.2))
        try rig.engine.makeAdvancedPlayer(timeline: steps).start(atTime: 0)
        rig.clock.advance(by: 0.01)
        rig.clock.wakeLate(at: 10.12)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(levels[0]), weak: q(levels[0])),
                Change(at: 0.12, strong: q(levels[2]), weak: q(levels[2])), Change(at: 0.2, .off),
            ])
    }

    /// Plays `timeline` on a rig of `everyTwentyMilliseconds` from 10 s with a playback observer, on time for
    /// `onTime` seconds, then wakes the thread late, `late` seconds in, and runs a second more on time; the rig and
    /// what the observer saw.
    static func observe(_ timeline: MotorTimeline, onTimeFor onTime: Double, wakingLateAt late: Double) throws -> (
        Rig, [PlaybackSample]
    ) {
        let samples = Lock<[PlaybackSample]>([])
        var options = HapticEngineOptions()
        options.playbackObserver = { sample in samples.withLock { $0.append(sample) } }
        let rig = try Rig(options: options, renderProfile: .everyTwentyMilliseconds)
        try rig.engine.makeAdvancedPlayer(timeline: timeline).start(atTime: 0)
        rig.clock.advance(by: onTime)
        rig.clock.wakeLate(at: 10 + late)
        rig.clock.advance(by: 1)
        return (rig, samples.withLock { $0 })
    }

    /// The samples `rig`'s observer saw, as (deadline, sent) in microseconds after 10 s, and whether late.
    static func timings(_ samples: [PlaybackSample]) -> [[Int]] {
        samples.map { sample in
            [sample.deadline, sample.sent].map { Int((($0 - 10) * 1e6).rounded()) } + [sample.wokeLate ? 1 : 0]
        }
    }

    @Test(arguments: [RenderProfile.genericRumble, .switchPro, .virtualPad])
    func aLongPatternPlannedAHorizonAtATimeSendsWhatItsWholePlanDoes(profile: RenderProfile) throws {
        // Seven seconds: a step, a slow rise, a tap, a slow fall. The engine plans 2 s (and a look-ahead) at a time
        // and plans again at each horizon, continuing the mix across it: the step at 13 ms puts the renewals that
        // carry the rise's levels off the horizons' instants.
        let rig = try Rig(renderProfile: profile)
        let long = timeline(
            pulse(0.5, 0.4, to: 0.013),
            MotorTimeline.Segment(
                start: 0.013, end: 3.1, startLevels: .init(strong: 0.11, weak: 0.07),
                endLevels: .init(strong: 0.23, weak: 0.13)),
            pulse(1, 1, from: 3.1, to: 3.16),
            MotorTimeline.Segment(
                start: 3.16, end: 4.5, startLevels: .init(strong: 0.83, weak: 0.61),
                endLevels: .init(strong: 0.79, weak: 0.6)),
            MotorTimeline.Segment(
                start: 4.5, end: 7, startLevels: .init(strong: 0.83, weak: 0.61),
                endLevels: .init(strong: 0.05, weak: 0.02)))
        // Started ahead, it is planned by the pass (a start now would take the player's whole solo plan).
        try rig.engine.makeAdvancedPlayer(timeline: long).start(atTime: 10.1)
        rig.clock.advance(by: 8)
        // The same commands, at the same levels; their times agree within 0.1 ms. A drift's instant is solved for
        // numerically, and after each horizon from another origin: the difference grows by microseconds a drift
        // (12 µs at most here, by the end).
        expectSameChanges(
            rig.applied(since: 10.1 - profile.outputLatency), planned(long, profile: profile), profile.name)
    }

    @Test func aCommandHeldBackAtALongMixsHorizonGoesOutAndThePlanGoesOnFromIt() throws {
        // The command before the first horizon goes out late, 5 ms before the horizon's command, which then waits
        // the 20 ms interval. The horizon is due only once that command is written: every command after it still
        // goes out, and the motors stop at the end.
        let rig = try Rig(renderProfile: .everyTwentyMilliseconds)
        let ramp = rampAfterAStep(to: 4, from: .init(strong: 0.1, weak: 0.1), to: .init(strong: 0.9, weak: 0.7))
        let whole = DeviceCommandPlanner(profile: .everyTwentyMilliseconds).commands(for: ramp)
        let k = try #require(whole.firstIndex { $0.time >= 2 })
        try rig.engine.makeAdvancedPlayer(timeline: ramp).start(atTime: 10.1)
        rig.clock.set(to: 10.1 + whole[k - 1].time - 0.0001)
        rig.clock.wakeLate(at: 10.1 + whole[k].time - 0.005)
        rig.clock.advance(by: 3)
        let sent = rig.applied(since: 10.1)
        let after = sent.filter { $0.time > Int((whole[k].time * 1e6).rounded()) }
        #expect(sent.contains(Change(at: whole[k].time + 0.015, whole[k].levels)), "\(sent)")
        #expect(after.count >= whole.count - k - 2, "\(after.count) of \(whole.count - k - 1)")
        #expect(sent.last == Change(at: 4, .off))
    }

    @Test(arguments: [false, true])
    func aHorizonsCommandWrittenLateLeavesTheRestOfTheWholePlanAsItWas(startsNow: Bool) throws {
        // A gentle ramp on the virtual pad: its commands are drifts, about 50 ms apart. The first horizon's command
        // goes out 2.4 ms late (the thread was slow, not asleep through a level). The plan made at the horizon
        // resumes from that command as the whole plan counts it, at its time: every command after it is the
        // whole plan's, at its time, as after a late write anywhere else in a plan. Started ahead, the pass made
        // the plan up to the horizon; started now, it is the solo plan made with the player.
        let samples = Lock<[PlaybackSample]>([])
        var options = HapticEngineOptions()
        options.playbackObserver = { sample in samples.withLock { $0.append(sample) } }
        let rig = try Rig(options: options, renderProfile: .virtualPad)
        let ramp = rampAfterAStep(to: 4, from: .init(strong: 0.1, weak: 0.05), to: .init(strong: 0.35, weak: 0.2))
        let whole = DeviceCommandPlanner(profile: .virtualPad).commands(for: ramp)
        // The engine plans a long mix 2 s at a time: the first horizon is the first command at or past 2 s.
        let k = try #require(whole.firstIndex { $0.time >= 2 })
        #expect(whole[k + 1].time - whole[k].time > 0.01, "the commands after the horizon are not drifts")
        let start = startsNow ? 10 : 10.1
        let player = try rig.engine.makeAdvancedPlayer(timeline: ramp)
        try player.start(atTime: startsNow ? 0 : start)
        if startsNow { #expect(rig.applied() == [Change(at: 0, whole[0].levels)], "the start wrote its opening") }
        rig.clock.set(to: start + whole[k].time - 0.0001)
        rig.clock.wakeLate(at: start + whole[k].time + 0.0024)
        rig.clock.advance(by: 3)
        let applied = samples.withLock { $0 }.filter { $0.kind == .apply }
        #expect(applied.allSatisfy { !$0.wokeLate })
        expectSameChanges(
            applied.map { Change(at: $0.deadline - start, $0.mix) }, whole.map { Change(at: $0.time, $0.levels) },
            "deadlines")
        #expect(rig.applied(since: start).contains(Change(at: whole[k].time + 0.0024, whole[k].levels)))
    }

    @Test func aCommandWrittenLateCountsFromWhenItWentOutAndTheNextWaitsTheIntervalFromIt() throws {
        // 0.8 is due at 0.1 and goes out at 0.11: the 0.3 planned for 0.12 waits out the profile's 20 ms
        // interval from 0.11, as the device saw the writes. The plan is kept: no level is planned again.
        let steps = timeline(
            pulse(0.5, 0.5, to: 0.1), pulse(0.8, 0.8, from: 0.1, to: 0.12), pulse(0.3, 0.3, from: 0.12, to: 0.2))
        let (rig, samples) = try Self.observe(steps, onTimeFor: 0.05, wakingLateAt: 0.11)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.11, strong: q(0.8), weak: q(0.8)),
                Change(at: 0.13, strong: q(0.3), weak: q(0.3)), Change(at: 0.2, .off),
            ])
        let applied = samples.filter { $0.kind == .apply }
        #expect(
            Self.timings(applied) == [
                [0, 0, 0], [100_000, 110_000, 0], [120_000, 130_000, 0], [200_000, 200_000, 0],
            ])
    }

    @Test func aCommandWrittenLateOnARampLeavesTheRestOfThePlanAsItWas() throws {
        // A gentle ramp's second command goes out 1.5 ms late; the next is due well after the interval from it, so
        // every other command goes out as planned, at its time.
        let rig = try Rig(renderProfile: .virtualPad)
        let ramp = MotorTimeline(segments: [
            .init(
                start: 0, end: 0.5, startLevels: .init(strong: 0.01, weak: 0.02),
                endLevels: .init(strong: 0.3, weak: 0.2))
        ])
        let planned = DeviceCommandPlanner(profile: .virtualPad).commands(for: ramp)
        try rig.engine.makeAdvancedPlayer(timeline: ramp).start(atTime: 0)
        rig.clock.set(to: 10 + planned[1].time - 0.0001)
        let late = planned[1].time + 0.0015
        #expect(planned[2].time >= late + RenderProfile.virtualPad.minimumUpdateInterval)
        rig.clock.wakeLate(at: 10 + late)
        rig.clock.advance(by: 1)
        #expect(
            rig.applied()
                == planned.enumerated().map { index, command in
                    Change(at: index == 1 ? late : command.time, command.levels)
                })
    }

    @Test func aRenewalWrittenLateCountsFromWhenItWentOutAndTheChangeAfterItKeepsItsTime() throws {
        // The profile renews a held level every 50 ms. The renewal due at 0.25 goes out at 0.285, later than
        // the 5 ms a renewal may be and still count at its time: the budget counts it then (2 of its 3 writes left,
        // refilling at 50 a second), which leaves the change planned for 0.3 its time. The minimum interval counts
        // from the last command, at 0: a renewal repeats the level held.
        let steps = timeline(pulse(0.5, 0.5, to: 0.3), pulse(0.8, 0.8, from: 0.3, to: 0.4))
        let (rig, samples) = try Self.observe(steps, onTimeFor: 0.24, wakingLateAt: 0.285)
        #expect(
            rig.applied() == [
                Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.3, strong: q(0.8), weak: q(0.8)),
                Change(at: 0.4, .off),
            ])
        let renewals = samples.filter { $0.kind == .keepAlive }
        #expect(Self.timings(renewals).contains([250_000, 285_000, 0]))
    }

    @Test func aTapTheThreadSleptThroughBeforeAStopIsNotWrittenAfterIt() throws {
        // The stop at 0.12 asks for silence from then on: the second tap, due at 0.1, is not written at 0.14.
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: Self.taps)
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.05)
        try player.stop(atTime: 10.12)
        rig.clock.wakeLate(at: 10.14)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == [Change(at: 0, strong: q(0.5), weak: q(0.5)), Change(at: 0.03, .off)])
    }

    @Test func theEngineOptionOverridesTheOutputsProfile() throws {
        let run = try Self.play(Self.pattern, outputProfile: .xpad, option: .xboxBluetooth)
        #expect(run.engine == .xboxBluetooth)
        #expect(run.sent.map(\.mix) == run.planned.map(\.levels))
        #expect(run.sent.allSatisfy { ($0.mix.strong * 100).rounded() / 100 == $0.mix.strong }, "0...100 levels")
    }

    @Test func anEngineWithoutOutputPlaysGeneric() {
        let engine = HapticEngine(
            output: .recording(RecordingOutput(renderProfile: .xpad)), clock: ManualClock(), logger: quietLogger())
        #expect(engine.renderProfile == .genericRumble)
        #expect(throws: Never.self) { try engine.start() }
        #expect(engine.renderProfile == .xpad)
    }
}

@Suite struct DeviceProfileTests {
    func identity(vendor: UInt16, product: UInt16, bus: InputBus = .usb, name: String = "pad") -> InputDeviceIdentity {
        InputDeviceIdentity(name: name, bus: bus, vendor: vendor, product: product)
    }

    @Test func theDriverAndIdentityChooseTheProfile() {
        let cases: [(String?, InputDeviceIdentity, RenderProfile)] = [
            ("xpad", identity(vendor: 0x045e, product: 0x028e), .xpad),
            ("playstation", identity(vendor: 0x054c, product: 0x0ce6), .dualSense),
            ("playstation", identity(vendor: 0x054c, product: 0x0df2, bus: .bluetooth), .dualSense),
            ("playstation", identity(vendor: 0x054c, product: 0x09cc), .dualShock4),
            ("sony", identity(vendor: 0x054c, product: 0x05c4), .dualShock4),
            ("sony", identity(vendor: 0x054c, product: 0x0268), .dualShock3),
            ("microsoft", identity(vendor: 0x045e, product: 0x0b13, bus: .bluetooth), .xboxBluetooth),
            ("xpadneo", identity(vendor: 0x045e, product: 0x0b13, bus: .bluetooth), .xboxBluetooth),
            ("microsoft", identity(vendor: 0x045e, product: 0x0b13, bus: .usb), .genericRumble),
            ("nintendo", identity(vendor: 0x057e, product: 0x2009), .switchPro),
            // A Joy-Con plays its own side of hid-nintendo's frame: the left one the strong level, the right one the
            // weak level.
            (
                "nintendo",
                identity(vendor: 0x057e, product: 0x2006, bus: .bluetooth, name: "Nintendo Switch Left Joy-Con"),
                .switchPro.withMotors(strong: true, weak: false)
            ),
            (
                "nintendo",
                identity(vendor: 0x057e, product: 0x2007, bus: .bluetooth, name: "Nintendo Switch Right Joy-Con"),
                .switchPro.withMotors(strong: false, weak: true)
            ),
            (
                "nintendo", identity(vendor: 0x057e, product: 0x200e, name: "Nintendo Switch Left Joy-Con (Grip)"),
                .switchPro.withMotors(strong: true, weak: false)
            ),
            (
                "nintendo", identity(vendor: 0x057e, product: 0x200e, name: "Nintendo Switch Right Joy-Con (Grip)"),
                .switchPro.withMotors(strong: false, weak: true)
            ),
            ("dragonrise", identity(vendor: 0x0079, product: 0x0006), .genericRumble),
            // The choice never depends on our own test pad's identity: it is driven like any uinput device.
            (
                nil, identity(vendor: 0x1209, product: 0x0001, bus: .virtual, name: "Haptics Virtual Rumble Pad"),
                .genericRumble
            ),
            (nil, identity(vendor: 0x1234, product: 0x5678, bus: .virtual), .genericRumble),
            ("hid-generic", identity(vendor: 0x1209, product: 0x0001), .genericRumble),
            ("hid-generic", identity(vendor: 0x0079, product: 0x0006), .genericRumble),
        ]
        for (driver, identity, expected) in cases {
            #expect(
                RenderProfile.forDevice(driver: driver, identity: identity) == expected,
                "\(driver ?? "no driver") \(identity.vendor):\(identity.product)")
        }
    }
}
