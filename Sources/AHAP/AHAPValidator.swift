// The public entry points: read and validate AHAP from bytes or a dictionary; write it back. Files are read by
// AHAPFiles, which hands their bytes here.
//
// Foundation comes in as FoundationEssentials where it exists (Linux, Swift 6): the module needs only `Data`, and
// the slimmer module keeps the platform C library overlays out of the pure layer.
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Everything learnt from one AHAP document: the pattern if it loads, and every problem found.
public struct AHAPReport: Sendable, Hashable {
    /// The pattern, or `nil` when the document has errors (it would not load in Core Haptics either).
    public var pattern: HapticPattern?
    /// Errors and warnings, in document order (syntax problems first).
    public var diagnostics: [AHAPDiagnostic]
    /// Problems found past `AHAPLimits.maximumDiagnostics`, counted but not in `diagnostics` (whose last entry,
    /// a `diagnostics-truncated` warning, says how many).
    public var unlistedCount: Int

    public init(pattern: HapticPattern?, diagnostics: [AHAPDiagnostic], unlistedCount: Int = 0) {
        self.pattern = pattern
        self.diagnostics = diagnostics
        self.unlistedCount = unlistedCount
    }

    public var errors: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .error } }
    public var warnings: [AHAPDiagnostic] { diagnostics.filter { $0.severity == .warning } }
    /// Whether the document loads (no errors; warnings allowed, as in Core Haptics).
    public var loads: Bool { pattern != nil }
    /// Whether the document passes `haptics validate --strict`: it loads and has no warnings.
    public var passesStrict: Bool { loads && !diagnostics.contains { $0.severity == .warning } }
}

/// Parses and validates AHAP documents. Stateless; every function is safe to call from any thread.
public enum AHAPValidator {
    /// Reads AHAP text (UTF-8 JSON, with trailing commas and comments tolerated and reported as warnings).
    public static func validate(data: Data, limits: AHAPLimits = .default) -> AHAPReport {
        data.withUnsafeBytes { bytes in validate(bytes: bytes, limits: limits) }
    }

    /// One `unreadable-file` error giving `reason`.
    package static func unreadable(_ reason: String) -> AHAPReport {
        AHAPReport(
            pattern: nil,
            diagnostics: [
                AHAPDiagnostic(
                    severity: .error, code: .unreadableFile, path: "", message: "cannot read the file: \(reason)")
            ])
    }

    /// Validates a property-list-style dictionary, as `CHHapticPattern(dictionary:)` takes: `String` keys,
    /// values `String`, numbers (Swift numeric types or `NSNumber`), `Bool`, arrays and dictionaries.
    public static func validate(dictionary: [String: Any], limits: AHAPLimits = .default) -> AHAPReport {
        var path: [JSONPathComponent] = []
        var count = 0
        let tree: JSONValue
        do {
            tree = try PatternEncoder.jsonValue(of: dictionary, path: &path, depth: 0, limits: limits, count: &count)
        } catch {
            let diagnostic = AHAPDiagnostic(
                severity: .error, code: error.code, path: error.path.formatted, message: error.message)
            return AHAPReport(pattern: nil, diagnostics: [diagnostic])
        }
        var decoder = PatternDecoder(limits: limits)
        let pattern = decoder.decodeDocument(tree)
        let unlisted = decoder.finish()
        return AHAPReport(pattern: pattern, diagnostics: decoder.diagnostics, unlistedCount: unlisted)
    }

