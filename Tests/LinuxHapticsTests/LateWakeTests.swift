// A playback thread the machine wakes late, at random, under every built-in profile: the device comes to rest soon
// after the pattern's end whatever the stalls, and no tap that a stall covered whole is lost.
import AHAP
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Testing
@_spi(Internals) import LinuxSystem

@Suite struct LateWakeTests {
    /// Random steps, ramps and gaps over up to about a second and a half.
    static func randomTimeline(_ random: inout SeededGenerator) -> MotorTimeline {
        func level() -> MotorMagnitudes {
            MotorMagnitudes(
                strong: Double.random(in: 0...1, using: &random), weak: Double.random(in: 0...1, using: &random))
        }
        var segments: [MotorTimeline.Segment] = []
        var time = 0.0
        for _ in 0..<Int.random(in: 2...12, using: &random) {
            if Bool.random(using: &random) { time += Double.random(in: 0.005...0.1, using: &random) }
            let length = Double.random(in: 0.005...0.15, using: &random)
            let start = level()
            let end = Bool.random(using: &random) ? start : level()
            segments.append(MotorTimeline.Segment(start: time, end: time + length, startLevels: start, endLevels: end))
            time += length
        }
        return MotorTimeline(segments: segments)
    }

    /// Runs the rig's clock from 10 s to `end`, in steps of 1 to 30 ms, one in four a late wake-up after a stall
    /// of 5 to 120 ms.
    static func runWithStalls(_ rig: Rig, until end: Double, _ random: inout SeededGenerator) {
        var time = rig.clock.now
        while time < end {
            time += Double.random(in: 0.001...0.03, using: &random)
            if Int.random(in: 0..<4, using: &random) == 0 {
                time += Double.random(in: 0.005...0.12, using: &random)
                rig.clock.wakeLate(at: time)
            } else {
                rig.clock.set(to: time)
            }
        }
    }

    /// The longest stall `runWithStalls` makes, plus its longest step.
    static let longestLateness = 0.15

