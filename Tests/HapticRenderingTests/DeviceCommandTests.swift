import AHAP
import Foundation
import HapticRendering
import HapticTestDevices
import Testing

/// From timeline to device updates: quantisation, coalescing, minimum interval, hold times, units, gain.
@Suite struct DeviceCommandTests {
    let pulse = TransientPulse.rumbleMotor.length

    func commands(_ pattern: HapticPattern, profile: RenderProfile = Build.profile()) -> [RumbleCommand] {
        DeviceCommandPlanner(profile: profile).commands(for: PatternRenderer(profile: profile).render(pattern))
    }

    @Test func aLoneTransientIsOneOnAndOneOff() throws {
        let list = commands(Build.pattern([Build.transient(at: 0.1, intensity: 0.8, sharpness: 0.5)]))
        try #require(list.count == 2)
        #expect(list.map(\.time) == [0.1, 0.1 + pulse])
        #expect(list[0].levels == MotorMagnitudes(strong: 204.0 / 255, weak: 204.0 / 255))
        #expect(close(list[0].holdDuration ?? -1, pulse))
        #expect(list[1].levels == .off && list[1].holdDuration == nil)
    }

    @Test func changesBelowTheResolutionAreCoalesced() {
        let ramp = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0.5)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0), (1, 1)])])
        let list = commands(ramp, profile: Build.profile(steps: 4))
        #expect(list.count == 5)
        for (command, expected) in zip(list, [(0.125, 0.25), (0.375, 0.5), (0.625, 0.75), (0.875, 1.0), (1.0, 0.0)]) {
            #expect(close(command.time, expected.0, within: 1e-6))
            #expect(command.levels == MotorMagnitudes(strong: expected.1, weak: expected.1))
        }
        let creep = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0.5)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0.5), (1, 0.501)])])
        #expect(commands(creep).map(\.time) == [0, 1], "0.5 -> 0.501 never leaves 8-bit step 128")
    }

    @Test func aRateLimitedChangeLandsAtTheDeadlineWithTheLevelThen() {
        // 0.4 from 0; a light tap adds 0.1 from 15 ms to 55 ms; off at 100 ms. The tap's rise comes 15 ms after
        // the first command: it is sent at 20 ms with the level the timeline has then. The first command holds
        // until then, so it carries the mean over its 20 ms, the tap's first 5 ms in it: 0.425.
        let pattern = Build.pattern([
            Build.continuous(at: 0, duration: 0.1, intensity: 0.4, sharpness: 0.5),
            Build.transient(at: 0.015, intensity: 0.1, sharpness: 0.5),
        ])
        let list = commands(pattern, profile: Build.profile(interval: 0.02))
        #expect(zip(list.map(\.time), [0, 0.02, 0.055, 0.1]).allSatisfy { close($0, $1) } && list.count == 4)
        let levels: [Double] = [108.0 / 255, 128.0 / 255, 0.4, 0]
        #expect(list.map(\.levels.strong) == levels, "0.425 rounds to step 108, 0.5 to step 128")
        #expect(zip(list.compactMap(\.holdDuration), [0.02, 0.035, 0.045]).allSatisfy { close($0, $1) })
        #expect(list.last?.holdDuration == nil)
    }

    @Test func anUpdateThatWouldHoldBackAJumpWaitsForIt() {
        // 0.4 from 0, 1.0 from 10 ms, 0.6 from 40 ms, off at 50 ms. Sending 0.4 at 0 would hold the rise back to
        // 20 ms, and sending 0.6 at 40 ms would push the off to 60 ms: both times waiting for the jump costs less.
        let pattern = Build.pattern([
            Build.transient(at: 0, intensity: 0.4, sharpness: 0.5),
            Build.transient(at: 0.01, intensity: 0.6, sharpness: 0.5),
        ])
        let list = commands(pattern, profile: Build.profile(interval: 0.02))
        #expect(list.map(\.time) == [0.01, 0.05])
        #expect(list.map(\.levels.strong) == [1, 0])
    }

    @Test func eachLevelOfARampIsItsValueAtTheMiddleOfTheHoldItStarts() throws {
        let ramp = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0), (1, 1)])])
        let list = commands(ramp, profile: Build.profile(interval: 0.02))
        try #require(list.count > 5)
        for command in list.dropFirst().dropLast(2) {
            let middle = command.time + (command.holdDuration ?? 0) / 2
            // Within a step: the level is chosen for the hold the error rule foresees, which the quantised level
            // actually held can end a little earlier or later.
            #expect(abs(command.levels.strong - middle) <= 1 / 255 + 1e-6, "at \(command.time)")
        }
        for (earlier, later) in zip(list, list.dropFirst()) {
            #expect(later.time - earlier.time >= 0.02 - 1e-12)
        }
    }

    @Test func aSteeperRampGetsMoreWritesAsTheTwoThirdsPowerOfItsSlope() throws {
        // Equal error per hold: a hold on slope k lasts (12·holdError/k²)^(1/3), so four times the slope gets
        // 4^(2/3) ≈ 2.5 times the writes a second, not four times (a write per step) nor the same (a fixed grid).
        func writesPerSecond(rampSeconds: Double) -> Double {
            let ramp = Build.pattern(
                [Build.continuous(at: 0, duration: rampSeconds, intensity: 1, sharpness: 0)],
                curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0), (rampSeconds, 1)])])
            let list = commands(ramp, profile: profile)
            return Double(list.count - 1) / rampSeconds
        }
        // A hold error at which both ramps hold longer than the interval: a full range in 50 ms would get one
        // write per 5 ms.
        var profile = Build.profile(interval: 0.005)
        profile.budget = WriteBudget(
            writesPerSecond: .infinity, burst: 1,
            holdError: WriteBudget.holdError(fullRampSeconds: 0.05, interval: 0.005))
        let gentle = writesPerSecond(rampSeconds: 1)
        let steep = writesPerSecond(rampSeconds: 0.25)
        let expected = (12 * profile.budget.holdError).squareRoot()
        #expect(gentle > 5, "\(gentle) writes a second on a 1 s ramp (\(expected))")
        #expect(abs(steep / gentle - pow(4, 2.0 / 3)) < 0.35, "steep \(steep), gentle \(gentle) writes a second")
    }

    @Test func aRenewalDueOnADriftCarriesTheLevelThenAtNoExtraWrite() throws {
        // A gentle ramp whose hold error alone waits about 0.27 s between writes: the renewal the engine
        // makes every 50 ms anyway carries the ramp's level instead of the old one, so every write is a command,
        // 50 ms apart, and there are no more writes than the renewals alone would have made.
        let ramp = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0.2), (1, 0.6)])])
        var profile = Build.profile(interval: 0.02)
        profile.budget = WriteBudget(
            writesPerSecond: 50, burst: 3, renewalInterval: 0.05,
            holdError: WriteBudget.holdError(fullRampSeconds: 0.05, interval: 0.02))
        let list = commands(ramp, profile: profile)
        try #require(list.count > 10, "\(list.count) commands")
        // The ramp's first level is corrected once after the minimum interval (the planner's rule at an onset);
        // from there on every write is a renewal's, carrying the ramp.
        let drift = Array(list.dropFirst().dropLast())
        for (earlier, later) in zip(drift, drift.dropFirst()) {
            #expect(close(later.time - earlier.time, 0.05, within: 1e-9), "\(list.map(\.time))")
        }
        #expect(profile.budget.writeTimes(of: list).count == list.count, "no renewal left between the commands")
        var holding = profile
        holding.budget.renewalInterval = nil
        let withoutRenewals = commands(ramp, profile: holding)
        #expect(withoutRenewals.count <= 6, "the hold error alone: \(withoutRenewals.map(\.time))")
        #expect(profile.budget.writeTimes(of: withoutRenewals).count >= list.count)
    }

    /// A custom profile's renewal interval, however it is set (in the budget's initialiser or on the property): 0,
    /// below 0, too short to move a time on (1e-300), infinite, or past what the engine's effect can last (1e9 s),
    /// is held within `WriteBudget.renewalIntervals` (and to what a limited rate pays for); NaN counts none. The
    /// renewals a plan lists are then a finite number: with renewals every 0 s, listing a held level's writes never
    /// ended. The range is required first, so that a budget outside it fails here rather than hanging below.
    @Test(arguments: [0, -1, 1e-300, -Double.infinity, Double.infinity, 1e9, Double.nan])
    func aRenewalIntervalOutOfRangeIsHeldWithinItAndAPlansWritesAreFinite(interval: Double) throws {
        let steady = Build.pattern([Build.continuous(at: 0, duration: 1, intensity: 0.5, sharpness: 0)])
        let range = WriteBudget.renewalIntervals
        for rate in [Double.infinity, 100] {
            let initialised = WriteBudget(
                writesPerSecond: rate, burst: 3, renewalInterval: interval, holdError: WriteBudget.standardHoldError)
            var assigned = WriteBudget(
                writesPerSecond: rate, burst: 3, renewalInterval: 0.05, holdError: WriteBudget.standardHoldError)
            assigned.renewalInterval = interval
            let shortest = rate.isFinite ? 1 / rate * (1 + 1e-9) : range.lowerBound
            for budget in [initialised, assigned] {
                guard !interval.isNaN else {
                    #expect(budget.renewalInterval == nil)
                    continue
                }
                let renewal = try #require(budget.renewalInterval)
                try #require(range.contains(renewal), "renewal interval \(renewal) for \(interval)")
                #expect(renewal == (interval < 1 ? shortest : range.upperBound), "for \(interval)")
                var profile = Build.profile(interval: 0.01)
                profile.budget = budget
                let list = commands(steady, profile: profile)
                #expect(list.last?.levels == .off)
                #expect(profile.budget.writeTimes(of: list).count <= list.count + 1_000)
            }
        }
    }

    /// A budget's rate, burst, cost of a change and hold error set after it is made follow the initialiser's rules,
    /// as its renewal interval does: a rate of -1 set on a sound budget left the planner waiting for ever for
    /// writes that never came back. Each budget is required to equal the one initialised with the same value
    /// first, so that one outside the rules fails here rather than hanging below.
    @Test func aBudgetsValuesSetAfterItIsMadeFollowTheInitialisersRulesAndItsPlansEnd() throws {
        func made(rate: Double = 50, burst: Double = 3, cost: Double = 1, hold: Double = 1e-6) -> WriteBudget {
            WriteBudget(
                writesPerSecond: rate, burst: burst, writesPerChange: cost, renewalInterval: 0.05, holdError: hold)
        }
        let sound = made()
        var cases: [(set: WriteBudget, initialised: WriteBudget)] = []
        for rate in [0, -1, Double.nan, 10] {
            var budget = sound
            budget.writesPerSecond = rate
            cases.append((budget, made(rate: rate)))
        }
        for burst in [Double.nan, 0, .infinity] {
            var budget = sound
            budget.burst = burst
            cases.append((budget, made(burst: burst)))
        }
        for cost in [0, Double.nan, .infinity, 5] {
            var budget = sound
            budget.writesPerChange = cost
            cases.append((budget, made(cost: cost)))
        }
        for hold in [0, Double.nan, -1] {
            var budget = sound
            budget.holdError = hold
            cases.append((budget, made(hold: hold)))
        }
        let ramp = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0.2), (1, 0.9)])])
        for (set, initialised) in cases {
            try #require(set == initialised, "\(set) set, \(initialised) initialised")
            var profile = Build.profile(interval: 0.01)
            profile.budget = set
            #expect(commands(ramp, profile: profile).last?.levels == .off)
        }
    }

    /// A profile's steps, gain and output latency set after it is made follow the initialiser's rules, as its
    /// minimum interval does: 0 steps set on a sound profile made every planned level NaN (0 / 0), and the planner
    /// never ended; a negative count gave negative levels, and a NaN latency the engine's start times NaN.
    @Test func aProfilesStepsGainAndLatencySetAfterItIsMadeFollowTheInitialisersRules() throws {
        func made(steps: Int = 255, gain: Double = 1, latency: Double = 0) -> RenderProfile {
            RenderProfile(
                name: "test", strongSteps: steps, weakSteps: steps, minimumUpdateInterval: 0.01, gain: gain,
                outputLatency: latency)
        }
        let sound = made()
        var cases: [(set: RenderProfile, initialised: RenderProfile)] = []
        for steps in [0, -3] {
            var profile = sound
            profile.strongSteps = steps
            profile.weakSteps = steps
            cases.append((profile, made(steps: steps)))
        }
        for gain in [Double.nan, -1, 1e300] {
            var profile = sound
            profile.gain = gain
            cases.append((profile, made(gain: gain)))
        }
        for latency in [Double.nan, -1, .infinity] {
            var profile = sound
            profile.outputLatency = latency
            cases.append((profile, made(latency: latency)))
        }
        let ramp = Build.pattern(
            [Build.continuous(at: 0, duration: 1, intensity: 1, sharpness: 0)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0.2), (1, 0.9)])])
        // All required first: with 0 steps the planner never ended, so a profile outside the rules fails here.
        for (set, initialised) in cases {
            try #require(set == initialised, "\(set) set, \(initialised) initialised")
        }
        for (set, _) in cases {
            let levels = commands(ramp, profile: set).flatMap { [$0.levels.strong, $0.levels.weak] }
            #expect(levels.allSatisfy { (0...1).contains($0) })
        }
    }

    @Test func theWritesStayWithinTheBudgetOverAnyWindow() throws {
        // Taps 25 ms apart on a ramp: the fixed-interval planner sends about 80 writes a second; a budget of 30
        // a second with a burst of 3 spreads fewer over the same second, and no window ever passes it.
        let events =
            [Build.continuous(at: 0, duration: 1, intensity: 0.5, sharpness: 0.2)]
            + stride(from: 0.0, to: 1, by: 0.025).map { Build.transient(at: $0, intensity: 0.5, sharpness: 0.8) }
        let pattern = Build.pattern(
            events, curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0.2), (1, 1)])])
        var profile = Build.profile(interval: 0.01)
        profile.budget = WriteBudget(
            writesPerSecond: 30, burst: 3, renewalInterval: 0.05,
            holdError: WriteBudget.holdError(fullRampSeconds: 0.1, interval: 0.01))
        let list = commands(pattern, profile: profile)
        let fixed = FixedIntervalPlanner(profile: profile).commands(
            for: PatternRenderer(profile: profile).render(pattern))
        #expect(profile.budget.overdraw(of: list) == nil)
        #expect(
            fixed.count > 60 && Double(list.count) <= 3 + 30 * 1.1,
            "\(list.count) writes, \(fixed.count) at a fixed interval")
        #expect(list.last?.levels == .off)
    }

    @Test(arguments: [RenderProfile.genericRumble, .xboxBluetooth])
    func aSustainedBudgetSendsFifteenChangesTenMillisecondsApartFromRestThenHoldsToItsRate(profile: RenderProfile)
        throws
    {
        // A level that jumps every 10 ms for half a second: from rest the burst of 8, refilled at 50 a second as
        // it goes, lets the first 15 jumps out on time; after that the rate holds the changes to 50 a second.
        let steps = (0..<50).map { index in
            let level = index.isMultiple(of: 2) ? 0.3 : 0.7
            return MotorTimeline.Segment(
                start: Double(index) * 0.01, end: Double(index + 1) * 0.01,
                startLevels: .init(strong: level, weak: level), endLevels: .init(strong: level, weak: level))
        }
        let list = DeviceCommandPlanner(profile: profile).commands(for: MotorTimeline(segments: steps))
        try #require(list.count > 16, "\(list.map(\.time))")
        for index in 0..<15 {
            #expect(close(list[index].time, Double(index) * 0.01, within: 1e-9), "\(list.map(\.time))")
        }
        #expect(list[15].time > 0.15 + 1e-9, "the sixteenth waits for the rate: \(list.map(\.time))")
        #expect(profile.budget.overdraw(of: list) == nil)
        #expect(Double(list.count) <= profile.budget.burst + 50 * 0.5 + 1, "\(list.count) commands in 0.5 s")
        #expect(list.last?.levels == .off)
    }

    @Test func flatPatternsAndLoneTransientsPlanAsAtAFixedInterval() {
        let patterns = [
            Build.pattern([Build.transient(at: 0.1, intensity: 0.8, sharpness: 0.5)]),
            Build.pattern([Build.transient(at: 0, intensity: 1, sharpness: 0.1)]),
            Build.pattern([Build.continuous(at: 0, duration: 0.5, intensity: 0.6, sharpness: 0.7)]),
            Build.pattern([
                Build.continuous(at: 0, duration: 0.3, intensity: 0.4, sharpness: 0.5),
                Build.transient(at: 0.1, intensity: 0.5, sharpness: 0.5),
                Build.transient(at: 0.2, intensity: 0.9, sharpness: 0.9),
            ]),
            Build.pattern([
                Build.transient(at: 0, intensity: 0.4, sharpness: 0.5),
                Build.transient(at: 0.01, intensity: 0.6, sharpness: 0.5),
            ]),
        ]
        var compared = 0
        for profile in RenderProfile.builtIn {
            for pattern in patterns {
                let timeline = PatternRenderer(profile: profile).render(pattern)
                let fixed = FixedIntervalPlanner(profile: profile).commands(for: timeline)
                let budgeted = DeviceCommandPlanner(profile: profile).commands(for: timeline)
                // Where the fixed plan would overdraw the budget (taps packed tighter than a profile's rate), the
                // budget decides instead: within it, never the same.
                guard profile.budget.overdraw(of: fixed) == nil else {
                    #expect(profile.budget.overdraw(of: budgeted) == nil, "\(profile.name)")
                    continue
                }
                #expect(budgeted == fixed, "\(profile.name)")
                compared += 1
            }
        }
        #expect(compared >= RenderProfile.builtIn.count * 3)
    }

    @Test func aBlipShorterThanTheIntervalIsSentAsItsShareOfTheIntervalsMean() {
        // 0 ms: 0.4; 10-15 ms: up to 1; 15 ms on: back to 0.4 until 100 ms. The first command holds 20 ms at the
        // soonest, the blip inside it: it carries the mean over those 20 ms (0.4 + 0.6 · 5/20 = 0.55), and 0.4
        // follows at 20 ms. Holding 0.4 throughout, the blip lost, leaves more squared error.
        let pattern = Build.pattern(
            [Build.continuous(at: 0, duration: 0.1, intensity: 0.4, sharpness: 0.5)],
            parameters: [
                HapticDynamicParameter(parameterID: .hapticIntensityControl, value: 1, relativeTime: 0)
            ])
        var blip = pattern
        blip.events.append(Build.continuous(at: 0.01, duration: 0.005, intensity: 0.6, sharpness: 0.5))
        let profile = Build.profile(interval: 0.02)
        let list = commands(blip, profile: profile)
        #expect(list.map(\.time) == [0, 0.02, 0.1])
        let levels: [Double] = [140.0 / 255, 0.4, 0]
        #expect(list.map(\.levels.strong) == levels, "0.55 rounds to step 140")
        let planner = DeviceCommandPlanner(profile: profile)
        let timeline = PatternRenderer(profile: profile).render(blip)
        #expect(
            planner.holdError(list[0].levels, from: 0, to: 0.02, in: timeline)
                < planner.holdError(planner.quantized(timeline.levels(at: 0)), from: 0, to: 0.02, in: timeline))
        #expect(list.last?.levels == .off)
    }

    @Test func gainScalesBeforeQuantisation() {
        let list = commands(
            Build.pattern([Build.transient(at: 0, intensity: 0.8, sharpness: 0.5)]), profile: Build.profile(gain: 0.5))
        #expect(list.first?.levels == MotorMagnitudes(strong: 102.0 / 255, weak: 102.0 / 255))
        #expect(RenderProfile.genericRumble.withGain(3).gain == 1)
    }

    @Test func dualShock3TurnsItsWeakMotorOnlyOnOrOff() {
        let quiet = commands(
            Build.pattern([Build.transient(at: 0, intensity: 0.4, sharpness: 0.5)]), profile: .dualShock3)
        let loud = commands(
            Build.pattern([Build.transient(at: 0, intensity: 0.6, sharpness: 0.5)]), profile: .dualShock3)
        let lightSharp = commands(
            Build.pattern([Build.transient(at: 0, intensity: 0.4, sharpness: 0.9)]), profile: .dualShock3)
        #expect(quiet.first?.levels == MotorMagnitudes(strong: 0.4, weak: 0))
        #expect(
            lightSharp.first?.levels == MotorMagnitudes(strong: 0.4, weak: 0), "folded onto the strong motor, not 0.08")
        #expect(loud.first?.levels == MotorMagnitudes(strong: 0.6, weak: 1))
        #expect(loud.first?.levels.weak == 1)
    }

    /// The weak motor of a DualShock 3 is off below half of its level after gain: a sharp event the gain brings
    /// under that half is carried by the strong motor, as a quieter one is, rather than lost.
    @Test func aSharpEventTheGainTurnsOffOnAnOnOffWeakMotorIsCarriedByTheStrongMotor() {
        let profile = RenderProfile.dualShock3.withGain(0.8)
        for intensity in [0.4, 0.55, 0.6] {
            let list = commands(
                Build.pattern([Build.transient(at: 0, intensity: intensity, sharpness: 1)]), profile: profile)
            let expected = (intensity * 0.8 * 255).rounded() / 255
            #expect(list.first?.levels == MotorMagnitudes(strong: expected, weak: 0), "intensity \(intensity)")
        }
        let loud = commands(Build.pattern([Build.transient(at: 0, intensity: 0.7, sharpness: 1)]), profile: profile)
        #expect(loud.first?.levels == MotorMagnitudes(strong: 0, weak: 1), "0.56 after gain turns the weak motor on")
    }

    /// A tap's end before a silence is a stop, even when an attack from 0 rises after the silence: the level held
    /// there was the mean across the silence and the start of the rise, a small level sent in place of the stop.
    @Test func aTapsEndBeforeASilenceIsAStopWhateverRisesGentlyAfterIt() {
        let pattern = Build.pattern([
            Build.transient(at: 0, intensity: 1, sharpness: 0.5),
            Build.continuous(at: 0.09, duration: 1, intensity: 1, sharpness: 0.5, extra: [(.attackTime, 0.8)]),
        ])
        for profile in [RenderProfile.genericRumble, .virtualPad] {
            let list = commands(pattern, profile: profile)
            let end = list.first { $0.time >= pulse - 1e-9 }
            #expect(
                end.map { close($0.time, pulse) && $0.levels == .off } == true, "\(profile.name): \(list.prefix(3))")
            #expect(!list.contains { $0.time > pulse && $0.time < 0.09 }, "\(profile.name): nothing in the silence")
        }
    }

    /// A pad with one motor (a lone Joy-Con: hid-nintendo sends the strong level to the left one's actuator and the
    /// weak level to the right one's) plays a pattern's whole level on it, whatever its sharpness, as the locality
    /// of that motor's handle does on a pad with two; the motor it lacks is never driven.
    @Test func aPadWithOneMotorPlaysThePatternsWholeLevelOnItAndNeverDrivesTheOther() {
        let pattern = Build.pattern([
            Build.transient(at: 0, intensity: 0.8, sharpness: 1),
            Build.transient(at: 0.2, intensity: 0.6, sharpness: 0),
            Build.continuous(at: 0.4, duration: 0.3, intensity: 0.5, sharpness: 0.5),
        ])
        for (hasStrong, handle) in [(true, HapticLocality.leftHandle), (false, .rightHandle)] {
            var oneMotor = Build.profile()
            oneMotor.hasStrongMotor = hasStrong
            oneMotor.hasWeakMotor = !hasStrong
            let list = commands(pattern, profile: oneMotor)
            let onItsHandle = DeviceCommandPlanner(profile: Build.profile())
                .commands(for: PatternRenderer(profile: Build.profile(), locality: handle).render(pattern))
            #expect(list == onItsHandle, "\(handle)")
            #expect(list.count >= 6, "\(handle): each event is played")
            #expect(list.allSatisfy { (hasStrong ? $0.levels.weak : $0.levels.strong) == 0 }, "\(handle)")
        }
    }

    @Test func commandLevelsAreExactStepsOfTheProfile() {
        // Exact multiples of 1/steps, so the one conversion to kernel units (LinuxInput's
        // `ForceFeedbackEffect.magnitude`) lands on the driver's step.
        for step in 0...100 {
            let level = Double(step) / 100 + 0.001
            let units = DeviceCommandPlanner(profile: .xboxBluetooth).quantized(MotorMagnitudes(strong: level, weak: 0))
            #expect(units.strong == Double(step) / 100)
        }
    }

    @Test func deviceOutputHoldsEachCommandUntilTheNext() {
        let list = commands(Build.pattern([Build.transient(at: 0.1, intensity: 0.8, sharpness: 0)]))
        let output = DeviceOutput(commands: list)
        #expect(output.levels(at: 0.05) == .off)
        #expect(output.levels(at: 0.1) == list[0].levels)
        #expect(output.levels(at: 0.139) == list[0].levels)
        #expect(output.levels(at: 0.14) == .off)
    }

    @Test func builtInProfilesCarryTheDriverFacts() {
        #expect(
            RenderProfile.builtIn.map(\.name) == [
                "generic", "xpad", "dualsense", "dualshock4", "xbox-bluetooth", "dualshock3", "switch", "virtual",
            ])
        #expect(RenderProfile.xpad.strongSteps == 255 && RenderProfile.dualSense.weakSteps == 255)
        #expect(RenderProfile.xboxBluetooth.strongSteps == 100)
        for profile in [RenderProfile.genericRumble, .xboxBluetooth] {
            #expect(profile.minimumUpdateInterval == 0.010 && profile.budget == .sustained(writesPerSecond: 50))
            #expect(profile.budget.burst == 8)
        }
        #expect(RenderProfile.switchPro.minimumUpdateInterval == 0.030 && RenderProfile.switchPro.strongSteps == 100)
        #expect(RenderProfile.dualShock3.weakSteps == 1 && RenderProfile.dualShock3.strongSteps == 255)
        #expect(RenderProfile.virtualPad.strongSteps == 65535)
        #expect(RenderProfile.builtIn.allSatisfy { !$0.supportsNativePeriodic && $0.gain == 1 })
        #expect(RenderProfile.builtIn.allSatisfy { $0.transientPulse.length >= 2 * $0.minimumUpdateInterval })
        #expect(RenderProfile.builtIn.filter(\.budget.queuesEveryCall).map(\.name) == ["switch"])
        #expect(RenderProfile.named("nope") == nil)
    }
}

