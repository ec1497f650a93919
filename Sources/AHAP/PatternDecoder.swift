// Turns a parsed JSON tree into a `HapticPattern`, reporting every problem with its JSON path. Loading follows
// Core Haptics' documented behaviour ("sets missing entries to their default value and clamps out-of-range
// values ... ignores unsupported keys") and its reader's rules (which keys, which spellings of `Time`, which
// `Version`): what Core Haptics tolerates is a warning, what it rejects is an error. The few places where this
// package is deliberately stricter or looser are listed in docs/ahap.md ("How close this is to Core Haptics").

struct PatternDecoder {
    private let limits: AHAPLimits
    private var path: [JSONPathComponent] = []
    private(set) var diagnostics: [AHAPDiagnostic] = []
    private(set) var errorCount = 0
    private var droppedDiagnostics = 0
    /// The first error past the limit: still listed, so that a document that does not load always names why.
    private var firstDroppedError: AHAPDiagnostic?
    /// For a document read from a file: what is wrong with an `AudioCustom` event's sound file (`nil` when it is
    /// there). The decoder itself reads nothing.
    private let soundFileProblem: ((String) -> String?)?

    init(limits: AHAPLimits, soundFileProblem: ((String) -> String?)? = nil) {
        self.limits = limits
        self.soundFileProblem = soundFileProblem
    }

    // MARK: Reporting

    mutating func report(
        _ severity: AHAPDiagnostic.Severity, _ code: AHAPDiagnostic.Code, _ message: String,
        coreHaptics: CoreHapticsErrorCode? = nil, at component: JSONPathComponent? = nil,
        line: Int? = nil, column: Int? = nil, path explicitPath: [JSONPathComponent]? = nil
    ) {
        if severity == .error { errorCount += 1 }
        let isListed = diagnostics.count < limits.maximumDiagnostics
        guard isListed || (severity == .error && firstDroppedError == nil) else {
            droppedDiagnostics += 1
            return
        }
        var location = explicitPath ?? path
        if let component { location.append(component) }
        let diagnostic = AHAPDiagnostic(
            severity: severity, code: code, path: location.formatted, message: message,
            coreHapticsCode: coreHaptics, line: line, column: column)
        if isListed {
            diagnostics.append(diagnostic)
        } else {
            firstDroppedError = diagnostic
        }
    }

    /// Counts problems found elsewhere (the reader's leniencies) that were not kept, for the summary.
    mutating func countOmitted(_ count: Int) {
        droppedDiagnostics += count
    }

    /// Appends the first error that did not fit under the limit, then the summary of the other diagnostics that
    /// did not; returns how many those were.
    mutating func finish() -> Int {
        if let firstDroppedError {
            diagnostics.append(firstDroppedError)
            self.firstDroppedError = nil
        }
        let unlisted = droppedDiagnostics
        guard unlisted > 0 else { return 0 }
        diagnostics.append(
            AHAPDiagnostic(
                severity: .warning, code: .diagnosticsTruncated, path: "",
                message: "\(unlisted) more problems not listed (limit \(limits.maximumDiagnostics))"))
        droppedDiagnostics = 0
        return unlisted
    }

    private mutating func push(_ component: JSONPathComponent) { path.append(component) }
    private mutating func pop() { path.removeLast() }

    // MARK: Typed reads

    /// Objects wider than this find duplicate keys through a dictionary instead of a linear scan, so that a
    /// hostile object with a million keys costs linear time; AHAP objects have at most eight keys.
    private static let linearScanLimit = 16

    /// The object's members, each key once: the same key written twice is the last one written (with a warning),
    /// as in the dictionary `JSONSerialization` makes of the text. Then `null` values are dropped (with a warning:
    /// an optional key written as `null`, as Apple's samples write `"EventWaveformPath": null`, reads as absent,
    /// and a required one is then reported missing), and `timeAlias`, the older spelling of `Time` this kind of
    /// object may use, is folded onto `Time`: `Time` is used when both are there (with a warning), whichever
    /// comes first, since a dictionary has no order of keys and must read as its text does.
    private mutating func members(
        of object: [JSONMember], timeAlias: TimeAlias? = nil
    ) -> [(key: String, spelledAs: String, value: JSONValue)] {
        var present = distinctMembers(of: object)
        for member in present {
            guard case .null = member.value else { continue }
            report(
                .warning, .nullValue, "\(member.key.shownInMessage) is null; it is read as absent",
                at: .key(member.key))
        }
        present.removeAll { member in
            guard case .null = member.value else { return false }
            return true
        }
        if let timeAlias, present.contains(where: { $0.key == "Time" }),
            let alias = present.firstIndex(where: { $0.key == timeAlias.rawValue })
        {
            report(
                .warning, .duplicateKey, #""Time" and "\#(timeAlias.rawValue)" both give Time; "Time" is used"#,
                at: .key(timeAlias.rawValue))
            present.remove(at: alias)
        }
        return present.map { ($0.key == timeAlias?.rawValue ? "Time" : $0.key, $0.key, $0.value) }
    }

