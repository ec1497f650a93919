// The package's own AHAP fixtures, Tests/Fixtures/ahap: small files written for the tests, each showing a quirk
// that real files have (docs/ahap.md, "Test fixtures", lists which file shows which), and studio-export.ahap, the
// parse benchmark's large input. The tests, benchmarks and fuzz seeds always have them; the real-world corpus
// (`AHAPCorpus`) is an extra check on top.
package import AHAP
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

package enum AHAPFixtures {
    /// The folder's place inside the package.
    package static let relativePath = "Tests/Fixtures/ahap"

    /// The fixture folder: found from this source file's place in the package (unit tests and the host's
    /// benchmarks), or else under the working directory (the qemu guest gets a copy of it there).
    package static func root() throws(AHAPCorpus.Missing) -> URL {
        let package = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()  // HapticTestDevices
            .deletingLastPathComponent()  // Sources
            .deletingLastPathComponent()  // the package
        let candidates = [
            package.appendingPathComponent(relativePath, isDirectory: true),
            URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent(
                relativePath, isDirectory: true),
        ]
        guard let found = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }) else {
            throw AHAPCorpus.Missing(
                description:
                    "the AHAP fixtures are missing: looked in \(candidates.map(\.path).joined(separator: ", "))")
        }
        return found.standardizedFileURL
    }

    /// Every `.ahap` fixture, sorted by path.
    package static func files() throws(AHAPCorpus.Missing) -> [URL] {
        ahapFiles(under: try root())
    }

    /// The fixture called `name` (for example "studio-export.ahap").
    package static func file(_ name: String) throws(AHAPCorpus.Missing) -> URL {
        let url = try root().appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw AHAPCorpus.Missing(description: "no AHAP fixture \(url.path)")
        }
        return url
    }

    /// What a benchmark measures over: the corpus when `AHAP_CORPUS` names it, otherwise the fixtures; with
    /// `corpusOrFixturesName` for its report and the folder the files' names are relative to.
    package static func corpusOrFixtures() throws(AHAPCorpus.Missing) -> (name: String, root: URL, files: [URL]) {
        if AHAPCorpus.isNamed { return (corpusOrFixturesName, try AHAPCorpus.root(), try AHAPCorpus.files()) }
        return (corpusOrFixturesName, try root(), try files())
    }

    /// Which set `corpusOrFixtures` reads, for reports: "corpus" or "fixtures".
    package static var corpusOrFixturesName: String { AHAPCorpus.isNamed ? "corpus" : "fixtures" }

    /// The `.ahap` files under `folder`, at any depth, sorted by path.
    static func ahapFiles(under folder: URL) -> [URL] {
        // FoundationEssentials' listing by path (the URL enumerator is Foundation's, which the CLI does not link).
        let paths = (try? FileManager.default.subpathsOfDirectory(atPath: folder.path)) ?? []
        return paths.filter { $0.hasSuffix(".ahap") }.map { folder.appendingPathComponent($0) }.sorted {
            $0.path < $1.path
        }
    }
}

extension AHAPFixtures {
    /// One continuous event from time 0, flat at `intensity` and `sharpness`: the tone the device tests and
    /// benchmarks play (sharpness 0.5 is a 122 Hz carrier on voice coils, and a split over both motors).
    package static func tone(seconds: Double, intensity: Double = 1, sharpness: Double = 0.5) -> HapticPattern {
        single(.hapticContinuous, intensity: intensity, sharpness: sharpness, duration: seconds)
    }

    /// One transient at time 0 at `intensity` and `sharpness`: a tap.
    package static func tap(intensity: Double = 1, sharpness: Double = 0.5) -> HapticPattern {
        single(.hapticTransient, intensity: intensity, sharpness: sharpness, duration: nil)
    }

    private static func single(
        _ type: HapticEvent.EventType, intensity: Double, sharpness: Double, duration: Double?
    ) -> HapticPattern {
        HapticPattern(
            events: [
                HapticEvent(
                    type: type,
                    parameters: [
                        HapticEventParameter(parameterID: .hapticIntensity, value: intensity),
                        HapticEventParameter(parameterID: .hapticSharpness, value: sharpness),
                    ], relativeTime: 0, duration: duration)
            ], parameters: [])
    }
}
