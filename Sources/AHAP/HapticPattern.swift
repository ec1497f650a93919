/// A complete AHAP pattern, shaped like Core Haptics' `CHHapticPattern`: events plus dynamic parameters and
/// parameter curves, with the file's `Version` and `Metadata`.
///
/// The three kinds of `Pattern` entries are kept in three arrays, each in file order. Their interleaving in the
/// file carries no meaning (every entry has its own time), so encoding writes events, then parameters, then
/// curves, and parse -> encode -> parse yields an equal value.
public struct HapticPattern: Sendable, Hashable {
    /// The AHAP `Version`, `nil` when the file has none (the validator warns). Core Haptics writes 1.0.
    public var version: Double?
    /// The AHAP `Metadata` dictionary, `nil` when the file has none.
    public var metadata: PatternMetadata?
    /// The `Event` entries of `Pattern`, in file order (not sorted by time).
    public var events: [HapticEvent]
    /// The `Parameter` entries of `Pattern`, in file order.
    public var dynamicParameters: [HapticDynamicParameter]
    /// The `ParameterCurve` entries of `Pattern`, in file order.
    public var parameterCurves: [HapticParameterCurve]

    /// The AHAP version this module writes and was built against.
    public static let currentVersion: Double = 1.0

    /// The `Version` values Core Haptics plays: its reader refuses any other number (-4809), and reads a missing
    /// or non-numeric one as 1.0. Both versions are read alike.
    public static let supportedVersions: ClosedRange<Double> = 1.0...1.1

    /// The latest pattern time, in seconds (one hour), that an entry may start at or a control point may fall on
    /// (its curve's `Time` plus its own). Real patterns last seconds (the longest in the corpus, 70 s); the bound
    /// keeps every time exact to far below a microsecond, and bounds what the renderer, the device-command
    /// planner and the engine do with a pattern. The reader refuses later times (`time-too-large`); the
    /// renderer skips entries beyond it in a pattern built in code, and the engine refuses to play one.
    public static let maximumTime: AHAPTime = 3600

    /// Whether `time` is within `-maximumTime...maximumTime` (false for NaN and the infinities): a time the
    /// renderer can work with exactly. Negative times are the reader's separate error.
    public static func isWithinTimeBound(_ time: AHAPTime) -> Bool {
        Swift.abs(time) <= maximumTime
    }

    /// A pattern from events and dynamic parameters, like `CHHapticPattern(events:parameters:)`.
    public init(
        events: [HapticEvent], parameters: [HapticDynamicParameter],
        version: Double? = HapticPattern.currentVersion, metadata: PatternMetadata? = nil
    ) {
        self.init(
            events: events, parameters: parameters, parameterCurves: [], version: version, metadata: metadata)
    }

    /// A pattern from events and parameter curves, like `CHHapticPattern(events:parameterCurves:)`.
    public init(
        events: [HapticEvent], parameterCurves: [HapticParameterCurve],
        version: Double? = HapticPattern.currentVersion, metadata: PatternMetadata? = nil
    ) {
        self.init(
            events: events, parameters: [], parameterCurves: parameterCurves, version: version, metadata: metadata)
    }

    /// A pattern with every kind of entry (an AHAP file may mix parameters and curves).
    public init(
        events: [HapticEvent], parameters: [HapticDynamicParameter], parameterCurves: [HapticParameterCurve],
        version: Double? = HapticPattern.currentVersion, metadata: PatternMetadata? = nil
    ) {
        self.events = events
        self.dynamicParameters = parameters
        self.parameterCurves = parameterCurves
        self.version = version
        self.metadata = metadata
    }

    /// The haptic events only (transient and continuous), in file order: what a haptics-only renderer plays.
    public var hapticEvents: [HapticEvent] { events.filter(\.isHaptic) }

    /// The pattern's length in seconds, like `CHHapticPattern.duration`: the latest end of any event (start plus
    /// `logicalDuration`), dynamic parameter time, or curve end. A transient counts as an instant unless its
    /// `EventDuration` pads the pattern; so does an `AudioCustom` event without `EventDuration`: its length is its
    /// sound file's, which a pattern does not read (a player's `duration` covers it).
    public var duration: AHAPTime {
        var end: AHAPTime = 0
        for event in events { end = Swift.max(end, event.relativeTime + event.logicalDuration) }
        for parameter in dynamicParameters { end = Swift.max(end, parameter.relativeTime) }
        for curve in parameterCurves { end = Swift.max(end, curve.endTime) }
        return end
    }
}

/// The AHAP `Metadata` dictionary: free-form text about the pattern. Core Haptics ignores it; it is kept so that
/// a pattern round-trips.
public struct PatternMetadata: Sendable, Hashable {
    /// Every entry, keyed as in the file. Values that are not strings in the file are kept as their JSON text
    /// (the validator warns), so nothing is lost silently.
    public var entries: [String: String]

    public init(entries: [String: String] = [:]) {
        self.entries = entries
    }

    public init(project: String? = nil, created: String? = nil, description: String? = nil) {
        var entries: [String: String] = [:]
        entries["Project"] = project
        entries["Created"] = created
        entries["Description"] = description
        self.init(entries: entries)
    }

    /// `Project`: the tool or project that wrote the file.
    public var project: String? {
        get { entries["Project"] }
        set { entries["Project"] = newValue }
    }
    /// `Created`: a free-form creation date or author.
    public var created: String? {
        get { entries["Created"] }
        set { entries["Created"] = newValue }
    }
    /// `Description`: what the pattern is for.
    public var description: String? {
        get { entries["Description"] }
        set { entries["Description"] = newValue }
    }
}
