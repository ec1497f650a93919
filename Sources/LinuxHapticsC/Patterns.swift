// `lh_pattern`: an AHAP pattern read as `haptics validate` reads it, with the validator's lines as the message
// when it does not load.
public import CLinuxHaptics
import AHAP
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
        // The run `haptics validate PATH` makes, so the message is its lines.
        let result = AHAPValidationRun(paths: [String(cString: path)], strict: false).results[0]
        pattern.pointee = Handle.retain(try loadedPattern(result.report, lines: result.lines(result.report.errors)))
    }
}

@_cdecl("lh_pattern_load_data")
public func lhPatternLoadData(
    _ bytes: UnsafeRawPointer?, _ length: Int, _ pattern: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        guard bytes != nil || length == 0 else { throw CFailure.missing("bytes") }
        guard let pattern else { throw CFailure.missing("pattern") }
        let data = bytes.map { Data(bytes: $0, count: length) } ?? Data()
        let report = AHAPValidator.validate(data: data)
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