    /// The object's members with a key written twice resolved: the last one written is used, with a warning, in
    /// the place of the first.
    private mutating func distinctMembers(of object: [JSONMember]) -> [JSONMember] {
        var result: [JSONMember] = []
        result.reserveCapacity(object.count)
        var positions: [String: Int] = [:]
        let indexed = object.count > Self.linearScanLimit
        for member in object {
            let existing = indexed ? positions[member.key] : result.firstIndex(where: { $0.key == member.key })
            guard let existing else {
                if indexed { positions[member.key] = result.count }
                result.append(member)
                continue
            }
            report(
                .warning, .duplicateKey, "\(member.key.quotedForMessage) appears twice; the last one is used",
                at: .key(member.key))
            result[existing] = member
        }
        return result
    }

    /// The bytes of a decimal number in text: `Double(_:)` reads hexadecimal, `nan` and `inf` too.
    private static let decimalNumberBytes = Set("0123456789+-.eE".utf8)

    /// A finite number, or a decimal number written as text (with a warning). The reader refuses NaN and
    /// infinities in text; they reach here only from a pattern built in code (`validationDiagnostics()`).
    private mutating func number(
        _ value: JSONValue, key: String, coreHaptics: CoreHapticsErrorCode?
    ) -> Double? {
        if case .number(let number) = value {
            guard number.isFinite else {
                report(.error, .nonFiniteNumber, "\(key) is \(number), not a finite number", at: .key(key))
                return nil
            }
            return number
        }
        // Core Haptics reads a boolean where a number belongs as 1 or 0 (`Sustained` is documented as a boolean,
        // and files write `true`).
        if case .bool(let flag) = value {
            report(
                .warning, .booleanAsNumber,
                "\(key) is \(flag), not a number; it is read as \(flag ? 1 : 0), as Core Haptics reads it",
                at: .key(key))
            return flag ? 1 : 0
        }
        // Core Haptics reads a number written as text ("0.5") as the number. Text that is not one it reads as 0,
        // silently; that is refused here, since it is a mistake in all likelihood.
        if case .string(let text) = value, text.utf8.allSatisfy(Self.decimalNumberBytes.contains),
            let number = Double(text)
        {
            // Text such as "1e400" is a decimal number too, beyond a `Double`: refused as that number would be.
            guard number.isFinite else {
                report(
                    .error, .nonFiniteNumber,
                    "\(key) is the text \(text.quotedForMessage), a number too large for a Double", at: .key(key))
                return nil
            }
            report(
                .warning, .numberAsText,
                "\(key) is the text \(text.quotedForMessage), not a number; it is read as \(number), as Core Haptics reads it",
                at: .key(key))
            return number
        }
        report(
            .error, .wrongType, "\(key) must be a number, found \(value.kindName)", coreHaptics: coreHaptics,
            at: .key(key))
        return nil
    }

    private mutating func string(
        _ value: JSONValue, key: String, coreHaptics: CoreHapticsErrorCode?
    ) -> String? {
        if case .string(let text) = value { return text }
        report(
            .error, .wrongType, "\(key) must be a string, found \(value.kindName)", coreHaptics: coreHaptics,
            at: .key(key))
        return nil
    }

    /// Booleans may also arrive as 0/1 numbers (property-list dictionaries store them as numbers).
    private mutating func boolean(_ value: JSONValue, key: String) -> Bool? {
        switch value {
        case .bool(let flag): return flag
        case .number(let number) where number == 0 || number == 1: return number == 1
        default:
            report(
                .error, .wrongType, "\(key) must be true or false, found \(value.kindName)",
                coreHaptics: .badEventEntry, at: .key(key))
            return nil
        }
    }

