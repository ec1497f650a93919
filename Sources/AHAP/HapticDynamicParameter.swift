/// A pattern-wide modulation applied from a point in time onwards (AHAP `Parameter`), like
/// `CHHapticDynamicParameter`. It changes the value abruptly; `HapticParameterCurve` changes it gradually.
///
/// How a value combines with the event parameter (documented in `CHHapticParameter.h` and the
/// `CHHapticDynamicParameter` reference): intensity and volume controls multiply the event's value; every other
/// control is added to it; the result is clamped to the event parameter's range.
public struct HapticDynamicParameter: Sendable, Hashable {
    /// Dynamic parameter identifiers (AHAP `ParameterID` of a `Parameter` or `ParameterCurve`), as in
    /// `CHHapticDynamicParameter.ID`. An identifier this module does not know survives as `.unknown(name)`.
    public enum ID: Sendable, Hashable, RawRepresentable, CustomStringConvertible, AHAPIdentifier {
        /// `HapticIntensityControl`: 0 ... 1, multiplies event intensity. Default 1 (no effect).
        case hapticIntensityControl
        /// `HapticSharpnessControl`: -1 ... 1, added to event sharpness. Default 0.
        case hapticSharpnessControl
        /// `HapticAttackTimeControl`: -1 ... 1, added to the attack adjuster. Default 0.
        case hapticAttackTimeControl
        /// `HapticDecayTimeControl`: -1 ... 1, added to the decay adjuster. Default 0.
        case hapticDecayTimeControl
        /// `HapticReleaseTimeControl`: -1 ... 1, added to the release adjuster. Default 0.
        case hapticReleaseTimeControl
        /// `AudioVolumeControl`: 0 ... 1, multiplies event volume. Default 1.
        case audioVolumeControl
        /// `AudioPanControl`: -1 ... 1. Default 0.
        case audioPanControl
        /// `AudioBrightnessControl`: -1 ... 1. Default 0.
        case audioBrightnessControl
        /// `AudioPitchControl`: -1 ... 1. Default 0.
        case audioPitchControl
        /// `AudioAttackTimeControl`: -1 ... 1. Default 0.
        case audioAttackTimeControl
        /// `AudioDecayTimeControl`: -1 ... 1. Default 0.
        case audioDecayTimeControl
        /// `AudioReleaseTimeControl`: -1 ... 1. Default 0.
        case audioReleaseTimeControl
        /// A `ParameterID` string this module does not know, kept verbatim.
        case unknown(String)

        /// Every identifier this module knows, in Core Haptics header order.
        public static let known: [ID] = [
            .hapticIntensityControl, .hapticSharpnessControl, .hapticAttackTimeControl, .hapticDecayTimeControl,
            .hapticReleaseTimeControl, .audioVolumeControl, .audioPanControl, .audioBrightnessControl,
            .audioPitchControl, .audioAttackTimeControl, .audioDecayTimeControl, .audioReleaseTimeControl,
        ]

        public init(rawValue: String) {
            switch rawValue {
            case "HapticIntensityControl": self = .hapticIntensityControl
            case "HapticSharpnessControl": self = .hapticSharpnessControl
            case "HapticAttackTimeControl": self = .hapticAttackTimeControl
            case "HapticDecayTimeControl": self = .hapticDecayTimeControl
            case "HapticReleaseTimeControl": self = .hapticReleaseTimeControl
            case "AudioVolumeControl": self = .audioVolumeControl
            case "AudioPanControl": self = .audioPanControl
            case "AudioBrightnessControl": self = .audioBrightnessControl
            case "AudioPitchControl": self = .audioPitchControl
            case "AudioAttackTimeControl": self = .audioAttackTimeControl
            case "AudioDecayTimeControl": self = .audioDecayTimeControl
            case "AudioReleaseTimeControl": self = .audioReleaseTimeControl
            default: self = .unknown(rawValue)
            }
        }

