// The JSON reader, the pattern decoder and the validator, on arbitrary bytes.
import AHAP
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Whatever loads must come back unchanged through both writers (AHAP text and the property-list dictionary),
/// and every report must be consistent with itself.
package enum AHAPFuzzing {
    package static func run(_ bytes: UnsafeRawBufferPointer) {
        let report = AHAPValidator.validate(data: Data(bytes))
        expect(
            report.loads == report.errors.isEmpty,
            "loads: \(report.loads), yet \(report.errors.count) errors among \(report.diagnostics.count) diagnostics")
        for diagnostic in report.diagnostics {
            expect(!diagnostic.message.isEmpty, "diagnostic \(diagnostic.code) has no message")
            expect((diagnostic.line ?? 1) >= 1 && (diagnostic.column ?? 1) >= 1, "position of \(diagnostic)")
        }
        guard let pattern = report.pattern else { return }
        // Both layouts of the writer, chosen by the input so that each gets half of the runs.
        checkRoundTrips(pattern, prettyPrinted: bytes.count.isMultiple(of: 2))
    }

    static func checkRoundTrips(_ pattern: HapticPattern, prettyPrinted: Bool) {
        let text: Data
        do {
            text = try pattern.ahapData(prettyPrinted: prettyPrinted)
        } catch {
            fatalError("invariant broken: a pattern that loaded cannot be written: \(error)")
        }
        let reread = AHAPValidator.validate(data: text)
        expect(reread.pattern == pattern, "pattern -> AHAP text -> pattern changed it: \(reread.errors.prefix(3))")
        let fromDictionary = AHAPValidator.validate(dictionary: pattern.exportDictionary())
        expect(fromDictionary.pattern == pattern, "pattern -> dictionary -> pattern changed it")
        let errors = pattern.validationDiagnostics().filter { $0.severity == .error }
        expect(errors.isEmpty, "a pattern that loaded has errors once written: \(errors.prefix(3))")
    }
}
