import Foundation
import Testing
@testable import AHAP
import AHAPFiles

/// The logic behind `haptics validate`: lines, summary, JSON and exit code.
@Suite struct ValidationRunTests {
    private func temporaryFile(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-test-\(UUID().uuidString).ahap")
        try text.utf8Data.write(to: url)
        return url.path
    }

    @Test func linesNameFileAndPathThenSummarise() throws {
        let good = try Fixtures.file("every-event-and-parameter.ahap").path
        let broken = try temporaryFile(
            #"{"Version":1,"Pattern":[{"Event":{"Time":-1,"EventType":"HapticTransient"}}]}"#)
        defer { try? FileManager.default.removeItem(atPath: broken) }
        let run = AHAPValidationRun(paths: [good, broken], strict: false)
        #expect(run.exitCode == 1)
        #expect(
            run.textLines == [
                "\(broken): Pattern[0].Event.Time: error: Time is negative (-1.0 s) [negative-time, Core Haptics -4822]",
                "2 files checked: 1 passed, 1 failed; 1 error, 0 warnings",
            ])
    }

    @Test func warningsPassUnlessStrict() throws {
        let file = try Fixtures.file("parameter-curves-plural.ahap").path
        let lenient = AHAPValidationRun(paths: [file], strict: false)
        #expect(lenient.exitCode == 0)
        #expect(
            lenient.textLines.first
                == "\(file): Pattern[1].ParameterCurves: warning: \"ParameterCurves\" is not an AHAP key of a Pattern entry; it is ignored [unknown-key]"
        )
        let strict = AHAPValidationRun(paths: [file], strict: true)
        #expect(strict.exitCode == 1)
        #expect(strict.summary.hasSuffix("(strict: warnings fail)"))
    }

    @Test func everyFixturePassesAndMissingFilesFail() throws {
        let paths = try Fixtures.files().map(\.path)
        #expect(AHAPValidationRun(paths: paths, strict: false).exitCode == 0)
        let missing = AHAPValidationRun(paths: paths + ["/nonexistent/x.ahap"], strict: false)
        #expect(missing.exitCode == 1)
        #expect(
            missing.textLines.contains(
                "/nonexistent/x.ahap: error: cannot read the file: no such file [unreadable-file]"))
    }

    /// A scalar a terminal does not show as itself: C0 and C1 controls, DEL, bidirectional and zero-width format
    /// characters, line and paragraph separators (listed here by hand, not through the code under test).
    private static func actsOnTheLine(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x200B...0x200F, 0x2028...0x202E, 0x2066...0x2069, 0xFEFF, 0xE0001: true
        default: false
        }
    }

    @Test func keysValuesAndFileNamesCannotForgeOrHideALineOfTheTextOutput() throws {
        // Escapes in the JSON text (JSON refuses raw controls below U+0020), raw characters from DEL up.
        let text = #"""
            {"Version":1,"\nevil.ahap: error: forged [not-json]\u001b[2K":1,"Meta\u202edata":null,"Pattern":[
              {"Event":{"Time":0,"EventType":"HapticTransient","EventParameters":[
                {"ParameterID":"Intensity\#u{85}\#u{E0001}","ParameterValue":1}]}},
              {"Event":{"Time":1,"EventType":"Haptic\#u{7F}Transient\#u{2028}"}}]}
            """#
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a\nb.ahap").path
        try text.utf8Data.write(to: URL(fileURLWithPath: file))
        let run = AHAPValidationRun(paths: [file], strict: false)
        let report = try #require(run.results.first?.report)
        #expect(report.diagnostics.count == 4)
        #expect(run.textLines.count == report.diagnostics.count + 1)
        for line in run.textLines {
            #expect(!line.unicodeScalars.contains(where: Self.actsOnTheLine), "\(line.debugDescription)")
        }
        let shownFile = file.replacingOccurrences(of: "\n", with: "\\n")
        #expect(
            run.textLines.contains(
                #""\#(shownFile)": ["\nevil.ahap: error: forged [not-json]\u001b[2K"]: warning: "\nevil.ahap: error: forged [not-json]\u001b[2K" is not an AHAP key of the document; it is ignored [unknown-key]"#
            ))
        #expect(run.textLines.contains { $0.contains(#""Meta\u202edata" is null"#) })
        #expect(run.textLines.contains { $0.contains(#""Haptic\u007fTransient\u2028" is not an event type"#) })
        #expect(run.textLines.contains { $0.contains(#""Intensity\u0085\udb40\udc01" is not an event parameter"#) })
    }

    @Test func theSummaryCountsProblemsPastTheDiagnosticsLimit() throws {
        let unknownKeys = (0..<1_200).map { #""extra\#($0)":1"# }.joined(separator: ",")
        let file = try temporaryFile(
            #"{"Version":1,\#(unknownKeys),"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let run = AHAPValidationRun(paths: [file], strict: false)
        let report = try #require(run.results.first?.report)
        #expect(report.diagnostics.count == AHAPLimits.default.maximumDiagnostics + 1)
        #expect(report.unlistedCount == 200)
        #expect(run.summary == "1 file checked: 1 passed, 0 failed; 0 errors, 1001 warnings, 200 more not listed")
        let object = try #require(try JSONSerialization.jsonObject(with: run.jsonText.utf8Data) as? [String: Any])
        #expect((object["summary"] as? [String: Any])?["unlisted"] as? Int == 200)
    }

    @Test func jsonOutputIsMachineReadable() throws {
        let file = try Fixtures.file("parameter-curves-plural.ahap").path
        let run = AHAPValidationRun(paths: [file, "/nonexistent/x.ahap"], strict: false)
        let object = try #require(try JSONSerialization.jsonObject(with: run.jsonText.utf8Data) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files[0]["loads"] as? Bool == true)
        #expect(files[1]["passed"] as? Bool == false)
        let diagnostics = try #require(files[0]["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["path"] as? String == "Pattern[1].ParameterCurves")
        #expect(diagnostics.first?["code"] as? String == "unknown-key")
        let summary = try #require(object["summary"] as? [String: Any])
        #expect(summary["failed"] as? Int == 1)
        #expect(run.jsonText.contains("\"failed\": 1,"))
    }
}
