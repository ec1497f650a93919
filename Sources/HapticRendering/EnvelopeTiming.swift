/// How the unitless 0...1 adjusters of AHAP (`AttackTime`, `DecayTime`, `ReleaseTime`) become seconds, and how
/// sharpness splits a level between the two motors.
///
/// Core Haptics documents the adjusters only as "0 is shortest, higher values lengthen it exponentially". We
/// take 0 -> 0 s and 1 -> `longest`, growing exponentially in between (doubling every 1/`doublings` of the
/// range), so small values stay short and the upper half of the range reaches long, audible-like swells.
public enum EnvelopeTiming {
    /// The length at adjuster 1, in seconds.
    public static let longest: Double = 1.0
    /// How many times the length doubles across the adjuster range (2^8 = 256: adjuster 0.5 gives ~59 ms).
    public static let doublings: Double = 8

    /// Seconds for an adjuster value (clamped to 0...1; NaN is 0).
    public static func seconds(forAdjuster adjuster: Double) -> Double {
        let value = PureMath.unitClamped(adjuster)
        let full = PureMath.exp2(doublings) - 1
        return longest * (PureMath.exp2(doublings * value) - 1) / full
    }

    /// The strong (dull) and weak (sharp) shares of a level for a sharpness in 0...1: the dominant motor always
    /// gets the whole level, the other fades out towards the ends of the range. At 0.5 both run at the level,
    /// so intensity alone sets how strong the output is and sharpness only sets its colour.
    public static func motorShares(sharpness: Double) -> (strong: Double, weak: Double) {
        let s = PureMath.unitClamped(sharpness)
        return (Swift.min(1, 2 * (1 - s)), Swift.min(1, 2 * s))
    }
}
