import Foundation
import Testing

/// `haptics validate` end to end: the built binary, its output and its exit status. `swift build --build-tests`
/// (what `make test` runs first) builds the executable too; a missing binary fails the test rather than skip it.
@Suite struct ValidateCommandTests {
    private static let packageRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    private func binary() throws -> URL {
        let candidates = [".build/debug/haptics", ".build/release/haptics"].map {
            Self.packageRoot.appendingPathComponent($0)
        }
        let found = candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
        return try #require(
            found,
            "haptics binary not built; run `swift build --build-tests` first (looked in \(candidates.map(\.path)))")
    }

    private func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = try binary()
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = Pipe()
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test func corpusPassesAndStrictFailsOnWarnings() throws {
        let invalidFields = try Corpus.file("lofelt-nicevibrations/invalid_fields.ahap").path
        let hit = try Corpus.file("apple-unityplugins/Effects/Hit.ahap").path
        let lenient = try run(["validate", invalidFields, hit])
        #expect(lenient.status == 0)
        #expect(lenient.output.contains("\(invalidFields): Pattern[1].ParameterCurves: warning:"))
        #expect(lenient.output.hasSuffix("2 files checked: 2 passed, 0 failed; 0 errors, 2 warnings\n"))
        let strict = try run(["validate", "--strict", invalidFields, hit])
        #expect(strict.status == 1)
        #expect(try run(["validate", "--strict", hit]).status == 0)
    }

    @Test func brokenAndMissingFilesFail() throws {
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-cli-\(UUID().uuidString).ahap")
        try Data(#"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"Buzz"}}]}"#.utf8).write(to: broken)
        defer { try? FileManager.default.removeItem(at: broken) }
        let result = try run(["validate", broken.path, "/nonexistent/x.ahap"])
        #expect(result.status == 1)
        #expect(
            result.output.contains("\(broken.path): Pattern[0].Event.EventType: error: \"Buzz\" is not an event type"))
        #expect(result.output.contains("-4821]"))
        #expect(result.output.contains("/nonexistent/x.ahap: error: cannot read the file"))
    }

    @Test func jsonOutputParses() throws {
        let file = try Corpus.file("lofelt-nicevibrations/invalid_fields.ahap").path
        let result = try run(["validate", "--json", file])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.first?["file"] as? String == file)
    }

    @Test func noFilesIsAUsageError() throws {
        let result = try run(["validate"])
        #expect(result.status != 0 && result.status != 1)
    }
}
