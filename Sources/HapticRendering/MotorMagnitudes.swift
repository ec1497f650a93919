/// The strong and weak motor magnitudes at one instant, each 0...1.
public struct MotorMagnitudes: Sendable, Hashable, CustomStringConvertible {
    /// The low-frequency (dull, left) motor.
    public var strong: Double
    /// The high-frequency (sharp, right) motor.
    public var weak: Double

    public init(strong: Double, weak: Double) {
        self.strong = strong
        self.weak = weak
    }

    public static let off = MotorMagnitudes(strong: 0, weak: 0)

    /// The louder motor: the single level the output is felt at (what fidelity compares with intensity).
    public var peak: Double { Swift.max(strong, weak) }

    public var isOff: Bool { strong == 0 && weak == 0 }

    public var description: String { "strong \(strong) weak \(weak)" }

    /// Several parts at one instant: summed per motor and clamped to 1. The rule for overlapping events
    /// (`MotorTimeline.mixed`), for several players on one device, and for a held level and pulses running
    /// together on a device (`DeviceOutput`), as ff-memless combines started effects.
    public static func summed(_ parts: [MotorMagnitudes]) -> MotorMagnitudes {
        parts.reduce(MotorMagnitudes.off, +).clamped()
    }

    /// Per motor, unclamped: the running sum `summed` clamps once at the end (a caller summing without an
    /// array of parts does the same: from `off`, in order, then `clamped()`).
    public static func + (lhs: MotorMagnitudes, rhs: MotorMagnitudes) -> MotorMagnitudes {
        MotorMagnitudes(strong: lhs.strong + rhs.strong, weak: lhs.weak + rhs.weak)
    }

    /// Each motor within 0...1; NaN counts as off.
    public func clamped() -> MotorMagnitudes {
        MotorMagnitudes(strong: PureMath.unitClamped(strong), weak: PureMath.unitClamped(weak))
    }
}
