// The timeline seam and the pure pieces: segment lookup, silence filling, mixing, the interim builder.
import AHAP
import HapticRendering
import LinuxHaptics
import Testing

@Suite struct TimelineTests {
    @Test func mixingSaturatesAndClamps() {
        let mix = MotorMagnitudes.summed([
            MotorMagnitudes(strong: 0.7, weak: 0.1), MotorMagnitudes(strong: 0.7, weak: 0.2),
        ])
        #expect(mix.strong == 1)
        #expect(abs(mix.weak - 0.3) < 1e-12)
        #expect(MotorMagnitudes(strong: .nan, weak: 2).clamped() == MotorMagnitudes(strong: 0, weak: 1))
    }
}
