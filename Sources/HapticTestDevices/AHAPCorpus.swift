// The corpus of real-world AHAP files: an extra check for the unit tests, benchmarks and kernel tests, never a
// file they depend on. It is not part of this package, so whoever runs them names it in `AHAP_CORPUS`, the one
// way it is found (scripts/vm-run copies it into the qemu guest only when the host names it). Without it, what
// needs it is reported as skipped with `unsetReason`; a name that is not the corpus is an error, never a skip.
// The package's own AHAP files are `AHAPFixtures`.
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

package enum AHAPCorpus {
    /// Why the corpus cannot be read.
    package struct Missing: Error, CustomStringConvertible {
        package let description: String
    }

    /// The environment variable that names the corpus folder.
    package static let variable = "AHAP_CORPUS"

    /// Why corpus checks are skipped when `variable` is unset.
    package static let unsetReason =
        "\(variable) is not set: it names a folder of real-world AHAP files (for example a checkout's shared/ahap)"

    /// Whether the environment names a corpus (rightly or not: `root()` says which).
    package static var isNamed: Bool {
        !(ProcessInfo.processInfo.environment[variable] ?? "").isEmpty
    }

    /// The folder `AHAP_CORPUS` names, symbolic links resolved (a folder enumerator does not descend into a link);
    /// it must hold the corpus's `SOURCES.md`.
    package static func root() throws(Missing) -> URL {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else {
            throw Missing(description: unsetReason)
        }
        guard FileManager.default.fileExists(atPath: path + "/SOURCES.md") else {
            throw Missing(description: "\(variable)=\(path) is not the AHAP corpus (it has no SOURCES.md)")
        }
        return URL(fileURLWithPath: path).resolvingSymlinksInPath()
    }

    /// Every `.ahap` file under the corpus folder, sorted by path.
    package static func files() throws(Missing) -> [URL] {
        let root = try root()
        let files = AHAPFixtures.ahapFiles(under: root)
        guard !files.isEmpty else { throw Missing(description: "the AHAP corpus \(root.path) holds no .ahap file") }
        return files
    }
}
