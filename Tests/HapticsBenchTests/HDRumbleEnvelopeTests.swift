// How the HD rumble bench reads a Switch frame as a level to set against a pattern's intensity envelope.
import HapticRendering
import HapticTestDevices
import Testing

@testable import haptics_bench

@Suite struct HDRumbleEnvelopeTests {
    static func actuator(low: Double, lowFrequency: Double = 160, high: Double, highFrequency: Double = 320)
        -> SwitchRumblePacket.Actuator
    {
        .init(lowFrequency: lowFrequency, lowAmplitude: low, highFrequency: highFrequency, highAmplitude: high)
    }

    static func packet(left: SwitchRumblePacket.Actuator, right: SwitchRumblePacket.Actuator, played: Bool = true)
        -> SwitchRumblePacket
    {
        SwitchRumblePacket(counter: 0, played: played, left: left, right: right)
    }

    @Test func aBandIsReadBackThroughTheFeltAmplitudeCurveAtItsFrequency() {
        // A level of 0.5 at 320 Hz goes out as the amplitude the renderer gives it; read back, it is 0.5 again.
        let amplitude = VibrationAmplitude.amplitude(level: 0.5, frequency: 320)
        let frame = Self.packet(left: Self.actuator(low: 0, high: amplitude), right: Self.actuator(low: 0, high: 0))
        #expect(abs(EnvelopeErrors.feltLevel(frame) - 0.5) < 1e-12)
    }

    @Test func anActuatorsTwoBandsAddUpToFullAndTheLouderActuatorCounts() {
        let low = VibrationAmplitude.amplitude(level: 0.3, frequency: 160)
        let high = VibrationAmplitude.amplitude(level: 0.4, frequency: 320)
        let quieter = VibrationAmplitude.amplitude(level: 0.6, frequency: 160)
        let frame = Self.packet(left: Self.actuator(low: low, high: high), right: Self.actuator(low: quieter, high: 0))
        #expect(abs(EnvelopeErrors.feltLevel(frame) - 0.7) < 1e-12)
        let loud = Self.packet(left: Self.actuator(low: 0.9, high: 0.9), right: Self.actuator(low: 0, high: 0))
        #expect(EnvelopeErrors.feltLevel(loud) == 1)
    }

    @Test func aFrameAtRestOrNotPlayedOrMissingIsSilence() {
        let playing = Self.actuator(low: 0.5, high: 0.5)
        #expect(EnvelopeErrors.feltLevel(nil) == 0)
        #expect(EnvelopeErrors.feltLevel(Self.packet(left: playing, right: playing, played: false)) == 0)
        #expect(
            EnvelopeErrors.feltLevel(
                Self.packet(left: Self.actuator(low: 0, high: 0), right: Self.actuator(low: 0, high: 0))) == 0)
    }

    @Test func theDriversFrameIsReadAsItsLouderMotorStrongLeftLowWeakRightHighAndAnIgnoredOneAsRest() {
        let frame = Self.packet(left: Self.actuator(low: 0.25, high: 0.9), right: Self.actuator(low: 0.8, high: 0.4))
        #expect(EnvelopeErrors.motorLevel(frame) == 0.4)
        #expect(EnvelopeErrors.motorLevel(nil) == 0)
        #expect(EnvelopeErrors.motorLevel(Self.packet(left: frame.left, right: frame.right, played: false)) == 0)
    }
}
