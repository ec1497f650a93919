import Foundation
import Testing

/// The real-world AHAP files in `../shared/ahap/` beside the package. Tests that use it
/// fail, never skip, when it is missing: a silently skipped corpus would pass CI while testing nothing.
enum Corpus {
    /// `<package>/../shared/ahap`, found from this file's path (`<package>/Tests/AHAPTests/Corpus.swift`).
    static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // AHAPTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()  // package root
        .deletingLastPathComponent()  // its parent
        .appendingPathComponent("shared/ahap", isDirectory: true)

    /// The number of `.ahap` files in the corpus (21 Apple samples, 15 Lofelt test files); a different
    /// count means the corpus moved or changed.
    static let expectedFileCount = 36

    /// Every `.ahap` file, sorted by relative path.
    static func files() throws -> [URL] {
        let sources = root.appendingPathComponent("SOURCES.md")
        try #require(
            FileManager.default.fileExists(atPath: sources.path),
            "AHAP corpus missing: expected \(sources.path) (clone shared/ beside the package)")
        let enumerator = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
        var files: [URL] = []
        for case let url as URL in enumerator where url.pathExtension == "ahap" { files.append(url) }
        files.sort { $0.path < $1.path }
        try #require(
            files.count == expectedFileCount, "expected \(expectedFileCount) corpus files, found \(files.count)")
        return files
    }

    static func file(_ relativePath: String) throws -> URL {
        let url = root.appendingPathComponent(relativePath)
        try #require(FileManager.default.fileExists(atPath: url.path), "corpus file missing: \(url.path)")
        return url
    }

    static func name(_ url: URL) -> String {
        String(url.path.dropFirst(root.path.count + 1))
    }
}

extension String {
    var utf8Data: Data { Data(utf8) }
}
