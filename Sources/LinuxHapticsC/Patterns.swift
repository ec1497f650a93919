// `lh_pattern`: an AHAP pattern read as `haptics validate` reads it, with the validator's lines as the message
// when it does not load.
public import CLinuxHaptics
import AHAPFiles
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The `lh_pattern` object: a loaded pattern, never changed, so any thread may play it.
final class PatternObject: Sendable {
    let pattern: HapticPattern

    init(_ pattern: HapticPattern) {
        self.pattern = pattern
    }

    /// The pattern behind a C caller's `lh_pattern *`.
    static func from(_ handle: OpaquePointer?) throws(CFailure) -> PatternObject {
        guard let handle else { throw CFailure.missing("pattern") }
        return Handle.object(handle, as: PatternObject.self)
    }
}

/// The pattern `report` found, or the failure that gives `lines` (the validator's, one per error) as its
/// message: `LH_ERROR_FILE` when the file could not be read at all, `LH_ERROR_INVALID_PATTERN` otherwise.
func loadedPattern(_ report: AHAPReport, lines: [String]) throws(CFailure) -> PatternObject {
    if let pattern = report.pattern { return PatternObject(pattern) }
    let errors = report.errors
    if errors.contains(where: { $0.code == .unreadableFile }) {
        throw CFailure(LH_ERROR_FILE, lines.joined(separator: "\n"))
    }
    throw CFailure(LH_ERROR_INVALID_PATTERN, lines.joined(separator: "\n"), jsonPath: errors.first?.path ?? "")
}

@_cdecl("lh_pattern_load_file")
public func lhPatternLoadFile(
    _ path: UnsafePointer<CChar>?, _ pattern: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        guard let path else { throw CFailure.missing("path") }
        guard let pattern else { throw CFailure.missing("pattern") }
        // A name that is not UTF-8 would be read with its odd bytes replaced, naming another file: say so.
        guard let name = String(validatingCString: path) else {
            throw CFailure(
                LH_ERROR_INVALID_ARGUMENT,
                "path is not UTF-8 text, which this call needs; read the file yourself and pass its bytes to "
                    + "lh_pattern_load_data")
        }
        // The run `haptics validate PATH` makes, so the message is its lines.
        let result = AHAPValidationRun(paths: [name], strict: false).results[0]
        pattern.pointee = Handle.retain(try loadedPattern(result.report, lines: result.lines(result.report.errors)))
    }
}

@_cdecl("lh_pattern_load_data")
public func lhPatternLoadData(
    _ bytes: UnsafeRawPointer?, _ length: UInt, _ pattern: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        guard bytes != nil || length == 0 else { throw CFailure.missing("bytes") }
        guard let pattern else { throw CFailure.missing("pattern") }
        // `length` is the caller's `size_t`: measured against the limit before a byte is read, so a length
        // past the buffer, or past `Int`, is refused rather than copied.
        let limit = AHAPLimits.default.maximumDocumentBytes
        guard length <= UInt(limit) else {
            let tooLong = AHAPDiagnostic(
                severity: .error, code: .limitExceeded, path: "",
                message: "the document is \(length) bytes, more than the limit of \(limit)")
            throw CFailure(LH_ERROR_INVALID_PATTERN, "\(tooLong)")
        }
        let report = AHAPValidator.validate(data: bytes.map { Data(bytes: $0, count: Int(length)) } ?? Data())
        pattern.pointee = Handle.retain(try loadedPattern(report, lines: report.errors.map { "\($0)" }))
    }
}

@_cdecl("lh_pattern_duration")
public func lhPatternDuration(_ pattern: OpaquePointer?) -> Double {
    (try? PatternObject.from(pattern))?.pattern.duration ?? 0
}

@_cdecl("lh_pattern_free")
public func lhPatternFree(_ pattern: OpaquePointer?) {
    if let pattern { Handle.release(pattern, as: PatternObject.self) }
}
