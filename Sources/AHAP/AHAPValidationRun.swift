// What `haptics validate` reports, built here (pure, testable) so the command only prints and exits; AHAPFiles
// validates the files named.
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The validation of several files: per-file reports, the verdict, and the two output formats of
/// `haptics validate` (one line per problem plus a summary, or JSON).
public struct AHAPValidationRun: Sendable {
    public struct FileResult: Sendable, Hashable {
        /// The file as the user named it.
        public var file: String
        public var report: AHAPReport

        public init(file: String, report: AHAPReport) {
            self.file = file
            self.report = report
        }

        /// The line `haptics validate` prints for each of `diagnostics` (this file's): `file: path: severity:
        /// message [code]`.
        public func lines(_ diagnostics: [AHAPDiagnostic]) -> [String] {
            diagnostics.map { "\(file.shownInMessage): \($0)" }
        }
    }

    public var results: [FileResult]
    /// Whether warnings count as failures (`--strict`).
    public var strict: Bool

    public init(results: [FileResult], strict: Bool) {
        self.results = results
        self.strict = strict
    }

    /// Whether a file fails under this run's rules: it does not load, or (strict) it has warnings.
    public func fails(_ result: FileResult) -> Bool {
        strict ? !result.report.passesStrict : !result.report.loads
    }

    public var failedCount: Int { results.filter(fails).count }

    /// 0 when every file passes, 1 when any fails.
    public var exitCode: Int32 { failedCount == 0 ? 0 : 1 }

    /// One `file: path: severity: message [code]` line per problem, then a summary line.
    public var textLines: [String] {
        var lines: [String] = []
        for result in results {
            lines += result.lines(result.report.diagnostics)
        }
        lines.append(summary)
        return lines
    }

    /// `3 files checked: 2 passed, 1 failed; 1 error, 4 warnings` (then `, 500 more not listed` when a file had
    /// more problems than the diagnostics limit, and `(strict: warnings fail)` when strict). The counts are of
    /// the listed problems, the `diagnostics-truncated` warnings among them.
    public var summary: String {
        let errors = results.reduce(0) { $0 + $1.report.errors.count }
        let warnings = results.reduce(0) { $0 + $1.report.warnings.count }
        let unlisted = unlistedCount
        let failed = failedCount
        func plural(_ count: Int, _ word: String) -> String { "\(count) \(word)\(count == 1 ? "" : "s")" }
        var text = "\(plural(results.count, "file")) checked: \(results.count - failed) passed, \(failed) failed; "
        text += "\(plural(errors, "error")), \(plural(warnings, "warning"))"
        if unlisted > 0 { text += ", \(unlisted) more not listed" }
        if strict { text += " (strict: warnings fail)" }
        return text
    }

    /// Problems found past the diagnostics limit in all files, counted but not listed.
    public var unlistedCount: Int { results.reduce(0) { $0 + $1.report.unlistedCount } }

    /// The findings as pretty-printed JSON: `{"strict":…,"files":[{"file","loads","passed","diagnostics":[…]}],
    /// "summary":{…}}`.
    public var jsonText: String {
        let files: [JSONValue] = results.map { result in
            let diagnostics: [JSONValue] = result.report.diagnostics.map { diagnostic in
                var members: [JSONMember] = [
                    JSONMember(key: "severity", value: .string(diagnostic.severity.rawValue)),
                    JSONMember(key: "code", value: .string(diagnostic.code.rawValue)),
                    JSONMember(key: "path", value: .string(diagnostic.path)),
                    JSONMember(key: "message", value: .string(diagnostic.message)),
                ]
                if let code = diagnostic.coreHapticsCode {
                    members.append(JSONMember(key: "coreHapticsCode", value: .number(Double(code.rawValue))))
                }
                if let line = diagnostic.line, let column = diagnostic.column {
                    members.append(JSONMember(key: "line", value: .number(Double(line))))
                    members.append(JSONMember(key: "column", value: .number(Double(column))))
                }
                return .object(members)
            }
            return .object([
                JSONMember(key: "file", value: .string(result.file)),
                JSONMember(key: "loads", value: .bool(result.report.loads)),
                JSONMember(key: "passed", value: .bool(!fails(result))),
                JSONMember(key: "diagnostics", value: .array(diagnostics)),
            ])
        }
        let errors = results.reduce(0) { $0 + $1.report.errors.count }
        let warnings = results.reduce(0) { $0 + $1.report.warnings.count }
        let document: JSONValue = .object([
            JSONMember(key: "strict", value: .bool(strict)),
            JSONMember(key: "files", value: .array(files)),
            JSONMember(
                key: "summary",
                value: .object([
                    JSONMember(key: "files", value: .number(Double(results.count))),
                    JSONMember(key: "failed", value: .number(Double(failedCount))),
                    JSONMember(key: "errors", value: .number(Double(errors))),
                    JSONMember(key: "warnings", value: .number(Double(warnings))),
                    JSONMember(key: "unlisted", value: .number(Double(unlistedCount))),
                ])),
        ])
        let bytes = (try? JSONWriter.encode(document, prettyPrinted: true)) ?? []
        return String(decoding: bytes, as: UTF8.self)
    }
}
