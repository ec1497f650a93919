/// The arithmetic an envelope is evaluated in: floating point for plans, or integers whose division truncates as
/// the kernel's C does (the virtual pad's ff-memless replay).
public protocol EnvelopeArithmetic: Numeric, Comparable, Sendable, Hashable {
    static func / (lhs: Self, rhs: Self) -> Self
}

extension Double: EnvelopeArithmetic {}
extension Int64: EnvelopeArithmetic {}

/// A force-feedback envelope, the rule of the kernel's `ff_envelope`: over the first `attackLength` of a replay
/// the level ramps linearly from `attackLevel` to the effect's magnitude, and over the last `fadeLength` from the
/// magnitude down to `fadeLevel`; in between it is the magnitude. An attack that overlaps the fade wins.
///
/// The one place this rule is computed: `NativePeriodicEffect` evaluates the effects we ask a device to play with
/// it, in seconds, and the virtual pad's ff-memless model evaluates what the kernel does with them, in integer
/// milliseconds and levels, sampled on the kernel's own timer ticks.
public struct AttackFadeEnvelope<Scalar: EnvelopeArithmetic>: Sendable, Hashable {
    public var attackLength: Scalar
    public var attackLevel: Scalar
    public var fadeLength: Scalar
    public var fadeLevel: Scalar

    public init(attackLength: Scalar, attackLevel: Scalar, fadeLength: Scalar, fadeLevel: Scalar) {
        self.attackLength = attackLength
        self.attackLevel = attackLevel
        self.fadeLength = fadeLength
        self.fadeLevel = fadeLevel
    }

    /// `magnitude` shaped by the envelope, `elapsed` after the replay started and `remaining` before it ends
    /// (`nil` for a replay without an end, which never fades).
    public func level(of magnitude: Scalar, elapsed: Scalar, remaining: Scalar?) -> Scalar {
        if attackLength > 0, elapsed < attackLength {
            return Self.ramp(from: attackLevel, to: magnitude, over: attackLength, at: elapsed)
        }
        if fadeLength > 0, let remaining, remaining > 0, remaining < fadeLength {
            return Self.ramp(from: fadeLevel, to: magnitude, over: fadeLength, at: remaining)
        }
        return magnitude
    }

    /// `from` moving linearly to `to` over `length`, at `position`: the difference is multiplied before it is
    /// divided, which is the kernel's order (and its truncation, with integers).
    private static func ramp(from: Scalar, to: Scalar, over length: Scalar, at position: Scalar) -> Scalar {
        from + (to - from) * position / length
    }
}
