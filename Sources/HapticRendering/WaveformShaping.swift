/// Sharpness 0...1 onto a frequency, geometrically between a dull and a sharp end: equal steps of sharpness are
/// equal frequency ratios, since felt (and heard) pitch follows the ratio of frequencies, not their difference.
public struct SharpnessFrequencyMap: Sendable, Hashable {
    /// The frequency at sharpness 0, in Hz.
    public var dull: Double
    /// The frequency at sharpness 1, in Hz (at least `dull`, so that the map never decreases).
    public var sharp: Double

    public init(dull: Double, sharp: Double) {
        self.dull = Swift.max(dull, 0)
        self.sharp = Swift.max(sharp, self.dull)
    }

    /// The frequency for `sharpness`, clamped to 0...1 first.
    public func frequency(sharpness: Double) -> Double {
        let s = sharpness.isNaN ? 0 : Swift.min(Swift.max(sharpness, 0), 1)
        guard dull > 0 else { return sharp * s }
        return dull * PureMath.pow(sharp / dull, s)
    }

    /// The DualSense's voice coils, over Bluetooth (3000 Hz) and USB (48000 Hz): 50 Hz to 300 Hz
    /// (`docs/rendering.md`, "Waveforms for voice coils", says why). 300 Hz keeps ten samples per cycle at 3 kHz.
    public static let voiceCoil = SharpnessFrequencyMap(dull: 50, sharp: 300)
}

/// How a level 0...1 (intensity times controls times envelope) becomes a carrier's amplitude so that what is felt
/// grows in proportion to the level: felt vibration magnitude grows as a power of amplitude whose exponent falls
/// from about 1 around 60 Hz to about 0.6 around 250 Hz, so the amplitude is the level to the inverse of that
/// exponent at the carrier's frequency. Level 1 is full amplitude at every frequency; level 0 is silence.
public enum VibrationAmplitude {
    /// Below this frequency the felt magnitude grows in proportion to amplitude (exponent 1), in Hz.
    public static let proportionalBelow: Double = 60
    /// From this frequency on the exponent stays at its lowest, `lowestExponent`, in Hz.
    public static let compressiveFrom: Double = 250
    /// The exponent of felt magnitude against amplitude at and above `compressiveFrom`.
    public static let lowestExponent: Double = 0.6

    /// The exponent of felt magnitude against amplitude at `frequency`: 1 up to `proportionalBelow`,
    /// `lowestExponent` from `compressiveFrom`, linear in the logarithm of frequency between.
    public static func feltExponent(frequency: Double) -> Double {
        guard frequency > proportionalBelow else { return 1 }
        guard frequency < compressiveFrom else { return lowestExponent }
        let position =
            PureMath.log2(frequency / proportionalBelow) / PureMath.log2(compressiveFrom / proportionalBelow)
        return 1 + (lowestExponent - 1) * position
    }

    /// The amplitude 0...1 of a carrier at `frequency` that is felt at `level` of its full strength.
    public static func amplitude(level: Double, frequency: Double) -> Double {
        guard level > 0 else { return 0 }
        let clamped = Swift.min(level, 1)
        return PureMath.pow(clamped, 1 / feltExponent(frequency: frequency))
    }
}

/// A transient on a voice coil: a burst of whole carrier cycles starting at a rising zero crossing, at full level,
/// then the event's `DecayTime` ramp as on the motors. A voice coil follows its drive within a cycle, so the burst
/// need not cover a spin-up: two cycles are enough to carry a pitch (one cycle is felt as a knock without one) and
/// short enough that a sharp tap stays crisp.
public struct TransientBurst: Sendable, Hashable {
    /// Whole carrier cycles at full level.
    public var cycles: Double

    public init(cycles: Double) {
        self.cycles = Swift.max(cycles, 0)
    }

    /// The burst's flat top in seconds at `frequency`.
    public func length(frequency: Double) -> Double {
        frequency > 0 ? cycles / frequency : 0
    }

    /// Two cycles: 40 ms at 50 Hz (the motors' pulse length at the dull end), 6.7 ms at 300 Hz.
    public static let voiceCoil = TransientBurst(cycles: 2)
}

/// The soft limiter after mixing: identity up to `knee`, then a curve that keeps rising with falling slope and
/// never reaches 1, `knee + (1 - knee) · u / (1 + u)` with `u = (|x| - knee) / (1 - knee)`. Its slope is 1 at
/// the knee (no corner) and it is memoryless: no gain that pumps after a loud moment, the same output however a
/// stream is cut into blocks.
public struct SoftLimiter: Sendable, Hashable {
    /// Where limiting starts, 0..<1.
    public var knee: Double

    public init(knee: Double) {
        self.knee = Swift.min(Swift.max(knee, 0), 0.999)
    }

    /// `sample` limited into -1...1 (exclusive for finite samples; NaN is silence).
    public func callAsFunction(_ sample: Double) -> Double {
        guard !sample.isNaN else { return 0 }
        let magnitude = abs(sample)
        guard magnitude > knee else { return sample }
        let room = 1 - knee
        guard magnitude.isFinite else { return sample > 0 ? 1 : -1 }
        let over = (magnitude - knee) / room
        let limited = knee + room * over / (1 + over)
        return sample < 0 ? -limited : limited
    }

    /// 0.9: one event at full level (amplitude 1) peaks at 0.95; two at full level at 0.99; anything up to 0.9
    /// passes untouched.
    public static let standard = SoftLimiter(knee: 0.9)
}
