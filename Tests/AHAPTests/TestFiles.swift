import Foundation
import HapticTestDevices
import Testing

/// The package's own AHAP fixtures (`Tests/Fixtures/ahap`, `AHAPFixtures`): every test that needs AHAP files
/// reads these, so a clone with nothing beside it runs them all.
enum Fixtures {
    /// The number of `.ahap` fixtures; a different count means one was added or lost without its tests.
    static let expectedFileCount = 10

    /// Every `.ahap` fixture, sorted by path.
    static func files() throws -> [URL] {
        let files = try AHAPFixtures.files()
        try #require(files.count == expectedFileCount, "expected \(expectedFileCount) fixtures, found \(files.count)")
        return files
    }

    static func file(_ name: String) throws -> URL { try AHAPFixtures.file(name) }

    static func name(_ url: URL) -> String { url.lastPathComponent }
}

/// The real-world corpus that `AHAP_CORPUS` names (`AHAPCorpus`), an extra check on top of the fixtures. Tests
/// that read it carry the `.corpus` trait: without `AHAP_CORPUS` they are reported skipped with the reason; with
/// it, a folder that is not the corpus fails them.
enum Corpus {
    /// The number of `.ahap` files in the corpus (21 Apple samples, 15 Lofelt test files); a different count
    /// means the corpus moved or changed.
    static let expectedFileCount = 36

    /// Every `.ahap` file, sorted by relative path.
    static func files() throws -> [URL] {
        let files = try AHAPCorpus.files()
        try #require(
            files.count == expectedFileCount, "expected \(expectedFileCount) corpus files, found \(files.count)")
        return files
    }

    static func file(_ relativePath: String) throws -> URL {
        let url = try AHAPCorpus.root().appendingPathComponent(relativePath)
        try #require(FileManager.default.fileExists(atPath: url.path), "corpus file missing: \(url.path)")
        return url
    }

    static func name(_ url: URL) -> String {
        guard let root = try? AHAPCorpus.root().path else { return url.path }
        return String(url.path.dropFirst(root.count + 1))
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when `AHAP_CORPUS` names a corpus; otherwise it is reported skipped, with the reason.
    static var corpus: Self { .enabled(if: AHAPCorpus.isNamed, Comment(rawValue: AHAPCorpus.unsetReason)) }
}

extension String {
    var utf8Data: Data { Data(utf8) }
}