/// Planning resumed from a command (the engine re-plans while a device runs) continues the whole plan exactly.
@Suite struct ResumedPlanTests {
    static let patterns: [HapticPattern] = [
        Build.pattern(
            [Build.continuous(at: 0, duration: 0.6, intensity: 1, sharpness: 0.3)],
            curves: [Build.curve(.hapticIntensityControl, at: 0, [(0, 0), (0.3, 1), (0.6, 0.2)])]),
        Build.pattern([
            Build.transient(at: 0.05, intensity: 0.9, sharpness: 0.8),
            Build.transient(at: 0.062, intensity: 0.4, sharpness: 0.2),
            Build.continuous(at: 0.1, duration: 0.3, intensity: 0.5, sharpness: 0.5),
        ]),
    ]

    @Test(arguments: patterns, RenderProfile.builtIn)
    func resumingAtEveryCommandGivesTheRestOfTheWholePlan(pattern: HapticPattern, profile: RenderProfile) {
        let timeline = PatternRenderer(profile: profile).render(pattern)
        let planner = DeviceCommandPlanner(profile: profile)
        let whole = planner.commands(for: timeline)
        #expect(whole.count > 2)
        var state = DeviceCommandPlanner.Resumption.deviceOff
        for index in whole.indices {
            state = planner.resumption(after: whole[index], from: state)
            let resumed = planner.commands(for: timeline, from: whole[index].time, resuming: state)
            let expected = whole[(index + 1)...]
            #expect(resumed.map(\.time) == expected.map(\.time), "resumed after command \(index) (\(profile.name))")
            #expect(resumed.map(\.levels) == expected.map(\.levels), "resumed after command \(index) (\(profile.name))")
        }
    }

