import HapticRendering

/// How the unitless audio parameters become sound, where Core Haptics does not say: documented in
/// docs/audio.md and kept here, one place each.
public enum AudioMapping {
    /// `AudioPitch` -1 ... 1 as a playback rate: one octave down to one octave up (rate 2^pitch), so 0 plays a
    /// file as it is. A file played faster is shorter, as on a turntable (varispeed). A pitch that is not a number
    /// is 0 (a NaN made the rate NaN, and the mixer trapped on the clip's position, until 6 December).
    public static func playbackRate(pitch: Double) -> Double {
        pitch.isNaN ? 1 : PureMath.exp2(Swift.min(Swift.max(pitch, -1), 1))
    }

    /// The lowest cut-off of the brightness filter, at `AudioBrightness` 0, in hertz.
    public static let darkestCutoff: Double = 200
    /// The cut-off just below `AudioBrightness` 1, in hertz; at 1 itself the filter is off.
    public static let brightestCutoff: Double = 20_000

    /// The cut-off of the one-pole low-pass for an `AudioBrightness` (clamped to 0 ... 1), spaced evenly in
    /// octaves from `darkestCutoff` to `brightestCutoff`; `nil` at 1 (the default), where nothing is filtered.
    public static func brightnessCutoff(_ brightness: Double) -> Double? {
        let value = Swift.min(Swift.max(brightness, 0), 1)
        guard value < 1 else { return nil }
        return darkestCutoff * PureMath.pow(brightestCutoff / darkestCutoff, value)
    }

    /// The smoothing factor `a` of the one-pole low-pass `y += a * (x - y)` for a cut-off at `sampleRate`:
    /// 1 - e^(-2 pi fc / fs), the impulse-invariant pole; 1 (no filtering) when there is no cut-off.
    public static func lowPassCoefficient(cutoff: Double?, sampleRate: Double) -> Double {
        guard let cutoff, sampleRate > 0 else { return 1 }
        return 1 - PureMath.exp(-2 * PureMath.pi * cutoff / sampleRate)
    }

    /// The frequency of the `AudioContinuous` tone at pitch 0, in hertz; pitch moves it by up to an octave.
    public static let toneFrequency: Double = 220
    /// The harmonic amplitudes of the tone (fundamental first): the first four partials of a sawtooth, so that
    /// brightness has something to take away. The tone is their sum divided by `toneHarmonics` summed, so it
    /// never exceeds full scale.
    public static let toneHarmonics: [Double] = [1, 1.0 / 2, 1.0 / 3, 1.0 / 4]

    /// The tone's sample at `phase` (in cycles of the fundamental), -1 ... 1. The harmonics come from the
    /// fundamental's sine and cosine by the Chebyshev recurrence sin((n+1)x) = 2 cos x sin nx - sin((n-1)x).
    public static func tone(phase: Double) -> Double {
        let angle = 2 * PureMath.pi * phase
        let twiceCosine = 2 * PureMath.cos(angle)
        var previous = 0.0
        var current = PureMath.sin(angle)
        var sum = 0.0
        for amplitude in toneHarmonics {
            sum += amplitude * current
            (previous, current) = (current, twiceCosine * current - previous)
        }
        return sum / toneNormaliser
    }

    private static let toneNormaliser = toneHarmonics.reduce(0, +)

    /// The seconds of a not-sustained audio event's decay when its `DecayTime` maps to less: a zero decay
    /// still sounds a short tick rather than nothing.
    public static let shortestDecay: Double = 0.01
}