    @Test(arguments: RenderProfile.builtIn)
    func theDeviceRestsSoonAfterThePatternsEndWhateverTheStalls(profile: RenderProfile) throws {
        // Time runs with stalls to the pattern's end (in engine time, its output latency ahead of the clock), then
        // on time. The motors are off once the longest lateness, the minimum interval and one renewal interval have
        // passed (a change waiting for the write budget takes a renewal's place), not once the budget is back.
        var random = SeededGenerator(seed: 0x5EED_1A7E)
        let renewal = profile.budget.renewalInterval ?? WriteBudget.standardRenewalInterval
        for round in 0..<100 {
            let rig = try Rig(renderProfile: profile)
            let mix = Self.randomTimeline(&random)
            try rig.engine.makeAdvancedPlayer(timeline: mix).start(atTime: 0)
            let end = 10 + mix.endTime - profile.outputLatency
            Self.runWithStalls(rig, until: end, &random)
            rig.clock.set(to: end + Self.longestLateness + profile.minimumUpdateInterval + renewal)
            let applied = rig.recorder.appliedMixes()
            #expect(!applied.isEmpty, "round \(round) under \(profile.name): nothing was written")
            let last = applied.last?.mix
            #expect(
                last == nil || last == .off,
                "round \(round) under \(profile.name): the device holds \(String(describing: last)) after the end")
            rig.clock.advance(by: 1)
        }
    }

    @Test(arguments: RenderProfile.builtIn)
    func theWritesAtTheTimesTheyWentOutKeepTheMinimumIntervalAndTheBudgetWhateverTheStalls(
        profile: RenderProfile
    ) throws {
        // A write the thread makes late is late on the device too: what follows it must keep the minimum interval
        // and the write budget from the time it went out, not from the time it was planned for. Only a renewal late
        // by no more than a quarter of the interval (1 ms at least) counts at its time, as the planner counts it:
        // the budget may be short by the writes that quarter brings back.
        // A level the thread slept through whole is written when it wakes, late rather than never, and may come
        // within the interval of the command before it: that rule is the one exception, named by the observer.
        var random = SeededGenerator(seed: 0xB0D6_E7)
        for round in 0..<Self.budgetRounds {
            let slept = Lock<[Double]>([])
            var options = HapticEngineOptions()
            options.playbackObserver = { sample in if sample.wokeLate { slept.withLock { $0.append(sample.sent) } } }
            let rig = try Rig(options: options, renderProfile: profile)
            let mix = Self.randomTimeline(&random)
            try rig.engine.makeAdvancedPlayer(timeline: mix).start(atTime: 0)
            Self.runWithStalls(rig, until: 10 + mix.endTime, &random)
            rig.clock.advance(by: 1)
            let broken = Self.brokenRules(
                rig.recorder.records(), profile: profile,
                sleptThrough: slept.withLock { $0 }.map { $0 - profile.outputLatency })
            #expect(broken.isEmpty, "round \(round) under \(profile.name): \(broken)")
        }
    }

    static let budgetRounds = 100

    /// Where the writes `records` hold, at their times, break `profile`'s minimum interval between commands or
    /// overdraw its write budget (a token bucket over every write, renewals included), described.
    static func brokenRules(
        _ records: [RecordingOutput.Record], profile: RenderProfile, sleptThrough: [Double] = []
    ) -> [String] {
        let budget = profile.budget
        let absorbed = OutputTiming.lateRenewalTolerance(for: profile)
        var broken: [String] = []
        var lastCommand = -Double.infinity
        var lastWrite = -Double.infinity
        var left = budget.burst
        for record in records {
            let isCommand: Bool
            switch record.action {
            case .apply, .neutral: isCommand = true
            case .keepAlive: isCommand = false
            default: continue
            }
            let time = record.time
            let late = sleptThrough.contains { abs($0 - time) < 1e-9 }
            if isCommand, !late, time - lastCommand < profile.minimumUpdateInterval - 1e-9 {
                broken.append("a command \(Self.ms(time - lastCommand)) after the last at \(Self.ms(time - 10))")
            }
            if budget.writesPerSecond.isFinite {
                left = min(left + budget.writesPerSecond * (time - lastWrite), budget.burst) - budget.writesPerChange
                if left < -budget.writesPerSecond * absorbed - 1e-6 {
                    broken.append("the budget overdrawn by \(-left) at \(Self.ms(time - 10))")
                }
            }
            if isCommand { lastCommand = time }
            lastWrite = time
        }
        return broken
    }

    private static func ms(_ seconds: Double) -> String { "\((seconds * 1e5).rounded() / 100) ms" }

    @Test(arguments: RenderProfile.builtIn)
    func everyTapAStallCoveredWholeStillReachesTheDevice(profile: RenderProfile) throws {
        // Taps of a pulse length each, 250 ms apart, at distinct levels: a stall of up to 120 ms covers one at most.
        var random = SeededGenerator(seed: 0x7A95)
        let length = profile.transientPulse.length
        for round in 0..<20 {
            let levels = (0..<4).map { index in 0.4 + 0.15 * Double(index) }.shuffled(using: &random)
            let taps = MotorTimeline(
                segments: levels.enumerated().map { index, level in
                    let start = 0.05 + 0.25 * Double(index)
                    let levels = MotorMagnitudes(strong: level, weak: level)
                    return MotorTimeline.Segment(
                        start: start, end: start + length, startLevels: levels, endLevels: levels)
                })
            let rig = try Rig(renderProfile: profile)
            try rig.engine.makeAdvancedPlayer(timeline: taps).start(atTime: 0)
            Self.runWithStalls(rig, until: 10 + taps.endTime + 0.2, &random)
            rig.clock.advance(by: 1)
            let planner = DeviceCommandPlanner(profile: profile)
            let planned = planner.commands(for: taps).filter { !$0.levels.isOff }.map(\.levels)
            let sent = rig.recorder.appliedMixes().filter { !$0.mix.isOff }.map(\.mix)
            #expect(sent == planned, "round \(round) under \(profile.name)")
        }
    }

    @Test(arguments: RenderProfile.builtIn, [false, true])
    func aTapStartedAheadThatEndedWithinOneStallIsWrittenWhenTheThreadWakes(
        profile: RenderProfile, stopAfterItsEnd: Bool
    ) throws {
        // One tap, started 50 ms ahead (with a stop after its end, or none): the thread plans it, then sleeps past
        // the tap's whole length and the player's end. Planned again from the start, the tap's player has
        // finished by then, and still counts up to its end: the tap is written late rather than never, once, and
        // the device rests after it.
        let slept = Lock<[PlaybackSample]>([])
        var options = HapticEngineOptions()
        options.playbackObserver = { sample in if sample.wokeLate { slept.withLock { $0.append(sample) } } }
        let rig = try Rig(options: options, renderProfile: profile)
        let length = profile.transientPulse.length
        let levels = MotorMagnitudes(strong: 0.9, weak: 0.7)
        let tap = MotorTimeline(
            segments: [MotorTimeline.Segment(start: 0, end: length, startLevels: levels, endLevels: levels)])
        let player = try rig.engine.makeAdvancedPlayer(timeline: tap)
        let completions = Lock(0)
        player.completionHandler = { _ in completions.withLock { $0 += 1 } }
        let start = rig.engine.currentTime + 0.05
        if stopAfterItsEnd { try player.stop(atTime: start + length + 0.13) }
        try player.start(atTime: start)
        rig.clock.advance(by: 0.001)
        #expect(rig.recorder.appliedMixes().isEmpty, "nothing is written before the tap's time")
        rig.clock.wakeLate(at: rig.clock.now + 0.05 + length + 0.08)
        let planned = DeviceCommandPlanner(profile: profile).commands(for: tap).map(\.levels).filter { !$0.isOff }
        let sent = rig.recorder.appliedMixes().filter { !$0.mix.isOff }.map(\.mix)
        #expect(sent.count == 1 && sent.allSatisfy(planned.contains), "sent \(sent), planned \(planned)")
        #expect(slept.withLock { $0.count } == 1, "the tap is written as a level slept through")
        rig.clock.advance(by: 1)
        #expect(rig.recorder.appliedMixes().last?.mix == .off, "the device rests after the late tap")
        #expect(completions.withLock { $0 } == 1)
    }

    /// Six levels 120 ms each (a multiple of every profile's renewal interval, so that each change falls on the
    /// instant of a renewal), then rest.
    static let steps = MotorTimeline(
        segments: [0.3, 0.6, 0.9, 0.4, 0.7, 1.0].enumerated().map { index, level in
            pulse(level, level, from: Double(index) * 0.12, to: Double(index + 1) * 0.12)
        })

    /// The times of the changes `steps` makes, started 0.2 s after 10 s, with the clock moved on from 10 s in steps
    /// of 0.1 ms: each woken on time (`ManualClock.set(to:)`) when `stall` is nil, else late (`wakeLate(at:)`)
    /// with `stall()` more seconds before it.
    static func stepChanges(profile: RenderProfile, stall: (() -> Double)?) throws -> [Double] {
        let rig = try Rig(renderProfile: profile)
        try rig.engine.makeAdvancedPlayer(timeline: steps).start(atTime: rig.engine.currentTime + 0.2)
        var time = 10.0
        while time < 11.2 {
            time += 0.0001
            if let stall {
                time += stall()
                rig.clock.wakeLate(at: time)
            } else {
                rig.clock.set(to: time)
            }
        }
        return rig.recorder.appliedMixes().map(\.time)
    }

    @Test(arguments: RenderProfile.builtIn)
    func aChangeIsLateByNoMoreThanTheStallBeforeItWhateverRenewalFallsDue(profile: RenderProfile) throws {
        // Passes woken a little late all the time: within 0.1 ms, and one wake-up in ten by up to 12 ms more. A
        // change that goes out late takes the place of the renewal due with it (the budget counts no renewal that
        // was not written), and one the budget holds back goes out at the latest in the place of the next renewal,
        // however late the pass that writes it: no change is later than the longest stall. Counting a renewal never
        // written held changes back a whole frame on hid-nintendo's 40 ms renewals, and the renewals written
        // before them then held the last one back for most of a second.
        let onTime = try Self.stepChanges(profile: profile, stall: nil)
        #expect(onTime.count == 7, "under \(profile.name): \(onTime.count) changes on time")
        let longestStall = 0.012
        var random = SeededGenerator(seed: 0x1A7E_C4A6)
        for round in 0..<30 {
            let late = try Self.stepChanges(profile: profile) {
                Int.random(in: 0..<10, using: &random) == 0
                    ? Double.random(in: 0.0005...longestStall, using: &random) : 0
            }
            let lateness = zip(late, onTime).map { $0 - $1 }
            #expect(late.count == onTime.count, "round \(round) under \(profile.name): \(late.count) changes")
            #expect(
                lateness.allSatisfy { $0 <= longestStall + 0.0001 + 1e-9 },
                "round \(round) under \(profile.name): changes late by \(lateness.map(Self.ms))")
        }
    }
}