    @Test(arguments: patterns, RenderProfile.builtIn)
    func planningUntilAnInstantGivesTheWholePlanUpToItsFirstCommandThere(pattern: HapticPattern, profile: RenderProfile)
    {
        let timeline = PatternRenderer(profile: profile).render(pattern)
        let planner = DeviceCommandPlanner(profile: profile)
        let whole = planner.commands(for: timeline)
        for until in [0.0, 0.1, 0.25, 0.45, 10] {
            let part = planner.commands(for: timeline, from: 0, resuming: .deviceOff, until: until)
            let expected = whole.prefix { $0.time < until } + whole.drop { $0.time < until }.prefix(1)
            #expect(part.map(\.time) == expected.map(\.time), "until \(until) (\(profile.name))")
            #expect(part.map(\.levels) == expected.map(\.levels), "until \(until) (\(profile.name))")
        }
    }

    /// A burst of changes ending off: the device is at rest from `restsFrom` on (interval and budget back), not
    /// a millisecond before, on every profile; never while it holds a level; always when sent nothing.
    @Test(arguments: RenderProfile.builtIn)
    func aDeviceIsAtRestFromTheInstantRestsFromGives(profile: RenderProfile) throws {
        let planner = DeviceCommandPlanner(profile: profile)
        let on = MotorMagnitudes(strong: 1, weak: 1)
        var state = DeviceCommandPlanner.Resumption.deviceOff
        #expect(planner.restsFrom(state) == -.infinity)
        let gap = profile.minimumUpdateInterval
        for (index, levels) in [on, .off, on, .off].enumerated() {
            state = planner.resumption(
                after: RumbleCommand(time: 1 + Double(index) * gap, levels: levels, holdDuration: nil), from: state)
        }
        #expect(planner.restsFrom(.init(sent: on, lastCommandTime: 1)) == nil)
        let rest = try #require(planner.restsFrom(state))
        #expect(rest >= state.lastCommandTime + gap)
        #expect(planner.isAtRest(state, at: rest + 1e-9), "\(profile.name)")
        #expect(!planner.isAtRest(state, at: rest - 0.001), "\(profile.name)")
    }

