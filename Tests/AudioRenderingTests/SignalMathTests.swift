import AudioRendering
import Glibc
import HapticRendering
import Testing

@Suite("Signal maths")
struct SignalMathTests {
    @Test("the pure sine, cosine, exponential and logarithm agree with the C library")
    func pureMathAgreesWithLibm() {
        for step in -400...400 {
            let x = Double(step) * 0.0317
            #expect(abs(PureMath.sin(x) - Glibc.sin(x)) < 1e-12, "sin \(x)")
            #expect(abs(PureMath.cos(x) - Glibc.cos(x)) < 1e-12, "cos \(x)")
            #expect(abs(PureMath.exp(x / 4) - Glibc.exp(x / 4)) / Glibc.exp(x / 4) < 1e-12, "exp \(x / 4)")
            let positive = Glibc.exp(x / 8)
            #expect(abs(PureMath.log2(positive) - Glibc.log2(positive)) < 1e-12, "log2 \(positive)")
        }
    }

    /// An exponent out of `Int`'s range trapped (a mixer at 1e-300 Hz), until 6 December.
    @Test("2^x is total: NaN for NaN, infinity past the largest power of two, 0 below the smallest")
    func exp2IsTotal() {
        #expect(PureMath.exp2(.nan).isNaN)
        #expect(PureMath.exp2(1e300) == .infinity && PureMath.exp2(.infinity) == .infinity)
        #expect(PureMath.exp2(-1e300) == 0 && PureMath.exp2(-.infinity) == 0)
        #expect(PureMath.exp2(1023) == Glibc.exp2(1023) && PureMath.exp2(-1074) == Glibc.exp2(-1074))
        #expect(PureMath.exp(-1e305) == 0)
    }

    @Test("the pan law keeps the power constant across the stereo field")
    func panLawEnergy() {
        for step in -20...20 {
            let gains = EqualPower.pan(Double(step) / 20)
            #expect(abs(gains.left * gains.left + gains.right * gains.right - 1) < 1e-12)
        }
        let centre = EqualPower.pan(0)
        #expect(abs(centre.left - 1 / 2.0.squareRoot()) < 1e-12)
        #expect(abs(centre.left - centre.right) < 1e-12)
        #expect(abs(EqualPower.pan(-1).left - 1) < 1e-12 && abs(EqualPower.pan(-1).right) < 1e-12)
        #expect(abs(EqualPower.pan(1).right - 1) < 1e-12 && abs(EqualPower.pan(1).left) < 1e-12)
        #expect(EqualPower.pan(-5) == EqualPower.pan(-1), "pan is clamped to -1 ... 1")
    }

    @Test("the balance law leaves a centred stereo source as it is and silences the far side at the edge")
    func balanceLaw() {
        let centre = EqualPower.balance(0)
        #expect(abs(centre.left - 1) < 1e-12 && abs(centre.right - 1) < 1e-12)
        let left = EqualPower.balance(-1)
        #expect(abs(left.left - 1) < 1e-12 && abs(left.right) < 1e-12)
        let halfRight = EqualPower.balance(0.5)
        #expect(abs(halfRight.right - 1) < 1e-12 && halfRight.left < 1 && halfRight.left > 0)
    }

    @Test("the cross-fade curve sums to constant power and runs from outgoing to incoming")
    func crossFadePower() {
        var previous = EqualPower.crossFade(progress: 0)
        #expect(abs(previous.outgoing - 1) < 1e-12 && abs(previous.incoming) < 1e-12)
        for step in 1...50 {
            let gains = EqualPower.crossFade(progress: Double(step) / 50)
            #expect(abs(gains.outgoing * gains.outgoing + gains.incoming * gains.incoming - 1) < 1e-12)
            #expect(gains.outgoing < previous.outgoing && gains.incoming > previous.incoming)
            previous = gains
        }
        #expect(abs(previous.outgoing) < 1e-12 && abs(previous.incoming - 1) < 1e-12)
        let middle = EqualPower.crossFade(progress: 0.5)
        #expect(abs(middle.outgoing - middle.incoming) < 1e-12, "both at -3 dB half-way")
    }

    @Test("pitch moves the playback rate by up to an octave each way")
    func pitchRate() {
        #expect(AudioMapping.playbackRate(pitch: 0) == 1)
        #expect(abs(AudioMapping.playbackRate(pitch: 1) - 2) < 1e-12)
        #expect(abs(AudioMapping.playbackRate(pitch: -1) - 0.5) < 1e-12)
        #expect(abs(AudioMapping.playbackRate(pitch: 0.5) - 2.0.squareRoot()) < 1e-12)
        #expect(abs(AudioMapping.playbackRate(pitch: 3) - 2) < 1e-12, "clamped to 1")
        #expect(AudioMapping.playbackRate(pitch: .nan) == 1, "not a number: as written")
    }

    @Test("brightness sets a low-pass cut-off spaced in octaves, and none at 1")
    func brightnessCutoff() throws {
        #expect(AudioMapping.brightnessCutoff(1) == nil)
        #expect(AudioMapping.brightnessCutoff(2) == nil)
        #expect(abs(try #require(AudioMapping.brightnessCutoff(0)) - 200) < 1e-9)
        #expect(abs(try #require(AudioMapping.brightnessCutoff(0.5)) - 2000) < 1e-9)
        #expect(AudioMapping.lowPassCoefficient(cutoff: nil, sampleRate: 48000) == 1)
        let coefficient = AudioMapping.lowPassCoefficient(cutoff: 1000, sampleRate: 48000)
        #expect(abs(coefficient - (1 - Glibc.exp(-2 * Double.pi * 1000 / 48000))) < 1e-12)
    }

    @Test("the tone is a 4-partial sawtooth that stays within full scale")
    func toneShape() {
        var peak = 0.0
        for step in 0..<1000 {
            let phase = Double(step) / 1000
            let expected =
                (Glibc.sin(2 * .pi * phase) + Glibc.sin(4 * .pi * phase) / 2 + Glibc.sin(6 * .pi * phase) / 3
                    + Glibc.sin(8 * .pi * phase) / 4) / (1 + 1.0 / 2 + 1.0 / 3 + 1.0 / 4)
            #expect(abs(AudioMapping.tone(phase: phase) - expected) < 1e-9)
            peak = max(peak, abs(AudioMapping.tone(phase: phase)))
        }
        #expect(peak <= 1 && peak > 0.5)
    }
}