    /// Validates AHAP text in `bytes`; `soundFileProblem` says what is wrong with the sound file an `AudioCustom`
    /// event names, or nil (the file reader's check; nil: sound files are not looked for).
    package static func validate(
        bytes: UnsafeRawBufferPointer, limits: AHAPLimits, soundFileProblem: ((String) -> String?)? = nil
    ) -> AHAPReport {
        let parsed: (value: JSONValue, leniencies: [JSONLeniency], omittedLeniencies: Int)
        do {
            parsed = try JSONReader.parse(bytes, limits: limits)
        } catch {
            let position = TextPosition.locate([error.offset], in: bytes)[0]
            let diagnostic = AHAPDiagnostic(
                severity: .error, code: error.code, path: error.path.formatted, message: error.message,
                line: position.line, column: position.column)
            return AHAPReport(pattern: nil, diagnostics: [diagnostic])
        }
        var decoder = PatternDecoder(limits: limits, soundFileProblem: soundFileProblem)
        let positions = TextPosition.locate(parsed.leniencies.map(\.offset), in: bytes)
        for (leniency, position) in zip(parsed.leniencies, positions) {
            decoder.report(
                .warning, .lenientSyntax, leniency.message, line: position.line, column: position.column,
                path: leniency.path)
        }
        decoder.countOmitted(parsed.omittedLeniencies)
        let pattern = decoder.decodeDocument(parsed.value)
        let unlisted = decoder.finish()
        return AHAPReport(pattern: pattern, diagnostics: decoder.diagnostics, unlistedCount: unlisted)
    }
}

/// 1-based line and column (in bytes) of offsets into a text.
struct TextPosition {
    var line: Int
    var column: Int

    /// Positions of `offsets`, in the order given, found in one pass over the text (the offsets are sorted
    /// first: a comment inside a trailing comma's gap is recorded before the comma, so they can arrive out of
    /// order, and rescanning from the top for each would make a hostile file quadratic).
    static func locate(_ offsets: [Int], in bytes: UnsafeRawBufferPointer) -> [TextPosition] {
        var positions = Array(repeating: TextPosition(line: 1, column: 1), count: offsets.count)
        let order = offsets.indices.sorted { offsets[$0] < offsets[$1] }
        var line = 1
        var lineStart = 0
        var scanned = 0
        for index in order {
            let target = Swift.min(Swift.max(offsets[index], 0), bytes.count)
            while scanned < target {
                if bytes[scanned] == UInt8(ascii: "\n") {
                    line += 1
                    lineStart = scanned + 1
                }
                scanned += 1
            }
            positions[index] = TextPosition(line: line, column: target - lineStart + 1)
        }
        return positions
    }
}

extension HapticPattern {
    /// Reads a pattern from AHAP text, like `CHHapticPattern(contentsOf:)` on bytes. Warnings are dropped; use
    /// `AHAPValidator.validate(data:)` to see them.
    public init(data: Data, limits: AHAPLimits = .default) throws(AHAPError) {
        self = try Self.loaded(from: AHAPValidator.validate(data: data, limits: limits))
    }

    /// Reads a pattern from a property-list-style dictionary, like `CHHapticPattern(dictionary:)`.
    public init(dictionary: [String: Any], limits: AHAPLimits = .default) throws(AHAPError) {
        self = try Self.loaded(from: AHAPValidator.validate(dictionary: dictionary, limits: limits))
    }

    /// The pattern a report read, or its errors thrown (warnings dropped): every `HapticPattern` reader's end.
    package static func loaded(from report: AHAPReport) throws(AHAPError) -> HapticPattern {
        guard let pattern = report.pattern else { throw AHAPError(diagnostics: report.diagnostics) }
        return pattern
    }

    /// The pattern as AHAP text (UTF-8 JSON), pretty-printed by default. Throws when a value cannot be written
    /// as JSON (NaN or an infinity, which only a pattern built in code can hold).
    public func ahapData(prettyPrinted: Bool = true) throws(AHAPError) -> Data {
        do {
            return Data(try JSONWriter.encode(PatternEncoder.tree(of: self), prettyPrinted: prettyPrinted))
        } catch {
            throw AHAPError(diagnostics: [
                AHAPDiagnostic(
                    severity: .error, code: .nonFiniteNumber, path: error.path.formatted,
                    message: "NaN and Infinity cannot be written as AHAP")
            ])
        }
    }

    /// The pattern as a property-list-style dictionary, like `CHHapticPattern.exportDictionary()`.
    public func exportDictionary() -> [String: Any] {
        (PatternEncoder.plistValue(of: PatternEncoder.tree(of: self)) as? [String: Any]) ?? [:]
    }

