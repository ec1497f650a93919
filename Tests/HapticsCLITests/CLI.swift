import Foundation
import Testing

/// The `haptics` command line end to end, for the tests that run it. `swift build --build-tests` (what
/// `make test` runs first) builds the executable too; a missing binary fails the test rather than skip it.
enum CLI {
    /// The `haptics` of the build these tests come from, beside the test executable (`.build/debug`, or a
    /// sanitizer's build folder): never another build's, possibly older, binary.
    static func binary() throws -> URL {
        let testExecutable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let candidate = URL(fileURLWithPath: testExecutable).deletingLastPathComponent().appendingPathComponent(
            "haptics")
        let found = FileManager.default.isExecutableFile(atPath: candidate.path) ? candidate : nil
        return try #require(
            found, "haptics binary not built; run `swift build --build-tests` first (looked for \(candidate.path))")
    }

    /// Runs the command with `arguments`, or `program` with them (a shell that runs the command as it sets up).
    static func run(
        _ arguments: [String], environment: [String: String] = [:], in directory: URL? = nil,
        through program: String? = nil
    ) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = try program.map { URL(fileURLWithPath: $0) } ?? binary()
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let pipe = Pipe()
        let errorPipe = Pipe()
        process.standardOutput = pipe
        process.standardError = errorPipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        let errors = errorPipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: output, as: UTF8.self), String(decoding: errors, as: UTF8.self)
        )
    }

    /// What `pipe` gives until it holds `text`, or until it closes.
    static func read(_ pipe: Pipe, until text: String) -> Data {
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains(text) {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen += chunk
        }
        return seen
    }

    /// A scratch file holding `json`, removed by `body`'s end.
    static func withFile(_ json: String, _ body: (String) throws -> Void) throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-cli-\(UUID().uuidString).ahap")
        try Data(json.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        try body(file.path)
    }
}
