import Testing
@testable import LinuxInput

@Suite struct ForceFeedbackFeatureTests {
    @Test func namesAreTheKernelsLowerCasedWithoutPrefix() {
        #expect(ForceFeedbackFeature.sawUp.name == "saw_up")
        #expect(ForceFeedbackFeature(name: "saw-up") == .sawUp)
        #expect(ForceFeedbackFeature(name: "FF_RUMBLE") == .rumble)
        #expect(ForceFeedbackFeature(name: "wobble") == nil)
    }

    @Test func codesMatchLinuxInputH() {
        // linux/input.h: FF_RUMBLE 0x50 ... FF_AUTOCENTER 0x61
        #expect(ForceFeedbackFeature.rumble.rawValue == 0x50)
        #expect(ForceFeedbackFeature.custom.rawValue == 0x5d)
        #expect(ForceFeedbackFeature.autocenter.rawValue == 0x61)
        #expect(ForceFeedbackFeature.allCases.filter(\.isEffectType).count == 8)
        #expect(ForceFeedbackFeature.allCases.filter(\.isWaveform).count == 6)
    }

    @Test func magnitudeClampsAndScales() {
        #expect(ForceFeedbackEffect.magnitude(0) == 0)
        #expect(ForceFeedbackEffect.magnitude(1) == 0xffff)
        #expect(ForceFeedbackEffect.magnitude(2) == 0xffff)
        #expect(ForceFeedbackEffect.magnitude(-1) == 0)
        #expect(ForceFeedbackEffect.magnitude(.nan) == 0)
        #expect(ForceFeedbackEffect.magnitude(0.5) == 0x8000)
    }

    @Test func magnitudesOfExactStepsLandOnTheDriversStep() {
        // hid-microsoft divides by 655, xpad (360) and hid-playstation by 256.
        for step in 0...100 {
            #expect(Int(ForceFeedbackEffect.magnitude(Double(step) / 100)) / 655 == step)
        }
        for step in 0...255 {
            #expect(Int(ForceFeedbackEffect.magnitude(Double(step) / 255)) / 256 == step)
        }
        for magnitude in [UInt16(0), 1, 2330, 0x7fff, 0x8000, .max] {
            #expect(ForceFeedbackEffect.magnitude(ForceFeedbackEffect.fraction(magnitude)) == magnitude)
        }
    }

    @Test(arguments: [
        ForceFeedbackEffect(id: 3, kind: .rumble(strong: 0x1234, weak: 0xfedc), replayLength: 250, replayDelay: 10),
        ForceFeedbackEffect(
            kind: .periodic(
                waveform: .sine, period: 20, magnitude: -12000, offset: 5, phase: 7,
                envelope: ForceFeedbackEnvelope(attackLength: 100, attackLevel: 1, fadeLength: 200, fadeLevel: 2)),
            direction: 0x4000, triggerButton: 0x120, triggerInterval: 30, replayLength: 1000),
        ForceFeedbackEffect(kind: .constant(level: -300, envelope: ForceFeedbackEnvelope(fadeLength: 9))),
        ForceFeedbackEffect(kind: .ramp(startLevel: -1, endLevel: 32767, envelope: ForceFeedbackEnvelope())),
        ForceFeedbackEffect(
            kind: .condition(
                type: .damper,
                axes: [
                    ForceFeedbackCondition(
                        rightSaturation: 1, leftSaturation: 2, rightCoefficient: -3, leftCoefficient: 4, deadband: 5,
                        center: -6),
                    ForceFeedbackCondition(center: 7),
                ])),
    ])
    func kernelStructRoundTrip(effect: ForceFeedbackEffect) throws {
        #expect(try ForceFeedbackEffect(effect.raw) == effect)
    }
}
