// The built-in virtual output answers with the device model (`DeviceOutput`): the engine's held mix, renewed while
// it plays and off when it ends, plus prepared pulses on top.
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Testing

@Suite struct VirtualOutputTests {
    let clock = ManualClock(startingAt: 10)
    let model = VirtualOutput()
    let engine: HapticEngine

    init() throws {
        engine = HapticEngine(output: .virtual(model), clock: clock, logger: quietLogger())
        try engine.start()
    }

    @Test func aTriggerLocalityFailsTheStartAsOnAPadWithoutTriggerMotors() {
        for locality in [HapticLocality.leftTrigger, .rightTrigger, .triggers] {
            var options = HapticEngineOptions()
            options.locality = locality
            let triggers = HapticEngine(output: .virtual(model), options: options, clock: clock, logger: quietLogger())
            do {
                try triggers.start()
                Issue.record("an engine with locality \(locality) started on the virtual output")
            } catch {
                #expect(
                    error.message.hasPrefix(
                        "the virtual output has no trigger motors, so locality \(locality.rawValue) cannot play on it"),
                    "\(error.message)")
            }
            #expect(!triggers.isRunning)
        }
        var left = HapticEngineOptions()
        left.locality = .leftHandle
        let body = HapticEngine(output: .virtual(VirtualOutput()), options: left, clock: clock, logger: quietLogger())
        #expect(throws: Never.self) { try body.start() }
    }

    @Test func heldMixIsRenewedWhilePlayingAndOffAfter() throws {
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(0.6, 0.2, to: 2)))
        try player.start(atTime: 0)
        clock.advance(by: 0.1)
        let playing = model.levels()
        #expect(playing == MotorMagnitudes(strong: q(0.6), weak: q(0.2)))
        #expect(engine.outputLevels == playing)
        // Far past the 150 ms self-expiry of one write: the engine's renewals keep it running.
        clock.advance(by: 1.5)
        #expect(model.levels() == playing)
        clock.advance(by: 0.5)
        #expect(model.levels() == .off)
    }

    @Test func aPreparedPulseAddsToTheHeldMix() throws {
        let held = try engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0.5, to: 1)))
        try held.start(atTime: 0)
        clock.advance(by: 0.1)
        let tap = try engine.makeAdvancedPlayer(timeline: timeline(pulse(0.25, 0.75, to: 0.2)))
        #expect(try tap.prepare())
        // The pulse is quantised to the profile's steps like any command; its sum with the mix is clamped.
        try tap.start(atTime: 0)
        #expect(model.levels() == MotorMagnitudes(strong: q(0.5) + q(0.25), weak: 1))
        clock.advance(by: 0.3)
        #expect(model.levels() == MotorMagnitudes(strong: q(0.5), weak: q(0.5)))
    }
}