        /// The AHAP spelling of the identifier.
        public var rawValue: String {
            switch self {
            case .hapticIntensityControl: "HapticIntensityControl"
            case .hapticSharpnessControl: "HapticSharpnessControl"
            case .hapticAttackTimeControl: "HapticAttackTimeControl"
            case .hapticDecayTimeControl: "HapticDecayTimeControl"
            case .hapticReleaseTimeControl: "HapticReleaseTimeControl"
            case .audioVolumeControl: "AudioVolumeControl"
            case .audioPanControl: "AudioPanControl"
            case .audioBrightnessControl: "AudioBrightnessControl"
            case .audioPitchControl: "AudioPitchControl"
            case .audioAttackTimeControl: "AudioAttackTimeControl"
            case .audioDecayTimeControl: "AudioDecayTimeControl"
            case .audioReleaseTimeControl: "AudioReleaseTimeControl"
            case .unknown(let name): name
            }
        }

        public var description: String { rawValue }

        /// The identifier this one is: `.unknown` of a name this module knows is that identifier, as it reads back
        /// from AHAP text (`AHAPIdentifier`). Equality, hashing and every property below go by it, so a value built
        /// in code as `.unknown("HapticIntensityControl")` is the known identifier everywhere.
        package var canonical: Self {
            guard case .unknown(let name) = self else { return self }
            return Self(rawValue: name)
        }

        /// The position of a known identifier in `known`; nil for an unknown one.
        package var knownIndex: Int? {
            switch self {
            case .hapticIntensityControl: 0
            case .hapticSharpnessControl: 1
            case .hapticAttackTimeControl: 2
            case .hapticDecayTimeControl: 3
            case .hapticReleaseTimeControl: 4
            case .audioVolumeControl: 5
            case .audioPanControl: 6
            case .audioBrightnessControl: 7
            case .audioPitchControl: 8
            case .audioAttackTimeControl: 9
            case .audioDecayTimeControl: 10
            case .audioReleaseTimeControl: 11
            case .unknown: nil
            }
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { AHAPIdentifiers.equal(lhs, rhs) }

        public func hash(into hasher: inout Hasher) { AHAPIdentifiers.hash(self, into: &hasher) }

        /// The documented value range; Core Haptics clamps values outside it. `nil` for unknown identifiers.
        public var range: ClosedRange<Double>? {
            switch canonical {
            case .hapticIntensityControl, .audioVolumeControl: 0...1
            case .unknown: nil
            default: -1...1
            }
        }

        /// The value that leaves events unchanged. `nil` for unknown identifiers.
        public var defaultValue: Double? {
            switch canonical {
            case .hapticIntensityControl, .audioVolumeControl: 1
            case .unknown: nil
            default: 0
            }
        }

        /// Whether the control multiplies the event parameter (intensity, volume) rather than adding to it.
        public var isMultiplicative: Bool { self == .hapticIntensityControl || self == .audioVolumeControl }

        /// Whether the control affects haptic events (as opposed to audio events).
        public var isHaptic: Bool {
            switch canonical {
            case .hapticIntensityControl, .hapticSharpnessControl, .hapticAttackTimeControl,
                .hapticDecayTimeControl, .hapticReleaseTimeControl:
                true
            default: false
            }
        }

        /// Applies a control value to an event parameter's value as Core Haptics documents it: intensity and
        /// volume controls multiply, all others add; the control is clamped to its own range first and the result
        /// to the event parameter's range. Unknown identifiers leave the value unchanged.
        public func apply(_ controlValue: Double, to eventValue: Double) -> Double {
            guard let controlRange = range, let target = controlledEventParameter, let targetRange = target.range
            else { return eventValue }
            let control = Swift.min(Swift.max(controlValue, controlRange.lowerBound), controlRange.upperBound)
            let combined = isMultiplicative ? eventValue * control : eventValue + control
            return Swift.min(Swift.max(combined, targetRange.lowerBound), targetRange.upperBound)
        }

        /// The event parameter this control modulates, `nil` for unknown identifiers.
        public var controlledEventParameter: HapticEvent.ParameterID? {
            switch canonical {
            case .hapticIntensityControl: .hapticIntensity
            case .hapticSharpnessControl: .hapticSharpness
            case .hapticAttackTimeControl, .audioAttackTimeControl: .attackTime
            case .hapticDecayTimeControl, .audioDecayTimeControl: .decayTime
            case .hapticReleaseTimeControl, .audioReleaseTimeControl: .releaseTime
            case .audioVolumeControl: .audioVolume
            case .audioPanControl: .audioPan
            case .audioBrightnessControl: .audioBrightness
            case .audioPitchControl: .audioPitch
            case .unknown: nil
            }
        }
    }

