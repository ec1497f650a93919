import HapticRendering
import Testing

@Suite("What a device's motors do at time t")
struct DeviceOutputTests {
    static let low = MotorMagnitudes(strong: 0.25, weak: 0.5)
    static let high = MotorMagnitudes(strong: 0.75, weak: 0.75)

    @Test func aHoldRunsUntilItExpiresOrTheNextHold() {
        var output = DeviceOutput()
        output.hold(Self.low, at: 1, expiry: 1.75)
        #expect(output.levels(at: 0.999) == .off)
        #expect(output.levels(at: 1) == Self.low)
        #expect(output.levels(at: 1.749) == Self.low)
        #expect(output.levels(at: 1.75) == .off, "self-expiry: the effect's replay ran out")
        output.hold(Self.high, at: 1.5, expiry: 2.25)
        #expect(output.levels(at: 1.499) == Self.low)
        #expect(output.levels(at: 2) == Self.high, "the later hold replaces the earlier one's expiry")
        #expect(output.levels(at: 2.25) == .off)
    }

    @Test func pulsesAddToTheHeldLevelAndTheSumIsClamped() {
        var output = DeviceOutput()
        output.hold(Self.low, at: 0)
        output.pulse(Self.high, at: 1, duration: 0.5)
        #expect(output.levels(at: 0.5) == Self.low)
        #expect(output.levels(at: 1) == MotorMagnitudes(strong: 1, weak: 1))
        #expect(output.levels(at: 1.5) == Self.low, "a pulse ends after its duration")
        output.hold(.off, at: 2)
        output.pulse(Self.low, at: 2, duration: 1)
        output.pulse(Self.low, at: 2.5, duration: 1)
        #expect(output.levels(at: 2.75) == MotorMagnitudes(strong: 0.5, weak: 1))
    }

    @Test func aPulseOnASlotRestartsWhenPlayedAgainAndEndsWhenStopped() {
        var output = DeviceOutput()
        output.pulse(Self.low, at: 0, duration: 1, slot: 3)
        output.pulse(Self.low, at: 0.5, duration: 1, slot: 3)
        #expect(output.levels(at: 0.75) == Self.low, "one effect plays once at a time: not summed")
        #expect(output.levels(at: 1.25) == Self.low, "the replay restarted")
        output.stopPulse(slot: 3, at: 1.3)
        #expect(output.levels(at: 1.3) == .off)
    }

    @Test func aHoldEarlierThanTheLastRewritesTheHistoryFromThere() {
        var output = DeviceOutput()
        output.hold(Self.low, at: 1)
        output.hold(Self.high, at: 2)
        output.hold(.off, at: 1.5)
        #expect(output.holds.map(\.time) == [1, 1.5])
        #expect(output.levels(at: 2.5) == .off)
        output.hold(Self.high, at: 1.5)
        #expect(output.holds.count == 2, "a hold at the same time replaces the one there")
        #expect(output.levels(at: 1.5) == Self.high)
    }

    @Test func forgettingThePastKeepsThePresent() {
        var output = DeviceOutput()
        for step in 0..<10 { output.hold(step.isMultiple(of: 2) ? Self.low : Self.high, at: Double(step)) }
        output.pulse(Self.low, at: 3, duration: 1)
        output.pulse(Self.low, at: 8, duration: 2)
        output.forget(before: 8.5)
        #expect(output.holds.map(\.time) == [8, 9])
        #expect(output.pulses.count == 1)
        #expect(output.levels(at: 8.5) == MotorMagnitudes(strong: 0.5, weak: 1))
        #expect(output.nextHold(after: 8.5)?.time == 9)
        #expect(output.hold(at: 8.5)?.levels == Self.low)
    }

    @Test func commandsHoldUntilTheNextLikeTheDevice() {
        let commands = [
            RumbleCommand(time: 0.1, levels: Self.low, holdDuration: 0.2),
            RumbleCommand(time: 0.3, levels: .off, holdDuration: nil),
        ]
        let output = DeviceOutput(commands: commands)
        #expect(output.levels(at: 0) == .off)
        #expect(output.levels(at: 0.2) == Self.low)
        #expect(output.levels(at: 100) == .off)
    }
}

@Suite("The attack-and-fade envelope rule")
struct AttackFadeEnvelopeTests {
    @Test func rampsUpOverTheAttackAndDownOverTheFade() {
        let envelope = AttackFadeEnvelope<Double>(attackLength: 0.1, attackLevel: 0.2, fadeLength: 0.2, fadeLevel: 0)
        #expect(envelope.level(of: 1, elapsed: 0, remaining: 1) == 0.2)
        #expect(abs(envelope.level(of: 1, elapsed: 0.05, remaining: 1) - 0.6) < 1e-12)
        #expect(envelope.level(of: 1, elapsed: 0.1, remaining: 0.5) == 1)
        #expect(abs(envelope.level(of: 1, elapsed: 0.5, remaining: 0.1) - 0.5) < 1e-12)
        #expect(envelope.level(of: 1, elapsed: 0.5, remaining: nil) == 1, "a replay without an end never fades")
        #expect(envelope.level(of: 1, elapsed: 0.05, remaining: 0.05) > 0.5, "the attack wins where both apply")
    }

    @Test func integersTruncateAsTheKernelDoes() {
        // ff-memless's apply_envelope: (value - level) * elapsed / length + level, in C's integer division.
        let envelope = AttackFadeEnvelope<Int64>(attackLength: 30, attackLevel: 0, fadeLength: 30, fadeLevel: 100)
        #expect(envelope.level(of: 1000, elapsed: 10, remaining: 500) == 333)
        #expect(envelope.level(of: 1000, elapsed: 100, remaining: 10) == 400)
        #expect(envelope.level(of: 1000, elapsed: 100, remaining: 0) == 1000, "at the stop the fade is over")
    }
}