    /// A time that must be present, not negative, and (added to `origin`, the start of the curve a control
    /// point belongs to) not later than `HapticPattern.maximumTime` (`Time` of events, parameters, curves and
    /// control points).
    private mutating func requiredTime(
        _ value: JSONValue?, key: String, owner: String, missingCode: CoreHapticsErrorCode, origin: Double = 0
    ) -> Double? {
        guard let value else {
            report(.error, .missingKey, "\(owner) has no Time", coreHaptics: missingCode)
            return nil
        }
        guard let time = number(value, key: key, coreHaptics: .invalidEventTime) else { return nil }
        guard time >= 0 else {
            report(.error, .negativeTime, "Time is negative (\(time) s)", coreHaptics: .invalidEventTime, at: .key(key))
            return nil
        }
        guard origin + time <= HapticPattern.maximumTime else {
            let when = origin > 0 ? "\(origin) s + \(time) s" : "\(time) s"
            report(
                .error, .timeTooLarge,
                "Time \(when) is later than \(HapticPattern.maximumTime) s, the latest pattern time this package plays",
                at: .key(key))
            return nil
        }
        return time
    }

    private mutating func checkRange(_ value: Double, range: ClosedRange<Double>?, name: String, key: String) {
        guard let range, !range.contains(value) else { return }
        report(
            .warning, .valueOutOfRange,
            "\(value) is outside \(name)'s range \(range.lowerBound)...\(range.upperBound); Core Haptics clamps it to \(min(max(value, range.lowerBound), range.upperBound))",
            at: .key(key))
    }

    private mutating func unknownKey(_ key: String, in owner: String) {
        report(
            .warning, .unknownKey, "\(key.quotedForMessage) is not an AHAP key of \(owner); it is ignored",
            at: .key(key))
    }

    /// The older spellings of `Time` that Core Haptics still reads: `EventTime` in an `Event`, `ParameterTime` in
    /// a `Parameter`, and neither anywhere else (a curve and a control point have `Time` only).
    private enum TimeAlias: String {
        case event = "EventTime"
        case parameter = "ParameterTime"
    }

    // MARK: Document

    mutating func decodeDocument(_ root: JSONValue) -> HapticPattern? {
        guard case .object(let object) = root else {
            report(
                .error, .wrongType, "an AHAP document must be a JSON object, found \(root.kindName)",
                coreHaptics: .invalidPatternDictionary)
            return nil
        }
        var version: Double?
        var metadata: PatternMetadata?
        var patternValue: JSONValue?
        let members = members(of: object)
        for (key, spelling, value) in members {
            switch key {
            case "Version": version = decodeVersion(value)
            case "Metadata": metadata = decodeMetadata(value)
            case "Pattern": patternValue = value
            default: unknownKey(spelling, in: "the document")
            }
        }
        if version == nil && !members.contains(where: { $0.key == "Version" }) {
            report(.warning, .missingVersion, "the document has no Version; it is read as AHAP 1.0")
        }
        var pattern = HapticPattern(
            events: [], parameters: [], parameterCurves: [], version: version, metadata: metadata)
        decodePattern(patternValue, into: &pattern)
        return errorCount == 0 ? pattern : nil
    }

    /// `Version` as Core Haptics reads it: a number from 1.0 to 1.1 is taken as it is, any other number is refused
    /// (-4809, not supported), and anything but a number is read as 1.0 with a warning, as a missing one is. A
    /// boolean is a number there (1 or 0, as everywhere: `false` is refused).
    private mutating func decodeVersion(_ value: JSONValue) -> Double? {
        if case .bool = value {
            guard let version = number(value, key: "Version", coreHaptics: nil) else { return nil }
            return checkedVersion(version)
        }
        guard case .number(let version) = value else {
            report(
                .warning, .missingVersion,
                "Version must be a number, found \(value.kindName); it is read as AHAP 1.0, as Core Haptics reads it",
                at: .key("Version"))
            return nil
        }
        guard version.isFinite else {
            report(.error, .nonFiniteNumber, "Version is \(version), not a finite number", at: .key("Version"))
            return nil
        }
        return checkedVersion(version)
    }