    /// Which control this sets.
    public var parameterID: ID
    /// The value as written in the file, not clamped (the validator warns when it is outside the range).
    public var value: Double
    /// When the value takes effect, in seconds from the start of the pattern (`Time`; `ParameterTime` is read as
    /// an alias).
    public var relativeTime: AHAPTime

    public init(parameterID: ID, value: Double, relativeTime: AHAPTime) {
        self.parameterID = parameterID
        self.value = value
        self.relativeTime = relativeTime
    }

    /// `value` clamped to the documented range (unknown identifiers: unchanged).
    public var clampedValue: Double {
        guard let range = parameterID.range else { return value }
        return Swift.min(Swift.max(value, range.lowerBound), range.upperBound)
    }
}

/// A gradual change of a dynamic parameter (AHAP `ParameterCurve`), like `CHHapticParameterCurve`: the value is
/// interpolated linearly between control points.
public struct HapticParameterCurve: Sendable, Hashable {
    /// One point of the curve (`{ "Time": ..., "ParameterValue": ... }` inside `ParameterCurveControlPoints`),
    /// like `CHHapticParameterCurve.ControlPoint`.
    public struct ControlPoint: Sendable, Hashable {
        /// Seconds from the start of the curve (not of the pattern).
        public var relativeTime: AHAPTime
        /// The parameter's value at that time, as written (not clamped).
        public var value: Double

        public init(relativeTime: AHAPTime, value: Double) {
            self.relativeTime = relativeTime
            self.value = value
        }
    }

    /// Which control the curve drives.
    public var parameterID: HapticDynamicParameter.ID
    /// When the curve starts, in seconds from the start of the pattern (`Time`; `ParameterTime` is an alias).
    public var relativeTime: AHAPTime
    /// The control points in file order (`ParameterCurveControlPoints`). Core Haptics is believed to take at
    /// most `HapticParameterCurve.maximumControlPointCount` per curve; the validator warns beyond that and when
    /// the points are not sorted by time, but the model keeps them as written.
    public var controlPoints: [ControlPoint]

    public init(parameterID: HapticDynamicParameter.ID, controlPoints: [ControlPoint], relativeTime: AHAPTime) {
        self.parameterID = parameterID
        self.controlPoints = controlPoints
        self.relativeTime = relativeTime
    }

    /// The most control points per curve Core Haptics' players are believed to take: AHAP exporters split
    /// longer curves into chunks of 16.
    public static let maximumControlPointCount = 16

    /// The pattern time of the last control point (`relativeTime` plus the latest point time).
    public var endTime: AHAPTime {
        relativeTime + (controlPoints.map(\.relativeTime).max() ?? 0)
    }

    /// The curve's value at `patternTime` (seconds from the pattern start), interpolated linearly between control
    /// points sorted by time, held flat before the first and after the last point; `nil` when the curve has no
    /// points. Values are not clamped.
    public func value(atPatternTime patternTime: AHAPTime) -> Double? {
        let points = controlPoints.sorted { $0.relativeTime < $1.relativeTime }
        guard let first = points.first, let last = points.last else { return nil }
        let t = patternTime - relativeTime
        if t <= first.relativeTime { return first.value }
        if t >= last.relativeTime { return last.value }
        for (earlier, later) in zip(points, points.dropFirst()) where t <= later.relativeTime {
            let span = later.relativeTime - earlier.relativeTime
            guard span > 0 else { return later.value }
            return earlier.value + (later.value - earlier.value) * (t - earlier.relativeTime) / span
        }
        return last.value
    }
}
