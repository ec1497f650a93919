/// One haptic or audio event of a pattern: the AHAP `Event` dictionary, shaped like Core Haptics' `CHHapticEvent`.
///
/// Audio events (`AudioContinuous`, `AudioCustom`) are kept in the model so that a pattern round-trips unchanged;
/// a haptics-only renderer skips them (`isHaptic == false`).
public struct HapticEvent: Sendable, Hashable {
    /// The AHAP `EventType` values.
    public enum EventType: String, Sendable, Hashable, CaseIterable {
        /// A short impulse at one point in time (`HapticTransient`); its duration is fixed by the system.
        case hapticTransient = "HapticTransient"
        /// A haptic that lasts for `duration` seconds (`HapticContinuous`).
        case hapticContinuous = "HapticContinuous"
        /// A system-generated continuous audio tone (`AudioContinuous`).
        case audioContinuous = "AudioContinuous"
        /// An audio file named by `waveformPath`, or a resource registered with the engine (`AudioCustom`).
        case audioCustom = "AudioCustom"

        /// Whether events of this type drive the haptic actuator (the motors here).
        public var isHaptic: Bool { self == .hapticTransient || self == .hapticContinuous }
        /// Whether events of this type have a duration of their own (`EventDuration` is meaningful).
        public var isContinuous: Bool { self == .hapticContinuous || self == .audioContinuous }
    }

    /// Event parameter identifiers (AHAP `ParameterID` inside `EventParameters`), as in `CHHapticEvent.ParameterID`.
    ///
    /// Ranges and defaults are those documented in Apple's `CHHapticParameter.h` and the Core Haptics reference; see
    /// `docs/ahap.md` for the sources and for the two defaults Apple does not state (intensity, sharpness).
    /// An identifier this module does not know survives as `.unknown(name)` and is written back unchanged.
    public enum ParameterID: Sendable, Hashable, RawRepresentable, CustomStringConvertible, AHAPIdentifier {
        /// `HapticIntensity`: 0 (maximum attenuation) ... 1 (no attenuation). Default 1.
        case hapticIntensity
        /// `HapticSharpness`: 0 (least sharp) ... 1 (most sharp). Default 0.5.
        case hapticSharpness
        /// `AttackTime`: 0 ... 1, default 0 (shortest attack); higher values lengthen the attack exponentially.
        case attackTime
        /// `DecayTime`: 0 ... 1, default 0 (shortest decay); takes effect only when `Sustained` is 0.
        case decayTime
        /// `ReleaseTime`: 0 ... 1, default 0 (shortest release).
        case releaseTime
        /// `Sustained`: a boolean as 1.0 / 0.0. Default 1 (sustain for the whole duration, attack/release envelope).
        case sustained
        /// `AudioVolume`: 0 (maximum attenuation) ... 1 (no attenuation). Default 1.
        case audioVolume
        /// `AudioPitch`: -1 (lowest) ... 1 (highest). Default 0.
        case audioPitch
        /// `AudioPan`: -1 (full left) ... 1 (full right). Default 0 (centre).
        case audioPan
        /// `AudioBrightness`: 0 (most high-frequency reduction) ... 1 (none). Default 1.
        case audioBrightness
        /// A `ParameterID` string this module does not know, kept verbatim.
        case unknown(String)

        /// Every identifier this module knows, in AHAP documentation order.
        public static let known: [ParameterID] = [
            .hapticIntensity, .hapticSharpness, .attackTime, .decayTime, .releaseTime, .sustained,
            .audioVolume, .audioPitch, .audioPan, .audioBrightness,
        ]

        public init(rawValue: String) {
            switch rawValue {
            case "HapticIntensity": self = .hapticIntensity
            case "HapticSharpness": self = .hapticSharpness
            case "AttackTime": self = .attackTime
            case "DecayTime": self = .decayTime
            case "ReleaseTime": self = .releaseTime
            case "Sustained": self = .sustained
            case "AudioVolume": self = .audioVolume
            case "AudioPitch": self = .audioPitch
            case "AudioPan": self = .audioPan
            case "AudioBrightness": self = .audioBrightness
            default: self = .unknown(rawValue)
            }
        }

        /// The AHAP spelling of the identifier.
        public var rawValue: String {
            switch self {
            case .hapticIntensity: "HapticIntensity"
            case .hapticSharpness: "HapticSharpness"
            case .attackTime: "AttackTime"
            case .decayTime: "DecayTime"
            case .releaseTime: "ReleaseTime"
            case .sustained: "Sustained"
            case .audioVolume: "AudioVolume"
            case .audioPitch: "AudioPitch"
            case .audioPan: "AudioPan"
            case .audioBrightness: "AudioBrightness"
            case .unknown(let name): name
            }
        }

        public var description: String { rawValue }