    @Test(arguments: RenderProfile.builtIn)
    func aTimelineCutMidRampWithItsLevelsBeforeTheCutPlansAsTheWholeOneResumedThere(profile: RenderProfile) {
        // A ramp, a jump, a ramp down: cut at 0.137, in the first ramp, where a device got a level at 0.137 (as at
        // a plan's horizon). Without the levels before the cut its first instant reads as a jump from silence,
        // sent at the interval (on `switch`, here). (No level of the holds lies exactly half-way between two steps:
        // engine-time rounding could tip such a tie.)
        let planner = DeviceCommandPlanner(profile: profile)
        let whole = MotorTimeline(segments: [
            .init(
                start: 0, end: 0.3, startLevels: .init(strong: 0.2, weak: 0.3),
                endLevels: .init(strong: 0.37, weak: 0.41)),
            .init(start: 0.3, end: 0.6, startLevels: .init(strong: 0.43, weak: 0.97), endLevels: .off),
        ])
        let cut = 0.137
        let holds = planner.resumption(
            after: RumbleCommand(time: cut, levels: planner.quantized(whole.levels(at: 0.1)), holdDuration: nil),
            from: .deviceOff)
        let resumed = planner.commands(for: whole, from: cut, resuming: holds)
        let local = DeviceCommandPlanner.Resumption(
            sent: holds.sent, lastCommandTime: 0, writesLeft: holds.writesLeft)
        let continued = planner.commands(
            for: whole.slice(from: cut), from: 0, resuming: local, levelsBefore: whole.levels(justBefore: cut))
        #expect(continued.count == resumed.count, "\(profile.name)")
        for (a, b) in zip(continued, resumed) {
            #expect(close(a.time + cut, b.time, within: 1e-9) && a.levels == b.levels, "\(profile.name)")
        }
    }