    /// `version` when Core Haptics plays it; nil and a `bad-version` error otherwise.
    private mutating func checkedVersion(_ version: Double) -> Double? {
        let supported = HapticPattern.supportedVersions
        guard supported.contains(version) else {
            report(
                .error, .badVersion,
                "Version \(version) is not one Core Haptics plays (\(supported.lowerBound) to \(supported.upperBound))",
                coreHaptics: .notSupported, at: .key("Version"))
            return nil
        }
        return version
    }

    private mutating func decodeMetadata(_ value: JSONValue) -> PatternMetadata? {
        guard case .object(let object) = value else {
            report(
                .warning, .metadataNotText, "Metadata should be an object, found \(value.kindName); it is ignored",
                at: .key("Metadata"))
            return nil
        }
        push(.key("Metadata"))
        defer { pop() }
        var entries: [String: String] = [:]
        for (key, spelling, entry) in members(of: object) {
            if case .string(let text) = entry {
                entries[key] = text
            } else {
                report(
                    .warning, .metadataNotText,
                    "Metadata values are text; \(entry.kindName) is kept as its JSON text", at: .key(spelling))
                entries[key] = JSONWriter.compactText(of: entry)
            }
        }
        return PatternMetadata(entries: entries)
    }

    private mutating func decodePattern(_ value: JSONValue?, into pattern: inout HapticPattern) {
        guard let value else {
            report(.error, .emptyPattern, "the document has no Pattern", coreHaptics: .invalidPatternDictionary)
            return
        }
        guard case .array(let entries) = value else {
            report(
                .error, .wrongType, "Pattern must be an array, found \(value.kindName)",
                coreHaptics: .invalidPatternDictionary, at: .key("Pattern"))
            return
        }
        guard !entries.isEmpty else {
            report(
                .error, .emptyPattern, "Pattern is empty", coreHaptics: .invalidPatternDictionary, at: .key("Pattern"))
            return
        }
        guard entries.count <= limits.maximumPatternEntries else {
            report(
                .error, .limitExceeded,
                "Pattern has \(entries.count) entries, more than the limit of \(limits.maximumPatternEntries)",
                at: .key("Pattern"))
            return
        }
        push(.key("Pattern"))
        defer { pop() }
        let errorsBefore = errorCount
        for (index, entry) in entries.enumerated() {
            push(.index(index))
            decodeEntry(entry, into: &pattern)
            pop()
        }
        let usable = pattern.events.count + pattern.dynamicParameters.count + pattern.parameterCurves.count
        if usable == 0 && errorCount == errorsBefore {
            report(
                .error, .emptyPattern,
                "no entry of Pattern is an Event, Parameter or ParameterCurve; nothing would play",
                coreHaptics: .invalidPatternDictionary)
        }
    }

    private mutating func decodeEntry(_ value: JSONValue, into pattern: inout HapticPattern) {
        guard case .object(let object) = value else {
            report(
                .error, .wrongType, "a Pattern entry must be an object, found \(value.kindName)",
                coreHaptics: .invalidPatternDictionary)
            return
        }
        var recognised = false
        for (key, spelling, item) in members(of: object) {
            push(.key(spelling))
            switch key {
            case "Event":
                recognised = true
                if let event = decodeEvent(item) { pattern.events.append(event) }
            case "Parameter":
                recognised = true
                if let parameter = decodeDynamicParameter(item) { pattern.dynamicParameters.append(parameter) }
            case "ParameterCurve":
                recognised = true
                if let curve = decodeCurve(item) { pattern.parameterCurves.append(curve) }
            default:
                pop()
                unknownKey(spelling, in: "a Pattern entry")
                continue
            }
            pop()
        }
        if !recognised && object.isEmpty {
            report(.warning, .emptyEntry, "this Pattern entry is empty; it is ignored")
        } else if !recognised {
            report(.warning, .emptyEntry, "this Pattern entry has no Event, Parameter or ParameterCurve; it is ignored")
        }
    }

    // MARK: Events

