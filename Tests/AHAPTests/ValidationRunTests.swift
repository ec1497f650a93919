import Foundation
import Testing
@testable import AHAP

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
