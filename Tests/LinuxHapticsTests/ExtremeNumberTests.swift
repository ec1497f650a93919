// The engine given numbers no AHAP file can hold: patterns and timelines built in code, loops of a
// nanosecond, deadlines centuries away. It refuses what it cannot play and never traps or spins.
import AHAP
import HapticRendering
@testable import LinuxHaptics
@_spi(Internals) import LinuxSystem
import Testing

@Suite struct ExtremeNumberTests {
    private static let tap = HapticEvent(type: .hapticTransient, relativeTime: 0)

    /// Patterns the reader would refuse for their numbers or size are refused with `invalidArgument`, naming
    /// the problem, and nothing reaches the output.
    @Test(arguments: [
        (
            HapticPattern(events: [tap, HapticEvent(type: .hapticTransient, relativeTime: 1e308)], parameters: []),
            "time-too-large"
        ),
        (
            HapticPattern(
                events: [HapticEvent(type: .hapticContinuous, relativeTime: .nan, duration: 1)], parameters: []),
            "non-finite-number"
        ),
        (
            HapticPattern(
                events: Array(repeating: tap, count: AHAPLimits.default.maximumPatternEntries + 1), parameters: []),
            "limit-exceeded"
        ),
        (
            HapticPattern(
                events: [tap],
                parameterCurves: [
                    HapticParameterCurve(
                        parameterID: .hapticIntensityControl,
                        controlPoints: [.init(relativeTime: 0, value: 1), .init(relativeTime: 1e308, value: 0)],
                        relativeTime: 0)
                ]), "time-too-large"
        ),
    ])
    func unplayablePatternsAreRefused(pattern: HapticPattern, code: String) throws {
        let rig = try Rig()
        #expect {
            try rig.engine.makePlayer(with: pattern)
        } throws: { error in
            let engineError = error as? HapticEngineError
            return engineError?.kind == .invalidArgument && engineError?.message.contains(code) == true
        }
        rig.clock.advance(by: 1)
        #expect(rig.applied().isEmpty)
    }

    @Test func timelinesPastTheBoundAreRefused() throws {
        let rig = try Rig()
        for end in [1e308, Double.infinity, HapticEngine.maximumTimelineLength + 1] {
            #expect(throws: HapticEngineError.self) {
                try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: end)))
            }
        }
        let longest = try rig.engine.makeAdvancedPlayer(
            timeline: timeline(pulse(1, 1, to: HapticEngine.maximumTimelineLength)))
        #expect(longest.phase == .idle)
    }

    /// A loop of a nanosecond (a pattern whose one event lasts 1e-300 s) repeats every millisecond at most:
    /// the engine mixes a bounded number of periods, keeps time and stops when told (the planner sends nothing
    /// for pulses no motor can play). Without the bound, `advance` would never return.
    @Test func tinyLoopsAreBounded() throws {
        let rig = try Rig()
        let pattern = HapticPattern(
            events: [HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 1e-300)], parameters: [])
        let players = [
            try rig.engine.makeAdvancedPlayer(with: pattern),
            try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 1e-9))),
        ]
        for player in players {
            player.loopEnabled = true
            try player.start(atTime: 0)
            try player.stop(atTime: rig.engine.currentTime + 0.5)
        }
        rig.clock.advance(by: 0.25)
        #expect(players.map(\.phase) == [.playing, .playing])
        rig.clock.advance(by: 0.75)
        #expect(players.map(\.phase) == [.stopped, .stopped])
        #expect(rig.applied().count < 500)
    }

    /// A player at an offset far past its loop's length (a seek while it did not loop, then looping on) plays its
    /// loop: counting passes from there added nothing to the offset, and the planning never ended (`start` spun
    /// for ever, on the real clock the playback thread), until 6 December.
    @Test func aLoopingPlayerFarPastItsLoopPlaysItsLoop() throws {
        let rig = try Rig()
        let tone = HapticPattern(
            events: [HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 0.1)], parameters: [])
        let player = try rig.engine.makeAdvancedPlayer(with: tone)
        try player.seek(toOffset: 1e16)
        player.loopEnabled = true
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.5)
        #expect(player.phase == .playing)
        #expect(rig.applied().contains { $0.strong > 0 }, "the loop drives the motors")
        try player.stop(atTime: 0)
        rig.clock.advance(by: 0.1)
        #expect(rig.applied().last.map { $0.strong == 0 && $0.weak == 0 } == true, "at rest after the stop")
    }

    /// A looping player at the largest rate a `Double` holds keeps an offset within its loop and plays its loop
    /// seconds later, when its pattern time has passed what a `Double` holds (the offset was not a number, until
    /// 6 December), with a control held for the largest time there is.
    @Test func aLoopingPlayerAtAnEnormousRateStaysWithinItsLoop() throws {
        let rig = try Rig()
        let tone = HapticPattern(
            events: [HapticEvent(type: .hapticContinuous, relativeTime: 0, duration: 0.1)], parameters: [])
        let player = try rig.engine.makeAdvancedPlayer(with: tone)
        player.loopEnabled = true
        player.playbackRate = .greatestFiniteMagnitude
        try player.start(atTime: 0)
        try player.sendParameters(
            [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0)],
            atTime: .greatestFiniteMagnitude)
        for _ in 0..<5 {
            rig.clock.advance(by: 1)
            #expect((0..<0.1).contains(player.currentOffset), "offset \(player.currentOffset)")
            #expect(player.phase == .playing)
        }
        #expect(rig.applied().contains { $0.strong > 0 }, "the loop drives the motors")
        try player.stop(atTime: 0)
        rig.clock.advance(by: 0.1)
        #expect(rig.applied().last.map { $0.strong == 0 && $0.weak == 0 } == true, "at rest after the stop")
    }

    /// A profile's update interval is held within 0 ... 1 s, NaN as 0, however it is given: an infinite one made
    /// the plan's horizon infinite, and a looping player's planning never ended (until 6 December).
    @Test(arguments: [Double.infinity, 1e300, .nan, -1])
    func aProfilesUpdateIntervalIsBoundedAndALoopPlaysOnIt(interval: Double) throws {
        var profile = RenderProfile(name: "odd", strongSteps: 255, weakSteps: 255, minimumUpdateInterval: interval)
        #expect((0...RenderProfile.longestUpdateInterval).contains(profile.minimumUpdateInterval))
        profile.minimumUpdateInterval = interval
        #expect((0...RenderProfile.longestUpdateInterval).contains(profile.minimumUpdateInterval))
        let rig = try Rig(renderProfile: profile)
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        player.loopEnabled = true
        try player.start(atTime: 0)
        rig.clock.advance(by: 2.5)
        #expect(player.phase == .playing)
        #expect(!rig.applied().isEmpty)
    }

    /// A profile's transient pulse is held within 0 ... 1 s, NaN as 0, however it is given, so every renderer equals
    /// itself: the engine renders a player again until its renderer is the one in use, and with a NaN pulse
    /// `makePlayer` and `start()` spun for ever (until 7 December). The player is made, started and plays.
    @Test(arguments: [Double.nan, .infinity, 1e300, -1])
    func aProfilesTransientPulseIsBoundedAndPlayersAreMadeOnIt(length: Double) throws {
        let given = TransientPulse(length: length)
        #expect((0...TransientPulse.longestLength).contains(given.length))
        var options = HapticEngineOptions()
        options.renderProfile = RenderProfile(name: "odd", strongSteps: 255, weakSteps: 255, minimumUpdateInterval: 0)
        options.renderProfile?.transientPulse.length = length
        let profile = try #require(options.renderProfile)
        #expect((0...TransientPulse.longestLength).contains(profile.transientPulse.length))
        #expect(PatternRenderer(profile: profile) == PatternRenderer(profile: profile))
        let rig = try Rig(options: options, start: false)
        // On a thread of its own, so that a spin fails the test rather than hanging it: nil until it returns.
        let played = Lock<Bool?>(nil)
        let thread = try ServiceThread.start { [engine = rig.engine] in
            let player = try? engine.makePlayer(with: HapticPattern(events: [Self.tap], parameters: []))
            let started = (try? engine.start()) != nil && (try? player?.start(atTime: 0)) != nil
            played.withLock { $0 = player != nil && started }
        }
        let deadline = Sys.monotonicNanoseconds() + 30_000_000_000
        while played.withLock({ $0 }) == nil, Sys.monotonicNanoseconds() < deadline {
            Sys.sleep(nanoseconds: 1_000_000)
        }
        guard let outcome = played.withLock({ $0 }) else {
            Issue.record("makePlayer, start() or the player's start has not returned after 30 s")
            return
        }
        thread.join()
        #expect(outcome, "the player was made, the engine started and the player started")
        rig.clock.advance(by: 1.5)
        // A pulse of no length is no tap.
        let changes = rig.applied()
        #expect(changes.contains { $0.strong > 0 } == (profile.transientPulse.length > 0), "\(changes)")
        #expect(changes.last.map { $0.strong == 0 && $0.weak == 0 } ?? true, "at rest after the tap: \(changes)")
    }

    /// A loop dense with breakpoints (2,000 sub-microsecond events within its millisecond, made in code) is mixed
    /// at its mean, as a loop too fast to follow is: mixed pass by pass, one plan took 1.45 GB and 15 s, until
    /// 6 December. A loop of ordinary detail is still mixed pass by pass.
    @Test func aLoopDenseWithBreakpointsIsMixedAtItsMean() throws {
        let rig = try Rig()
        let dense = HapticPattern(
            events: (0..<2000).map {
                HapticEvent(type: .hapticContinuous, relativeTime: Double($0) * 5e-7, duration: 2.5e-7)
            }, parameters: [])
        let heartbeat = HapticPattern(
            events: [
                HapticEvent(type: .hapticTransient, relativeTime: 0),
                HapticEvent(type: .hapticTransient, relativeTime: 0.15),
            ], parameters: [])
        let players = [
            try rig.engine.makeAdvancedPlayer(with: dense), try rig.engine.makeAdvancedPlayer(with: heartbeat),
        ]
        for player in players {
            player.loopEnabled = true
            try player.start(atTime: 0)
        }
        rig.clock.advance(by: 2.5)
        #expect(players.map(\.phase) == [.playing, .playing])
        let steady = rig.engine.core.state.withLock { state in
            state.scheduler.players.keys.sorted().map { state.scheduler.steadyLevels(of: $0) != nil }
        }
        #expect(steady == [true, false])
    }

    /// Commands scheduled centuries ahead wait; nothing traps.
    @Test func farDeadlinesWait() throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        try player.start(atTime: 1e308)
        try player.seek(toOffset: 1e308)
        player.loopEnd = 1e-300
        player.playbackRate = 1e308
        try player.sendParameters(
            [HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 1e308)],
            atTime: 1e308)
        rig.clock.advance(by: 1)
        #expect(rig.applied().isEmpty)
        #expect(player.phase == .idle)
    }

    /// A time or offset that is not a number is a caller's mistake: every command refuses it, naming what, and
    /// changes nothing (before 5 December it meant "now").
    @Test(arguments: [Double.nan, .infinity, -.infinity])
    func timesThatAreNotNumbersAreRefusedAndChangeNothing(time: Double) throws {
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.1)))
        let parameter = HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 0.5, relativeTime: 0)
        let curve = HapticParameterCurve(
            parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: 0, value: 0.5)], relativeTime: 0)
        let commands: [(String, () throws(HapticEngineError) -> Void)] = [
            ("start time", { () throws(HapticEngineError) in try player.start(atTime: time) }),
            ("stop time", { () throws(HapticEngineError) in try player.stop(atTime: time) }),
            ("pause time", { () throws(HapticEngineError) in try player.pause(atTime: time) }),
            ("resume time", { () throws(HapticEngineError) in try player.resume(atTime: time) }),
            ("offset", { () throws(HapticEngineError) in try player.seek(toOffset: time) }),
            (
                "parameter time",
                { () throws(HapticEngineError) in try player.sendParameters([parameter], atTime: time) }
            ),
            ("curve time", { () throws(HapticEngineError) in try player.scheduleParameterCurve(curve, atTime: time) }),
        ]
        for (what, command) in commands {
            let error = #expect(throws: HapticEngineError.self) { try command() }
            #expect(error?.kind == .invalidArgument && error?.message.hasPrefix("\(what) ") == true, "\(what)")
        }
        rig.clock.advance(by: 1)
        #expect(rig.applied().isEmpty)
        #expect(player.phase == .idle && player.currentOffset == 0)
    }

    /// An engine gain outside 0...1, or not a number, is refused by `start()`, naming the option, and nothing opens
    /// (a NaN gain reached the trigger motors' report as a level and trapped converting it to a byte).
    @Test(arguments: [Double.nan, .infinity, -0.1, 1.5])
    func aGainOutsideZeroToOneMakesStartThrowInvalidArgument(gain: Double) throws {
        var options = HapticEngineOptions()
        options.gain = gain
        let rig = try Rig(options: options, start: false)
        let error = #expect(throws: HapticEngineError.self) { try rig.engine.start() }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.message.hasPrefix("HapticEngineOptions.gain: ") == true, "\(error?.message ?? "")")
        #expect(!rig.engine.isRunning && rig.actions().isEmpty, "nothing was opened")
    }

    /// Levels that are not numbers are off wherever they become device units: quantized, on a profile's gain, and in
    /// the trigger motors' report, whose byte conversion trapped on NaN.
    @Test func levelsThatAreNotNumbersAreOffInEveryConversion() {
        #expect(RenderProfile.genericRumble.withGain(.nan).gain == 0)
        let report = XboxReportWriter.report([(role: .triggers, levels: MotorMagnitudes(strong: .nan, weak: 0.5))])
        #expect(report.leftTrigger == 0 && report.rightTrigger == 50)
    }

    /// A control's value, or a curve point's time, that is not a number is refused, naming the parameter, and
    /// changes nothing (a NaN attack time trapped the renderer's exponent when the player was rendered again).
    @Test(arguments: [Double.nan, .infinity])
    func controlValuesThatAreNotNumbersAreRefusedAndChangeNothing(value: Double) throws {
        let rig = try Rig()
        let pattern = HapticPattern(
            events: [
                HapticEvent(
                    type: .hapticContinuous, parameters: [.init(parameterID: .hapticIntensity, value: 0.8)],
                    relativeTime: 0, duration: 0.5)
            ], parameters: [])
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.1)
        let before = rig.actions()
        for id in [HapticDynamicParameter.ID.hapticAttackTimeControl, .hapticIntensityControl] {
            let error = #expect(throws: HapticEngineError.self) {
                try player.sendParameters([.init(parameterID: id, value: value, relativeTime: 0)], atTime: 0)
            }
            #expect(error?.kind == .invalidArgument && error?.message.contains(id.rawValue) == true, "\(id)")
        }
        let curves = [
            HapticParameterCurve(
                parameterID: .hapticReleaseTimeControl, controlPoints: [.init(relativeTime: 0, value: value)],
                relativeTime: 0),
            HapticParameterCurve(
                parameterID: .hapticIntensityControl, controlPoints: [.init(relativeTime: value, value: 0.5)],
                relativeTime: 0),
        ]
        for curve in curves {
            let error = #expect(throws: HapticEngineError.self) { try player.scheduleParameterCurve(curve, atTime: 0) }
            #expect(error?.kind == .invalidArgument)
        }
        #expect(rig.actions() == before, "nothing was sent")
        rig.clock.advance(by: 1)
        #expect(rig.applied().last.map { $0.strong == 0 && $0.weak == 0 } == true, "it ended at rest as planned")
    }

    /// Adjusters and levels that are not numbers are 0 wherever the renderer turns them into time or units.
    @Test func adjustersAndLevelsThatAreNotNumbersAreZero() {
        #expect(EnvelopeTiming.seconds(forAdjuster: .nan) == 0)
        #expect(EnvelopeTiming.motorShares(sharpness: .nan) == (strong: 1, weak: 0))
    }

    @Test func deadlinesConvertWithoutTrapping() {
        #expect(MonotonicClock.nanoseconds(1.5) == 1_500_000_000)
        #expect(MonotonicClock.nanoseconds(1e308) == .max)
        #expect(MonotonicClock.nanoseconds(.infinity) == .max)
        #expect(MonotonicClock.nanoseconds(2e10) == .max)
        #expect(MonotonicClock.nanoseconds(.nan) == 0)
        #expect(MonotonicClock.nanoseconds(-1e308) == 0)
        // A deadline that far from now holds at the last nanosecond; one in the past, or not a number, is now.
        #expect(MonotonicTime.deadline(afterSeconds: 1e300) == .max)
        let before = MonotonicTime.nanoseconds()
        let past = MonotonicTime.deadline(afterSeconds: -5)
        #expect(before <= past && past <= MonotonicTime.nanoseconds())
        #expect(MonotonicTime.deadline(afterSeconds: .nan) <= MonotonicTime.nanoseconds())
    }

    /// A deadline handed out in seconds that a clock then stops exactly on (as `SteppedClock` does) must convert
    /// back to the nanoseconds it was made from: one short, and the work that asked for it would find it not due.
    @Test func aTimeMadeFromNanosecondsConvertsBackToThem() {
        // Every nanosecond of the first 100 µs, a 5 ms grid from 100 s (the times a stream's updates fall on), and
        // 100,000 times up to 60 days of uptime, where a double still holds a nanosecond with room to spare.
        // Truncating instead of rounding gets 15 ns and 128.01 s wrong, among hundreds of others.
        let samples =
            Array(1...100_000 as ClosedRange<UInt64>)
            + (0..<10_000).map { 100_000_000_000 + $0 * 5_000_000 }
            + Array(stride(from: 1 as UInt64, through: 5_184_000_000_000_000, by: 51_839_999_999_999))
        for nanoseconds in samples {
            let seconds = Double(nanoseconds) / 1e9
            guard MonotonicClock.nanoseconds(seconds) == nanoseconds else {
                Issue.record("\(nanoseconds) ns became \(MonotonicClock.nanoseconds(seconds))")
                return
            }
        }
    }
}