        /// The identifier this one is: `.unknown` of a name this module knows is that identifier, as it reads back
        /// from AHAP text (`AHAPIdentifier`). Equality, hashing and every property below go by it, so a value built
        /// in code as `.unknown("HapticIntensity")` is the known identifier everywhere.
        package var canonical: Self {
            guard case .unknown(let name) = self else { return self }
            return Self(rawValue: name)
        }

        /// The position of a known identifier in `known`; nil for an unknown one.
        package var knownIndex: Int? {
            switch self {
            case .hapticIntensity: 0
            case .hapticSharpness: 1
            case .attackTime: 2
            case .decayTime: 3
            case .releaseTime: 4
            case .sustained: 5
            case .audioVolume: 6
            case .audioPitch: 7
            case .audioPan: 8
            case .audioBrightness: 9
            case .unknown: nil
            }
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { AHAPIdentifiers.equal(lhs, rhs) }

        public func hash(into hasher: inout Hasher) { AHAPIdentifiers.hash(self, into: &hasher) }

        /// The documented value range; Core Haptics clamps values outside it. `nil` for unknown identifiers.
        public var range: ClosedRange<Double>? {
            switch canonical {
            case .hapticIntensity, .hapticSharpness, .attackTime, .decayTime, .releaseTime, .sustained,
                .audioVolume, .audioBrightness:
                0...1
            case .audioPitch, .audioPan:
                -1...1
            case .unknown:
                nil
            }
        }

        /// The value an event has when it does not list this parameter. `nil` for unknown identifiers.
        public var defaultValue: Double? {
            switch canonical {
            case .hapticIntensity, .sustained, .audioVolume, .audioBrightness: 1
            case .hapticSharpness: 0.5
            case .attackTime, .decayTime, .releaseTime, .audioPitch, .audioPan: 0
            case .unknown: nil
            }
        }

        /// Whether the parameter shapes haptic events (as opposed to audio events).
        public var isHaptic: Bool {
            switch canonical {
            case .hapticIntensity, .hapticSharpness, .attackTime, .decayTime, .releaseTime, .sustained: true
            case .audioVolume, .audioPitch, .audioPan, .audioBrightness, .unknown: false
            }
        }
    }

    /// The event's type (`EventType`).
    public var type: EventType
    /// When the event starts, in seconds from the start of the pattern (`Time`; `EventTime` is read as an alias).
    public var relativeTime: AHAPTime
    /// The event's length in seconds (`EventDuration`), `nil` when the file gives none. A continuous event lasts
    /// that long; a transient's tap keeps the length the system gives it, and its `duration` is its logical
    /// length, which pads its pattern (`logicalDuration`). See `effectiveDuration` for the value a renderer should
    /// use.
    public var duration: AHAPTime?
    /// The event parameters in file order (`EventParameters`). Duplicates are kept; the last one wins in the
    /// typed accessors, and the validator warns about them.
    public var parameters: [HapticEventParameter]
    /// The audio file of an `AudioCustom` event (`EventWaveformPath`), relative to the pattern's bundle.
    public var waveformPath: String?
    /// The audio resource an `AudioCustom` event plays, registered with the engine that plays it
    /// (`HapticEngine.registerAudioResource`); `EventWaveformPath` as a number. When set, `waveformPath` is not
    /// used.
    public var audioResourceID: AudioResourceID?
    /// `EventWaveformUseVolumeEnvelope`: whether an `AudioCustom` event applies the attack/release envelope.
    public var waveformUsesVolumeEnvelope: Bool?
    /// `EventWaveformLoopEnabled`: whether an `AudioCustom` event loops its file over its duration.
    public var waveformLoopEnabled: Bool?

    /// An event with explicit fields, like `CHHapticEvent(eventType:parameters:relativeTime:duration:)`.
    public init(
        type: EventType, parameters: [HapticEventParameter] = [], relativeTime: AHAPTime,
        duration: AHAPTime? = nil
    ) {
        self.type = type
        self.parameters = parameters
        self.relativeTime = relativeTime
        self.duration = duration
    }

    /// An `AudioCustom` event playing the audio file at `waveformPath`, as an AHAP file names it
    /// (`EventWaveformPath`). Core Haptics plays a file in code through a registered resource: see
    /// `init(audioResourceID:parameters:relativeTime:duration:usesVolumeEnvelope:loopEnabled:)`.
    public init(
        audioWaveformPath waveformPath: String, parameters: [HapticEventParameter] = [],
        relativeTime: AHAPTime, duration: AHAPTime? = nil, usesVolumeEnvelope: Bool? = nil,
        loopEnabled: Bool? = nil
    ) {
        self.init(type: .audioCustom, parameters: parameters, relativeTime: relativeTime, duration: duration)
        self.waveformPath = waveformPath
        self.waveformUsesVolumeEnvelope = usesVolumeEnvelope
        self.waveformLoopEnabled = loopEnabled
    }