    @Test func aRenewalMadeLateTakesItsWritesOnceAtTheTimeItWentOut() {
        // Switch: 26 writes a second, a burst of 2, a renewal every 40 ms. A level sent at rest at 0 leaves 1, the
        // renewal at 0.04 on time 1.04; the one due at 0.08 goes out at 0.1. Before it the budget refilled to its
        // burst (2): 1 is left after it, from 0.1, and the renewals after it fall due from 0.1. Counted as a
        // command at 0.1 after the renewal at 0.08 (which never went out), it would leave 0.52. The minimum
        // interval still counts from the command at 0: a change may go out at once.
        let planner = DeviceCommandPlanner(profile: .switchPro)
        let level = MotorMagnitudes(strong: 0.5, weak: 0.5)
        let sent = planner.resumption(
            after: RumbleCommand(time: 0, levels: level, holdDuration: nil), from: .deviceOff)
        #expect(close(sent.writesLeft, 1, within: 1e-9) && sent.lastWriteTime == 0)
        let after = planner.resumption(afterRenewalDueAt: 0.08, madeAt: 0.1, from: sent)
        #expect(after.sent == level && after.lastCommandTime == 0 && after.lastWriteTime == 0.1)
        #expect(close(after.writesLeft, 1, within: 1e-9), "\(after.writesLeft)")
        #expect(planner.earliestChange(after: after, from: 0.1) == 0.1)
        let asACommand = planner.resumption(
            after: RumbleCommand(time: 0.1, levels: level, holdDuration: nil), from: sent)
        #expect(close(asACommand.writesLeft, 0.52, within: 1e-9))
    }