    private mutating func decodeEvent(_ value: JSONValue) -> HapticEvent? {
        guard case .object(let object) = value else {
            report(.error, .wrongType, "Event must be an object, found \(value.kindName)", coreHaptics: .badEventEntry)
            return nil
        }
        let errorsBefore = errorCount
        var timeValue: JSONValue?
        var type: HapticEvent.EventType?
        var sawType = false
        var duration: Double?
        var parameters: [HapticEventParameter] = []
        var waveformPath: String?
        var resource: AudioResourceID?
        var usesVolumeEnvelope: Bool?
        var loopEnabled: Bool?
        var timeSpelling = "Time"
        for (key, spelling, item) in members(of: object, timeAlias: .event) {
            switch key {
            case "Time":
                timeValue = item
                timeSpelling = spelling
            case "EventType":
                sawType = true
                type = decodeEventType(item, key: spelling)
            case "EventDuration":
                duration = decodeEventDuration(item, key: spelling)
            case "EventParameters":
                parameters = decodeEventParameters(item, key: spelling)
            case "EventWaveformPath":
                if case .number = item {
                    resource = decodeAudioResource(item, key: spelling)
                } else {
                    waveformPath = string(item, key: spelling, coreHaptics: .badEventEntry)
                }
            case "EventWaveformUseVolumeEnvelope":
                usesVolumeEnvelope = boolean(item, key: spelling)
            case "EventWaveformLoopEnabled":
                loopEnabled = boolean(item, key: spelling)
            default:
                unknownKey(spelling, in: "an Event")
            }
        }
        let time = requiredTime(timeValue, key: timeSpelling, owner: "this Event", missingCode: .invalidEventTime)
        if !sawType {
            report(.error, .missingKey, "this Event has no EventType", coreHaptics: .badEventEntry)
        }
        guard let type, let time, errorCount == errorsBefore else { return nil }
        checkEventConsistency(
            type: type, duration: duration, parameters: parameters, waveformPath: waveformPath, resource: resource,
            hasEnvelopeFlag: usesVolumeEnvelope != nil, hasLoopFlag: loopEnabled != nil)
        guard errorCount == errorsBefore else { return nil }
        var event = HapticEvent(type: type, parameters: parameters, relativeTime: time, duration: duration)
        event.waveformPath = waveformPath
        event.audioResourceID = resource
        event.waveformUsesVolumeEnvelope = usesVolumeEnvelope
        event.waveformLoopEnabled = loopEnabled
        return event
    }

    /// `EventWaveformPath` as a number: an audio resource registered with an engine, as Core Haptics' pattern
    /// dictionaries name one. A whole number from 0 to `AudioResourceID.maximumRawValue`.
    private mutating func decodeAudioResource(_ item: JSONValue, key: String) -> AudioResourceID? {
        guard let number = number(item, key: key, coreHaptics: .badEventEntry) else { return nil }
        guard number >= 0, number <= Double(AudioResourceID.maximumRawValue), number.rounded() == number else {
            report(
                .error, .wrongType,
                "\(key) must be a path, or a registered audio resource's ID (a whole number from 0 to \(AudioResourceID.maximumRawValue)), found \(number)",
                coreHaptics: .badEventEntry, at: .key(key))
            return nil
        }
        return AudioResourceID(rawValue: UInt(number))
    }

    private mutating func decodeEventType(_ item: JSONValue, key: String) -> HapticEvent.EventType? {
        guard let name = string(item, key: key, coreHaptics: .badEventEntry) else { return nil }
        guard let type = HapticEvent.EventType(rawValue: name) else {
            let known = HapticEvent.EventType.allCases.map(\.rawValue).joined(separator: ", ")
            report(
                .error, .unknownEventType, "\(name.quotedForMessage) is not an event type (known: \(known))",
                coreHaptics: .invalidEventType, at: .key(key))
            return nil
        }
        return type
    }

    /// A non-negative duration in seconds; nil (and a diagnostic) otherwise. -1 is Core Haptics' own mark for "no
    /// duration", which its reader takes as the key's absence: so is it here, with a warning.
    private mutating func decodeEventDuration(_ item: JSONValue, key: String) -> Double? {
        guard let seconds = number(item, key: key, coreHaptics: .invalidEventDuration) else { return nil }
        if seconds == -1 {
            report(
                .warning, .noDurationMark,
                "EventDuration is -1, Core Haptics' mark for no duration; it is read as absent, as Core Haptics reads it",
                at: .key(key))
            return nil
        }
        guard seconds >= 0 else {
            report(
                .error, .negativeDuration, "EventDuration is negative (\(seconds) s)",
                coreHaptics: .invalidEventDuration, at: .key(key))
            return nil
        }
        return seconds
    }

