// Safe Swift mirrors of the kernel's force-feedback vocabulary (linux/input.h), with no C type in sight.

/// A force-feedback capability bit (`FF_*` in linux/input.h): effect types, periodic waveforms and
/// device properties share one bit space in the kernel.
public enum ForceFeedbackFeature: UInt16, CaseIterable, Sendable, Codable, Comparable {
    case rumble = 0x50, periodic = 0x51, constant = 0x52, spring = 0x53, friction = 0x54
    case damper = 0x55, inertia = 0x56, ramp = 0x57
    case square = 0x58, triangle = 0x59, sine = 0x5a, sawUp = 0x5b, sawDown = 0x5c, custom = 0x5d
    case gain = 0x60, autocenter = 0x61

    /// The kernel's highest FF code (`FF_MAX`); bitmaps are this many bits plus one.
    public static let maxCode: UInt16 = 0x7f

    /// The kernel's name lower-cased without `FF_`: `rumble`, `saw_up`...
    public var name: String {
        switch self {
        case .rumble: "rumble"
        case .periodic: "periodic"
        case .constant: "constant"
        case .spring: "spring"
        case .friction: "friction"
        case .damper: "damper"
        case .inertia: "inertia"
        case .ramp: "ramp"
        case .square: "square"
        case .triangle: "triangle"
        case .sine: "sine"
        case .sawUp: "saw_up"
        case .sawDown: "saw_down"
        case .custom: "custom"
        case .gain: "gain"
        case .autocenter: "autocenter"
        }
    }

    /// Parses `name`, also accepting `saw-up` style and the `FF_` prefix in any case.
    public init?(name: String) {
        var key = String(name.lowercased().map { $0 == "-" ? "_" : $0 })
        if key.hasPrefix("ff_") { key.removeFirst(3) }
        guard let match = Self.allCases.first(where: { $0.name == key }) else { return nil }
        self = match
    }

    public var isEffectType: Bool { (0x50...0x57).contains(rawValue) }
    public var isWaveform: Bool { (0x58...0x5d).contains(rawValue) }
    public var isProperty: Bool { rawValue >= 0x60 }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// `struct ff_envelope`: levels 0...0x7fff, times in milliseconds.
public struct ForceFeedbackEnvelope: Equatable, Hashable, Sendable, Codable {
    public var attackLength: UInt16
    public var attackLevel: UInt16
    public var fadeLength: UInt16
    public var fadeLevel: UInt16

    public init(attackLength: UInt16 = 0, attackLevel: UInt16 = 0, fadeLength: UInt16 = 0, fadeLevel: UInt16 = 0) {
        self.attackLength = attackLength
        self.attackLevel = attackLevel
        self.fadeLength = fadeLength
        self.fadeLevel = fadeLevel
    }
}

/// One axis of a condition effect (`struct ff_condition_effect`).
public struct ForceFeedbackCondition: Equatable, Hashable, Sendable, Codable {
    public var rightSaturation: UInt16
    public var leftSaturation: UInt16
    public var rightCoefficient: Int16
    public var leftCoefficient: Int16
    public var deadband: UInt16
    public var center: Int16

    public init(
        rightSaturation: UInt16 = 0, leftSaturation: UInt16 = 0, rightCoefficient: Int16 = 0,
        leftCoefficient: Int16 = 0, deadband: UInt16 = 0, center: Int16 = 0
    ) {
        self.rightSaturation = rightSaturation
        self.leftSaturation = leftSaturation
        self.rightCoefficient = rightCoefficient
        self.leftCoefficient = leftCoefficient
        self.deadband = deadband
        self.center = center
    }
}

/// The type-specific part of an effect (the union in `struct ff_effect`).
public enum ForceFeedbackEffectKind: Equatable, Hashable, Sendable {
    /// `FF_RUMBLE`: magnitudes 0...0xffff for the strong (low-frequency) and weak (high-frequency) motor.
    case rumble(strong: UInt16, weak: UInt16)
    /// `FF_PERIODIC`: period in ms, magnitude and offset signed, phase in ms.
    case periodic(
        waveform: ForceFeedbackFeature, period: UInt16, magnitude: Int16, offset: Int16, phase: UInt16,
        envelope: ForceFeedbackEnvelope)
    /// `FF_CONSTANT`.
    case constant(level: Int16, envelope: ForceFeedbackEnvelope)
    /// `FF_RAMP`.
    case ramp(startLevel: Int16, endLevel: Int16, envelope: ForceFeedbackEnvelope)
    /// `FF_SPRING`, `FF_FRICTION`, `FF_DAMPER`, `FF_INERTIA`: one condition per axis (x, y).
    case condition(type: ForceFeedbackFeature, axes: [ForceFeedbackCondition])

    /// The `FF_*` effect type of this kind.
    public var type: ForceFeedbackFeature {
        switch self {
        case .rumble: .rumble
        case .periodic: .periodic
        case .constant: .constant
        case .ramp: .ramp
        case .condition(let type, _): type
        }
    }
}

/// `struct ff_effect`: what `EVIOCSFF` uploads.
public struct ForceFeedbackEffect: Equatable, Hashable, Sendable {
    /// Slot id; -1 asks the kernel for a new slot on upload.
    public var id: Int16
    public var kind: ForceFeedbackEffectKind
    /// 0x0000 down, 0x4000 left, 0x8000 up, 0xc000 right.
    public var direction: UInt16
    public var triggerButton: UInt16
    public var triggerInterval: UInt16
    /// Replay length in ms; 0 means the effect plays until stopped.
    public var replayLength: UInt16
    /// Delay before the effect starts, in ms.
    public var replayDelay: UInt16

    public init(
        id: Int16 = -1, kind: ForceFeedbackEffectKind, direction: UInt16 = 0, triggerButton: UInt16 = 0,
        triggerInterval: UInt16 = 0, replayLength: UInt16 = 0, replayDelay: UInt16 = 0
    ) {
        self.id = id
        self.kind = kind
        self.direction = direction
        self.triggerButton = triggerButton
        self.triggerInterval = triggerInterval
        self.replayLength = replayLength
        self.replayDelay = replayDelay
    }

    /// A rumble effect with magnitudes given as 0...1 fractions.
    public static func rumble(strong: Double, weak: Double, lengthMilliseconds: UInt16, id: Int16 = -1) -> Self {
        ForceFeedbackEffect(
            id: id,
            kind: .rumble(strong: magnitude(strong), weak: magnitude(weak)),
            replayLength: lengthMilliseconds)
    }

    /// Converts a 0...1 fraction to the kernel's 0...0xffff rumble magnitude, clamping and rounding, so that a
    /// level that is an exact step of a driver's scale (`k / steps`) lands, after the driver's own division
    /// (`magnitude * steps / 0xffff`), on that step. The one conversion from levels to kernel units.
    public static func magnitude(_ fraction: Double) -> UInt16 {
        guard fraction.isFinite else { return 0 }
        let clamped = min(max(fraction, 0), 1)
        return UInt16((clamped * Double(UInt16.max)).rounded())
    }

    /// The 0...1 fraction of a rumble magnitude: the exact inverse of `magnitude(_:)` on its results.
    public static func fraction(_ magnitude: UInt16) -> Double { Double(magnitude) / Double(UInt16.max) }
}