    @Test func aChangeMadeLateTakesThePlaceOfTheRenewalDueWithIt() {
        // Switch: a level sent at rest at 0 leaves 1; renewals at 0.04 and 0.08 on time leave 1 each (capped at the
        // burst, 2, before each). A change due at 0.12, with the renewal due then, that goes out at 0.1203 takes
        // that renewal's place: 1 left, as on time (the burst is back by 0.12). Counted as a change at 0.1203 after
        // a renewal at 0.12 that never went out, it would leave 0.0078, and the next change would wait 38 ms for
        // the budget. The minimum interval and the next renewal count from 0.1203, when it went out.
        let planner = DeviceCommandPlanner(profile: .switchPro)
        let level = MotorMagnitudes(strong: 0.5, weak: 0.5)
        let sent = planner.resumption(
            after: RumbleCommand(time: 0, levels: level, holdDuration: nil), from: .deviceOff)
        let change = RumbleCommand(time: 0.12, levels: MotorMagnitudes(strong: 0.8, weak: 0.8), holdDuration: nil)
        let late = planner.resumption(after: change, madeAt: 0.1203, from: sent)
        #expect(late.sent == change.levels && late.lastCommandTime == 0.1203 && late.lastWriteTime == 0.1203)
        #expect(close(late.writesLeft, 1, within: 1e-9), "\(late.writesLeft)")
        let asMadeThen = planner.resumption(
            after: RumbleCommand(time: 0.1203, levels: change.levels, holdDuration: nil), from: sent)
        #expect(close(asMadeThen.writesLeft, 26 * 0.0003, within: 1e-9), "\(asMadeThen.writesLeft)")
        #expect(planner.earliestChange(after: late, from: 0.1503) == 0.1503)
    }

