/// Core Haptics' error codes (`CHHapticErrorCode` in `CHHapticErrors.h`) that a pattern dictionary can provoke.
/// A diagnostic carries the code Core Haptics would return for the same problem, where one exists.
public enum CoreHapticsErrorCode: Int, Sendable, Hashable, CaseIterable {
    /// `CHHapticErrorCodeNotSupported` (-4809): reported here for a `Version` Core Haptics cannot read.
    case notSupported = -4809
    /// `CHHapticErrorCodeInvalidPatternDictionary` (-4814): no `Pattern`, or an empty one.
    case invalidPatternDictionary = -4814
    /// `CHHapticErrorCodeInvalidParameterType` (-4820): an unknown parameter identifier.
    case invalidParameterType = -4820
    /// `CHHapticErrorCodeInvalidEventType` (-4821): an unknown `EventType`.
    case invalidEventType = -4821
    /// `CHHapticErrorCodeInvalidEventTime` (-4822): a missing or negative `Time`.
    case invalidEventTime = -4822
    /// `CHHapticErrorCodeInvalidEventDuration` (-4823): a negative `EventDuration`.
    case invalidEventDuration = -4823
    /// `CHHapticErrorCodeBadEventEntry` (-4830): an event without `EventType`, or an audio event without its file.
    case badEventEntry = -4830
    /// `CHHapticErrorCodeBadParameterEntry` (-4831): a parameter without identifier, value or time.
    case badParameterEntry = -4831
}

/// One problem found in an AHAP document: where (a JSON path), what (a stable code), why (a plain sentence), and
/// how bad (an error stops the file from loading; a warning describes something Core Haptics tolerates).
public struct AHAPDiagnostic: Sendable, Hashable, CustomStringConvertible {
    public enum Severity: String, Sendable, Hashable {
        /// The file does not load.
        case error
        /// The file loads (as Core Haptics would load it), but something is ignored, clamped or suspicious.
        case warning
    }

    /// Stable identifiers of the problems the validator reports; `docs/ahap.md` lists each with its severity.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        // Errors.
        /// The bytes are not JSON (or not the JSON5 subset accepted: trailing commas, comments).
        case notJSON = "not-json"
        /// The input exceeds a size, nesting, count or length limit of `AHAPLimits`.
        case limitExceeded = "limit-exceeded"
        /// A number is NaN, Infinity, or too large for a `Double`.
        case nonFiniteNumber = "non-finite-number"
        /// A value has the wrong JSON type (e.g. a string where a number belongs).
        case wrongType = "wrong-type"
        /// A required key is absent.
        case missingKey = "missing-key"
        /// `Pattern` is missing or empty, or none of its entries is an event, parameter or curve.
        case emptyPattern = "empty-pattern"
        /// `Version` is a number outside `HapticPattern.supportedVersions`, which Core Haptics refuses.
        case badVersion = "bad-version"
        /// A `Time` is negative.
        case negativeTime = "negative-time"
        /// A time in pattern time (an entry's `Time`, or a curve's `Time` plus a control point's) later than
        /// `HapticPattern.maximumTime`.
        case timeTooLarge = "time-too-large"
        /// An `EventDuration` is negative.
        case negativeDuration = "negative-duration"
        /// An `EventType` this module (and Core Haptics) does not know.
        case unknownEventType = "unknown-event-type"
        /// An `AudioCustom` event without `EventWaveformPath`.
        case missingWaveformPath = "missing-waveform-path"
        /// A parameter curve without control points.
        case emptyCurve = "empty-curve"
        /// A file that could not be read (missing, unreadable, a directory, a device or a pipe); `haptics
        /// validate` reports it like a parse error.
        case unreadableFile = "unreadable-file"