    private mutating func checkEventConsistency(
        type: HapticEvent.EventType, duration: Double?, parameters: [HapticEventParameter], waveformPath: String?,
        resource: AudioResourceID?, hasEnvelopeFlag: Bool, hasLoopFlag: Bool
    ) {
        switch type {
        case .hapticContinuous, .audioContinuous:
            if duration == nil {
                report(.warning, .missingDuration, "this \(type.rawValue) event has no EventDuration; it lasts 0 s")
            }
        case .hapticTransient, .audioCustom:
            break
        }
        if let duration, type == .hapticTransient, duration > HapticEvent.maximumContinuousDuration {
            report(
                .warning, .durationTooLong,
                "EventDuration \(duration) s pads the pattern past the \(HapticEvent.maximumContinuousDuration) s this package pads it to; it is cut",
                at: .key("EventDuration"))
        } else if let duration, type == .hapticContinuous, duration > HapticEvent.maximumContinuousDuration {
            report(
                .warning, .durationTooLong,
                "EventDuration \(duration) s is longer than the \(HapticEvent.maximumContinuousDuration) s Core Haptics plays; it is cut",
                at: .key("EventDuration"))
        } else if let duration, type == .audioCustom || type == .audioContinuous,
            duration > HapticEvent.maximumContinuousDuration
        {
            report(
                .warning, .durationTooLong,
                "EventDuration \(duration) s is longer than the \(HapticEvent.maximumContinuousDuration) s of a sound this package plays; it is cut",
                at: .key("EventDuration"))
        }
        if type == .audioCustom {
            if let resource {
                // Read from a file (the only reading that checks sound files), a number names no sound: an engine
                // gives its resource IDs to the process that registered the files, for its patterns in code.
                if soundFileProblem != nil {
                    report(
                        .warning, .soundFileNotFound,
                        "EventWaveformPath is \(resource), an ID an engine gives a file registered with it in a running program; a file cannot name one: give the sound's path",
                        coreHaptics: .badEventEntry, at: .key("EventWaveformPath"))
                }
            } else if waveformPath == nil {
                report(
                    .error, .missingWaveformPath, "this AudioCustom event has no EventWaveformPath",
                    coreHaptics: .badEventEntry)
            } else if let waveformPath, let problem = soundFileProblem?(waveformPath) {
                report(
                    .warning, .soundFileNotFound,
                    "the sound \(waveformPath.quotedForMessage) \(problem); without it the engine plays the rest of the pattern, and Core Haptics refuses the pattern",
                    coreHaptics: .badEventEntry, at: .key("EventWaveformPath"))
            }
        } else {
            if waveformPath != nil || resource != nil {
                report(
                    .warning, .ignoredForEventType, "EventWaveformPath has no effect on a \(type.rawValue) event",
                    at: .key("EventWaveformPath"))
            }
            if hasEnvelopeFlag {
                report(
                    .warning, .ignoredForEventType,
                    "EventWaveformUseVolumeEnvelope has no effect on a \(type.rawValue) event",
                    at: .key("EventWaveformUseVolumeEnvelope"))
            }
            if hasLoopFlag {
                report(
                    .warning, .ignoredForEventType,
                    "EventWaveformLoopEnabled has no effect on a \(type.rawValue) event",
                    at: .key("EventWaveformLoopEnabled"))
            }
        }
        for (index, parameter) in parameters.enumerated() where parameter.parameterID.range != nil {
            let id = parameter.parameterID
            // Sustained and the envelope times shape audio events too; the haptic-only ones do not.
            let sharedWithAudio = id == .attackTime || id == .decayTime || id == .releaseTime || id == .sustained
            if type.isHaptic != id.isHaptic && !sharedWithAudio {
                report(
                    .warning, .ignoredForEventType, "\(id.rawValue) has no effect on a \(type.rawValue) event",
                    path: path + [.key("EventParameters"), .index(index)])
            }
        }
    }