    @Test func renewalsFallDueFromARenewalMadeLate() {
        // Switch holds 0.5 from 0 while the timeline ramps gently from 0.5 to 0.6 over a second: a drift goes out
        // with a renewal, which carries it at no extra write. With the renewal due at 0.08 made at 0.1, the next
        // renewal is due at 0.14, not 0.12: a drift waiting for a renewal goes out then.
        let planner = DeviceCommandPlanner(profile: .switchPro)
        let ramp = MotorTimeline(segments: [
            .init(
                start: 0, end: 1, startLevels: .init(strong: 0.5, weak: 0.5), endLevels: .init(strong: 0.6, weak: 0.6))
        ])
        let sent = planner.resumption(
            after: RumbleCommand(time: 0, levels: planner.quantized(ramp.levels(at: 0)), holdDuration: nil),
            from: .deviceOff)
        let onTime = planner.commands(for: ramp, from: 0.1, resuming: sent)
        let late = planner.commands(
            for: ramp, from: 0.1, resuming: planner.resumption(afterRenewalDueAt: 0.08, madeAt: 0.1, from: sent))
        let first = (onTime.first?.time ?? 0, late.first?.time ?? 0)
        #expect(close(first.0, 0.12, within: 1e-9) && close(first.1, 0.14, within: 1e-9), "\(first)")
    }

    @Test func resumingRespectsTheLastCommandsInterval() {
        // The device got a level 5 ms before the plan starts: a change at the start waits out the interval.
        let profile = RenderProfile.genericRumble
        let timeline = MotorTimeline(segments: [
            .init(start: 0, end: 0.1, startLevels: .init(strong: 1, weak: 1), endLevels: .init(strong: 1, weak: 1))
        ])
        let commands = DeviceCommandPlanner(profile: profile).commands(
            for: timeline, from: 0, resuming: .init(sent: .init(strong: 0.2, weak: 0.2), lastCommandTime: -0.005))
        #expect(commands.count == 2)
        #expect(close(commands.first?.time ?? -1, -0.005 + profile.minimumUpdateInterval, within: 1e-12))
        #expect(commands.last?.time == 0.1 && commands.last?.levels == .off)
        #expect(commands.first?.levels == MotorMagnitudes(strong: 1, weak: 1))
    }
}