    /// The problems a pattern built in code would have when written and read back (negative times, values out
    /// of range, unknown identifiers, a text past the reader's limits...): the validator run over `ahapData()`.
    public func validationDiagnostics(limits: AHAPLimits = .default) -> [AHAPDiagnostic] {
        let tree = PatternEncoder.tree(of: self)
        // The text `ahapData()` writes, read back: the reader judges its size, its count of values and the length
        // of its strings as it judges a file's. NaN or an infinity, which no text holds, is named in the tree.
        guard let text = try? JSONWriter.encode(tree, prettyPrinted: true) else {
            return Self.diagnostics(of: tree, limits)
        }
        return text.withUnsafeBytes { AHAPValidator.validate(bytes: $0, limits: limits).diagnostics }
    }

    /// What the validator says of a pattern's values, without writing them as text.
    private static func diagnostics(of tree: JSONValue, _ limits: AHAPLimits) -> [AHAPDiagnostic] {
        var decoder = PatternDecoder(limits: limits)
        _ = decoder.decodeDocument(tree)
        _ = decoder.finish()
        return decoder.diagnostics
    }

    /// The codes that say a pattern is beyond what this package plays: its size or its numbers.
    package static let boundCodes: Set<AHAPDiagnostic.Code> = [.limitExceeded, .timeTooLarge, .nonFiniteNumber]

    /// The first diagnostic about the pattern's size or numbers (`boundCodes`) that the validator reports of its
    /// values (its counts of entries, parameters and points, its times and numbers; not the length of the text it
    /// would write, which is no bound of playing it), or nil. A pattern far inside every bound (what apps play
    /// many times a second: taps, the feedback vocabulary, files the reader already checked) is cleared by one
    /// pass over its values; only one near or past a bound pays for the validator.
    package func boundsDiagnostic(limits: AHAPLimits = .default) -> AHAPDiagnostic? {
        if isFarInsideBounds(limits) { return nil }
        return Self.diagnostics(of: PatternEncoder.tree(of: self), limits).first { Self.boundCodes.contains($0.code) }
    }

    /// Whether every number is finite, every time within `maximumTime`, and every count and string inside
    /// `limits`, with an upper bound on the JSON values the written pattern would hold inside them too.
    private func isFarInsideBounds(_ limits: AHAPLimits) -> Bool {
        let parametersPerEvent = Swift.min(limits.maximumEventParameters, 16)
        let points = parameterCurves.reduce(0) { $0 + $1.controlPoints.count }
        let metadataCount = metadata?.entries.count ?? 0
        // An event is at most 10 values plus 3 per parameter; a parameter 6, a curve 8 plus 4 per point.
        let values =
            events.count * (10 + 3 * parametersPerEvent) + dynamicParameters.count * 6 + parameterCurves.count * 8
            + points * 4 + metadataCount * 2 + 16
        guard events.count + dynamicParameters.count + parameterCurves.count <= limits.maximumPatternEntries,
            values < limits.maximumJSONValues, limits.maximumDepth >= 6
        else { return false }
        func inside(_ time: AHAPTime) -> Bool { time.isFinite && time <= Self.maximumTime }
        let shortText = { (text: String?) in (text?.utf8.count ?? 0) <= Swift.min(limits.maximumStringBytes, 4_096) }
        let eventsInside = events.allSatisfy { event in
            inside(event.relativeTime) && (event.duration?.isFinite ?? true) && shortText(event.waveformPath)
                && event.parameters.count <= parametersPerEvent && event.parameters.allSatisfy { $0.value.isFinite }
        }
        let curvesInside = parameterCurves.allSatisfy { curve in
            curve.controlPoints.count <= limits.maximumControlPoints && inside(curve.relativeTime)
                && curve.controlPoints.allSatisfy { inside(curve.relativeTime + $0.relativeTime) && $0.value.isFinite }
        }
        return eventsInside && curvesInside && (version?.isFinite ?? true)
            && dynamicParameters.allSatisfy { inside($0.relativeTime) && $0.value.isFinite }
            && (metadata?.entries.allSatisfy { shortText($0.key) && shortText($0.value) } ?? true)
    }
}