    private mutating func decodeEventParameters(_ value: JSONValue, key: String) -> [HapticEventParameter] {
        guard case .array(let entries) = value else {
            report(
                .error, .wrongType, "EventParameters must be an array, found \(value.kindName)",
                coreHaptics: .badParameterEntry, at: .key(key))
            return []
        }
        guard entries.count <= limits.maximumEventParameters else {
            report(
                .error, .limitExceeded,
                "EventParameters has \(entries.count) entries, more than the limit of \(limits.maximumEventParameters)",
                at: .key(key))
            return []
        }
        push(.key(key))
        defer { pop() }
        var parameters: [HapticEventParameter] = []
        parameters.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            push(.index(index))
            defer { pop() }
            guard let fields = parameterFields(of: entry, keys: [.id, .value], owner: "event parameter"),
                let name = fields.name, let value = fields.value
            else { continue }
            let id = HapticEvent.ParameterID(rawValue: name)
            if case .unknown = id {
                let known = HapticEvent.ParameterID.known.map(\.rawValue).joined(separator: ", ")
                report(
                    .warning, .unknownParameter,
                    "\(name.quotedForMessage) is not an event parameter (known: \(known)); it is kept but has no effect",
                    coreHaptics: .invalidParameterType, at: .key("ParameterID"))
            } else if parameters.contains(where: { $0.parameterID == id }) {
                report(
                    .warning, .duplicateParameter,
                    "\(name) is listed more than once in this event; the last value is used", at: .key("ParameterID"))
            }
            checkRange(value, range: id.range, name: name, key: "ParameterValue")
            parameters.append(HapticEventParameter(parameterID: id, value: value))
        }
        return parameters
    }

    // MARK: Parameter-like objects

    /// The keys event parameters, dynamic parameters, curves and control points are made of.
    private enum ParameterKey: String {
        case id = "ParameterID"
        case value = "ParameterValue"
        case time = "Time"
        case controlPoints = "ParameterCurveControlPoints"
    }

    private struct ParameterFields {
        var present: Set<ParameterKey> = []
        var name: String?
        var value: Double?
        var time: JSONValue?
        var timeSpelling = ParameterKey.time.rawValue
        var controlPoints: JSONValue?
        var controlPointsSpelling = ParameterKey.controlPoints.rawValue
    }

    /// Reads the members of a parameter-like object that accepts `keys`: other keys are reported as unknown, a
    /// missing `ParameterID` or `ParameterValue` (when accepted) as an error -4831, except that with
    /// `missingValueReadsAsZero` (a dynamic parameter, as Core Haptics reads one) a missing value is 0 and a
    /// warning. Times are checked by the caller (`requiredTime`), which knows the owner's error code.
    private mutating func parameterFields(
        of value: JSONValue, keys: Set<ParameterKey>, owner: String, timeAlias: TimeAlias? = nil,
        missingValueReadsAsZero: Bool = false
    ) -> ParameterFields? {
        guard case .object(let object) = value else {
            report(
                .error, .wrongType, "\(owner) must be an object, found \(value.kindName)",
                coreHaptics: .badParameterEntry)
            return nil
        }
        var fields = ParameterFields()
        for (key, spelling, item) in members(of: object, timeAlias: timeAlias) {
            guard let known = ParameterKey(rawValue: key), keys.contains(known) else {
                unknownKey(spelling, in: owner)
                continue
            }
            fields.present.insert(known)
            switch known {
            case .id: fields.name = string(item, key: spelling, coreHaptics: .badParameterEntry)
            case .value: fields.value = number(item, key: spelling, coreHaptics: .badParameterEntry)
            case .time:
                fields.time = item
                fields.timeSpelling = spelling
            case .controlPoints:
                fields.controlPoints = item
                fields.controlPointsSpelling = spelling
            }
        }
        for required in [ParameterKey.id, .value, .controlPoints]
        where keys.contains(required) && !fields.present.contains(required) {
            if required == .value && missingValueReadsAsZero {
                report(
                    .warning, .missingValue,
                    "this \(owner) has no ParameterValue; it is read as 0, as Core Haptics reads it")
                fields.value = 0
                continue
            }
            report(.error, .missingKey, "this \(owner) has no \(required.rawValue)", coreHaptics: .badParameterEntry)
        }
        return fields
    }

    // MARK: Dynamic parameters and curves

    private mutating func dynamicID(_ name: String) -> HapticDynamicParameter.ID {
        let id = HapticDynamicParameter.ID(rawValue: name)
        if case .unknown = id {
            let known = HapticDynamicParameter.ID.known.map(\.rawValue).joined(separator: ", ")
            report(
                .warning, .unknownParameter,
                "\(name.quotedForMessage) is not a dynamic parameter (known: \(known)); it is kept but has no effect",
                coreHaptics: .invalidParameterType, at: .key("ParameterID"))
        }
        return id
    }

    private mutating func decodeDynamicParameter(_ value: JSONValue) -> HapticDynamicParameter? {
        let errorsBefore = errorCount
        guard
            let fields = parameterFields(
                of: value, keys: [.id, .value, .time], owner: "Parameter", timeAlias: .parameter,
                missingValueReadsAsZero: true)
        else { return nil }
        let time = requiredTime(
            fields.time, key: fields.timeSpelling, owner: "this Parameter", missingCode: .badParameterEntry)
        guard let name = fields.name, let number = fields.value, let time, errorCount == errorsBefore else {
            return nil
        }
        let id = dynamicID(name)
        checkRange(number, range: id.range, name: name, key: ParameterKey.value.rawValue)
        return HapticDynamicParameter(parameterID: id, value: number, relativeTime: time)
    }

    private mutating func decodeCurve(_ value: JSONValue) -> HapticParameterCurve? {
        let errorsBefore = errorCount
        guard let fields = parameterFields(of: value, keys: [.id, .time, .controlPoints], owner: "ParameterCurve")
        else { return nil }
        let time = requiredTime(
            fields.time, key: fields.timeSpelling, owner: "this ParameterCurve", missingCode: .badParameterEntry)
        let id = fields.name.map { dynamicID($0) }
        var points: [HapticParameterCurve.ControlPoint] = []
        if let pointsValue = fields.controlPoints {
            points = decodeControlPoints(pointsValue, key: fields.controlPointsSpelling, id: id, origin: time ?? 0)
        }
        guard let id, let time, errorCount == errorsBefore else { return nil }
        return HapticParameterCurve(parameterID: id, controlPoints: points, relativeTime: time)
    }

    /// The control points of a curve starting at pattern time `origin`.
    private mutating func decodeControlPoints(
        _ value: JSONValue, key: String, id: HapticDynamicParameter.ID?, origin: Double
    ) -> [HapticParameterCurve.ControlPoint] {
        guard case .array(let entries) = value else {
            report(
                .error, .wrongType, "ParameterCurveControlPoints must be an array, found \(value.kindName)",
                coreHaptics: .badParameterEntry, at: .key(key))
            return []
        }
        guard !entries.isEmpty else {
            report(
                .error, .emptyCurve, "ParameterCurveControlPoints is empty", coreHaptics: .badParameterEntry,
                at: .key(key))
            return []
        }
        guard entries.count <= limits.maximumControlPoints else {
            report(
                .error, .limitExceeded,
                "the curve has \(entries.count) control points, more than the limit of \(limits.maximumControlPoints)",
                at: .key(key))
            return []
        }
        if entries.count > HapticParameterCurve.maximumControlPointCount {
            report(
                .warning, .tooManyControlPoints,
                "the curve has \(entries.count) control points; Core Haptics is believed to take at most \(HapticParameterCurve.maximumControlPointCount) per curve (split it into several curves)",
                at: .key(key))
        }
        push(.key(key))
        defer { pop() }
        var points: [HapticParameterCurve.ControlPoint] = []
        points.reserveCapacity(entries.count)
        var reportedUnsorted = false
        for (index, entry) in entries.enumerated() {
            push(.index(index))
            defer { pop() }
            guard let fields = parameterFields(of: entry, keys: [.value, .time], owner: "control point") else {
                continue
            }
            let time = requiredTime(
                fields.time, key: fields.timeSpelling, owner: "this control point", missingCode: .badParameterEntry,
                origin: origin)
            guard let number = fields.value, let time else { continue }
            if let id { checkRange(number, range: id.range, name: id.rawValue, key: ParameterKey.value.rawValue) }
            if let previous = points.last, time < previous.relativeTime, !reportedUnsorted {
                reportedUnsorted = true
                report(
                    .warning, .unsortedControlPoints,
                    "control point times go backwards (\(time) s after \(previous.relativeTime) s); they are played in time order",
                    at: .key(fields.timeSpelling))
            }
            points.append(HapticParameterCurve.ControlPoint(relativeTime: time, value: number))
        }
        return points
    }
}