        // Warnings.
        /// The file has no `Version`, or one that is not a number; it is read as 1.0, as Core Haptics reads it.
        case missingVersion = "missing-version"
        /// A continuous event without `EventDuration`; it is read as 0 seconds long.
        case missingDuration = "missing-duration"
        /// A `Pattern` entry with none of `Event`, `Parameter`, `ParameterCurve`; it is ignored.
        case emptyEntry = "empty-entry"
        /// `Metadata` that is not an object of strings; Core Haptics ignores it, the model keeps what it can.
        case metadataNotText = "metadata-not-text"
        /// A key AHAP does not define; it is ignored.
        case unknownKey = "unknown-key"
        /// A key whose value is `null` (Apple's samples write `"EventWaveformPath": null`); it is read as absent.
        case nullValue = "null-value"
        /// A `ParameterID` this module does not know; kept in the model, ignored by the renderer.
        case unknownParameter = "unknown-parameter"
        /// A number written as JSON text (`"0.5"`); it is read as the number, as Core Haptics reads it.
        case numberAsText = "number-as-text"
        /// A boolean where a number belongs (`"ParameterValue": false` for `Sustained`); read as 1 or 0, as Core
        /// Haptics reads it.
        case booleanAsNumber = "boolean-as-number"
        /// `EventDuration` -1, Core Haptics' mark for no duration; read as absent, as Core Haptics reads it.
        case noDurationMark = "no-duration-mark"
        /// A dynamic `Parameter` without `ParameterValue`; it is read as 0, as Core Haptics reads it.
        case missingValue = "missing-value"
        /// In a document read from a file: an `AudioCustom` event's sound file is not beside it (or its path is
        /// empty or leaves the folder). The engine plays the pattern without it, after looking in its resource
        /// folder too; Core Haptics refuses the pattern (-4830).
        case soundFileNotFound = "sound-file-not-found"
        /// A value outside its parameter's documented range; Core Haptics clamps it.
        case valueOutOfRange = "value-out-of-range"
        /// A continuous event longer than `HapticEvent.maximumContinuousDuration`.
        case durationTooLong = "duration-too-long"
        /// A curve with more than `HapticParameterCurve.maximumControlPointCount` control points.
        case tooManyControlPoints = "too-many-control-points"
        /// A curve whose control points are not in time order.
        case unsortedControlPoints = "unsorted-control-points"
        /// The same parameter listed twice in one event; the last one is used.
        case duplicateParameter = "duplicate-parameter"
        /// The same key twice in one JSON object (the last one is used), or `Time` and its older spelling
        /// together (`Time` is used).
        case duplicateKey = "duplicate-key"
        /// JSON5 leniency was needed (a trailing comma, a comment); Apple's own samples need it.
        case lenientSyntax = "lenient-syntax"
        /// A key that has no effect for this event type (e.g. `EventWaveformPath` on a haptic event).
        case ignoredForEventType = "ignored-for-event-type"
        /// More problems than `AHAPLimits.maximumDiagnostics`; the rest are not listed.
        case diagnosticsTruncated = "diagnostics-truncated"
    }

    public var severity: Severity
    public var code: Code
    /// Where the problem is, e.g. `Pattern[3].Event.EventParameters[1].ParameterValue`; empty for the whole
    /// document. For syntax errors it is the path of the innermost value being read, and `line`/`column` say
    /// where in the text.
    public var path: String
    /// A plain explanation, one sentence, no trailing period.
    public var message: String
    /// The code Core Haptics returns for the same problem, where one exists.
    public var coreHapticsCode: CoreHapticsErrorCode?
    /// 1-based position in the text, for syntax errors; `nil` for structural problems.
    public var line: Int?
    public var column: Int?

    public init(
        severity: Severity, code: Code, path: String, message: String,
        coreHapticsCode: CoreHapticsErrorCode? = nil, line: Int? = nil, column: Int? = nil
    ) {
        self.severity = severity
        self.code = code
        self.path = path
        self.message = message
        self.coreHapticsCode = coreHapticsCode
        self.line = line
        self.column = column
    }

    /// `path: severity: message [code, Core Haptics -48xx]`, the line `haptics validate` prints after the file.
    public var description: String {
        var text = path.isEmpty ? "" : "\(path): "
        if let line, let column { text += "line \(line), column \(column): " }
        text += "\(severity.rawValue): \(message) [\(code.rawValue)"
        if let coreHapticsCode { text += ", Core Haptics \(coreHapticsCode.rawValue)" }
        return text + "]"
    }
}

/// Thrown by the loading initializers of `HapticPattern` when a document has errors; carries every diagnostic
/// found (errors and warnings), so a caller can show all of them at once.
public struct AHAPError: Error, Sendable, Hashable, CustomStringConvertible {
    public var diagnostics: [AHAPDiagnostic]

    public init(diagnostics: [AHAPDiagnostic]) {
        self.diagnostics = diagnostics
    }

    public var errors: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .error } }

    public var description: String {
        let errors = errors
        guard let first = errors.first else { return "AHAP document rejected" }
        let others = errors.count - 1
        let more = others > 0 ? " (and \(others) more error\(others == 1 ? "" : "s"))" : ""
        // A file that could not be read is not an AHAP document at all.
        return first.code == .unreadableFile ? "\(first)\(more)" : "invalid AHAP: \(first)\(more)"
    }
}
