// The timeline seam and the pure pieces: segment lookup, silence filling, mixing, the interim builder.
import AHAP
import LinuxHaptics
import Testing

@Suite struct TimelineTests {
    @Test func gapsBecomeSilenceAndLookupFindsTheHoldingSegment() {
        let line = timeline(pulse(1, 0, from: 0.1, to: 0.2), pulse(0, 1, from: 0.5, to: 0.6))
        #expect(line.segments.count == 4)
        #expect(line.duration == 0.6)
        #expect(line.segment(at: 0.05)?.from == .off)
        #expect(line.segment(at: 0.1)?.from == MotorMix(strong: 1, weak: 0))
        #expect(line.segment(at: 0.3)?.end == 0.5)
        #expect(line.segment(at: 0.6) == nil)
    }

    @Test func mixingSaturatesAndClamps() {
        let mix = MotorMix.mixed([MotorMix(strong: 0.7, weak: 0.1), MotorMix(strong: 0.7, weak: 0.2)])
        #expect(mix.strong == 1)
        #expect(abs(mix.weak - 0.3) < 1e-12)
        #expect(MotorMix(strong: .nan, weak: 2) == MotorMix(strong: 0, weak: 1))
    }

    @Test func interimBuilderGivesEveryHapticEventASpan() throws {
        let pattern = HapticPattern(events: [
            HapticEvent(type: .hapticTransient, parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: 1),
                HapticEventParameter(parameterID: .hapticSharpness, value: 0),
            ], relativeTime: 0),
            HapticEvent(type: .hapticContinuous, parameters: [
                HapticEventParameter(parameterID: .hapticIntensity, value: 0.5),
                HapticEventParameter(parameterID: .hapticSharpness, value: 1),
            ], relativeTime: 0.5, duration: 0.25),
        ], parameters: [])
        let clock = ManualClock()
        let recorder = RecordingOutput()
        let engine = HapticEngine(output: .recording(recorder), clock: clock, logger: quietLogger())
        try engine.start()
        try engine.makePlayer(with: pattern).start(atTime: 0)
        clock.advance(by: 1)
        let changes = recorder.appliedMixes().map { Change(at: $0.time, $0.mix) }
        #expect(changes == [
            Change(at: 0, strong: 1, weak: 0), Change(at: 0.05, .off), Change(at: 0.5, strong: 0, weak: 0.5),
            Change(at: 0.75, .off),
        ])
    }
}