    /// An `AudioCustom` event playing the audio resource `audioResourceID` registered with the engine, like
    /// `CHHapticEvent(audioResourceID:parameters:relativeTime:duration:)`. Without `EventDuration` it lasts its
    /// file; whether it follows the volume envelope and loops are the resource's options unless given here.
    public init(
        audioResourceID: AudioResourceID, parameters: [HapticEventParameter] = [], relativeTime: AHAPTime,
        duration: AHAPTime? = nil, usesVolumeEnvelope: Bool? = nil, loopEnabled: Bool? = nil
    ) {
        self.init(type: .audioCustom, parameters: parameters, relativeTime: relativeTime, duration: duration)
        self.audioResourceID = audioResourceID
        self.waveformUsesVolumeEnvelope = usesVolumeEnvelope
        self.waveformLoopEnabled = loopEnabled
    }

    /// What an `AudioCustom` event plays: its registered resource, else its file; nil for other events.
    public var audioWaveform: AudioWaveform? {
        guard type == .audioCustom else { return nil }
        if let audioResourceID { return .resource(audioResourceID) }
        return waveformPath.map { .path($0) }
    }

    /// Whether this event drives the motors; audio events do not.
    public var isHaptic: Bool { type.isHaptic }

    /// The raw value of the last parameter with this identifier, unclamped; `nil` when the event does not list it.
    public func value(of id: ParameterID) -> Double? {
        parameters.last(where: { $0.parameterID == id })?.value
    }

    /// The value of a parameter as Core Haptics would play it: the listed value clamped to the documented range,
    /// or the documented default when the event does not list it. Unknown identifiers return their raw value or 0.
    public func effectiveValue(of id: ParameterID) -> Double {
        guard let range = id.range else { return value(of: id) ?? 0 }
        guard let listed = value(of: id) else { return id.defaultValue ?? range.lowerBound }
        return Swift.min(Swift.max(listed, range.lowerBound), range.upperBound)
    }

    /// `HapticIntensity`, clamped to 0...1, default 1.
    public var intensity: Double { effectiveValue(of: .hapticIntensity) }
    /// `HapticSharpness`, clamped to 0...1, default 0.5.
    public var sharpness: Double { effectiveValue(of: .hapticSharpness) }
    /// `AttackTime`, clamped to 0...1, default 0. A unitless adjuster, not seconds: Core Haptics maps it
    /// exponentially onto an attack length it does not document.
    public var attackTime: Double { effectiveValue(of: .attackTime) }
    /// `DecayTime`, clamped to 0...1, default 0 (unitless adjuster, as `attackTime`).
    public var decayTime: Double { effectiveValue(of: .decayTime) }
    /// `ReleaseTime`, clamped to 0...1, default 0 (unitless adjuster, as `attackTime`).
    public var releaseTime: Double { effectiveValue(of: .releaseTime) }
    /// `Sustained`: true unless the event lists it with a value below 0.5 (Core Haptics documents 1.0 / 0.0).
    public var isSustained: Bool { effectiveValue(of: .sustained) >= Self.sustainedThreshold }

    /// `Sustained` is documented as 1.0 or 0.0; values in between are read by rounding to the nearer one.
    private static let sustainedThreshold = 0.5

    /// The duration a renderer should use: `duration` (0 when absent), capped at
    /// `HapticEvent.maximumContinuousDuration`, for continuous events and `AudioCustom` events; 0 for transients,
    /// whose length the renderer chooses. An `AudioCustom` event without `EventDuration` lasts as long as its sound
    /// file, which the event does not know: 0 here, and the file's length where it is read (`AudioSchedule`).
    public var effectiveDuration: AHAPTime {
        type.isContinuous || type == .audioCustom ? cappedDuration : 0
    }

    /// How long the event makes its pattern last from its `relativeTime`: `effectiveDuration`, and for a transient
    /// its `duration` (0 when absent, capped as `effectiveDuration` is), the logical length Core Haptics pads the
    /// pattern to ("used to determine pattern end and loop points"), however short the tap itself is.
    public var logicalDuration: AHAPTime {
        type == .hapticTransient ? cappedDuration : effectiveDuration
    }

    /// `duration`, 0 when absent or negative, at most `maximumContinuousDuration`.
    private var cappedDuration: AHAPTime {
        Swift.min(Swift.max(duration ?? 0, 0), HapticEvent.maximumContinuousDuration)
    }

    /// The longest continuous event Core Haptics plays, in seconds; longer ones are cut (the validator warns).
    public static let maximumContinuousDuration: AHAPTime = 30
}

/// A static parameter of one event (`{ "ParameterID": ..., "ParameterValue": ... }` inside `EventParameters`),
/// like `CHHapticEventParameter`.
public struct HapticEventParameter: Sendable, Hashable {
    /// Which property of the event this sets.
    public var parameterID: HapticEvent.ParameterID
    /// The value as written in the file, not clamped (the validator warns when it is outside the range).
    public var value: Double

    public init(parameterID: HapticEvent.ParameterID, value: Double) {
        self.parameterID = parameterID
        self.value = value
    }
}
