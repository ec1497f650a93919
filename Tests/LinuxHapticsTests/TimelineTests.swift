// The timeline seam and the pure pieces: segment lookup, silence filling, mixing, the interim builder.
import AHAP
import HapticRendering
import LinuxHaptics
import Testing

@Suite struct TimelineTests {
    @Test func mixingSaturatesAndClamps() {
        let mix = MotorMagnitudes.summed([MotorMagnitudes(strong: 0.7, weak: 0.1), MotorMagnitudes(strong: 0.7, weak: 0.2)])
        #expect(mix.strong == 1)
        #expect(abs(mix.weak - 0.3) < 1e-12)
        #expect(MotorMagnitudes(strong: .nan, weak: 2).clamped() == MotorMagnitudes(strong: 0, weak: 1))
    }

    @Test func aPatternPlaysTheRenderersTimelineAtItsBreakpoints() throws {
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
        let rendered = PatternRenderer(profile: .genericRumble).render(pattern)
        let applied = recorder.appliedMixes()
        #expect(applied.count >= 4)
        for change in applied.dropLast() {
            let expected = rendered.levels(at: change.time + 1e-7)
            #expect(Change(at: change.time, change.mix) == Change(at: change.time, expected))
        }
        #expect(applied.last.map { abs($0.time - rendered.endTime) < 1e-6 && $0.mix.isOff } == true)
    }
}
