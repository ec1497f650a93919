// Motor levels as the engine handles them: two fractions, strong (low-frequency, left) and weak
// (high-frequency, right), 0...1 each; and what the engine does to them between the players and the device.

/// What the two rumble motors should do, 0...1 each.
public struct MotorMix: Sendable, Hashable, CustomStringConvertible {
    /// The low-frequency (heavy, left-handle) motor.
    public var strong: Double
    /// The high-frequency (light, right-handle) motor.
    public var weak: Double

    public init(strong: Double, weak: Double) {
        self.strong = MotorMix.clamped(strong)
        self.weak = MotorMix.clamped(weak)
    }

    public static let off = MotorMix(strong: 0, weak: 0)

    public var isOff: Bool { strong == 0 && weak == 0 }

    public var description: String {
        "strong \(MotorMix.percent(strong))% weak \(MotorMix.percent(weak))%"
    }

    /// Linear interpolation between two mixes, `fraction` 0...1.
    public func interpolated(to other: MotorMix, fraction: Double) -> MotorMix {
        let f = MotorMix.clamped(fraction)
        return MotorMix(strong: strong + (other.strong - strong) * f, weak: weak + (other.weak - weak) * f)
    }

    /// Both motors multiplied by `factor` (an intensity control or a gain), clamped to 0...1.
    public func scaled(by factor: Double) -> MotorMix {
        MotorMix(strong: strong * factor, weak: weak * factor)
    }

    /// The players' mixes combined for one device. ff-memless's rule (saturating sum) until the renderer's
    /// mixing rule is adopted: it is also what the kernel does with effects that overlap on the device,
    /// so a prepared transient triggered on its own slot and the scheduled mix combine the same way.
    public static func mixed(_ parts: [MotorMix]) -> MotorMix {
        parts.reduce(MotorMix.off) { MotorMix(strong: $0.strong + $1.strong, weak: $0.weak + $1.weak) }
    }

    /// Rumble motors take 8-bit levels on most drivers (xpad, hid-playstation): differences below one step
    /// cannot be felt or even sent, so the engine does not spend a system call on them.
    static let resolution = 1.0 / 255.0

    /// Whether `other` differs from this by at least one motor step.
    func differsPerceptibly(from other: MotorMix) -> Bool {
        abs(strong - other.strong) >= MotorMix.resolution / 2 || abs(weak - other.weak) >= MotorMix.resolution / 2
    }

    static func clamped(_ value: Double) -> Double {
        guard value.isFinite else { return 0 }
        return min(max(value, 0), 1)
    }

    private static func percent(_ value: Double) -> Int { Int((value * 100).rounded()) }
}

/// Which motors the engine drives, like GameController's haptic localities. Triggers have no evdev
/// interface, so `leftTrigger`/`rightTrigger` have no counterpart.
public enum HapticLocality: String, Sendable, CaseIterable {
    /// Both motors.
    case all
    /// The left handle: the strong (low-frequency) motor only.
    case leftHandle = "left"
    /// The right handle: the weak (high-frequency) motor only.
    case rightHandle = "right"

    func apply(_ mix: MotorMix) -> MotorMix {
        switch self {
        case .all: mix
        case .leftHandle: MotorMix(strong: mix.strong, weak: 0)
        case .rightHandle: MotorMix(strong: 0, weak: mix.weak)
        }
    }
}
