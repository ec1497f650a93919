// The corpus of real-world AHAP files that the benchmarks and the kernel tests read. It is not part of this
// package, so whoever runs them says where it is, in `AHAP_CORPUS`: scripts/bench, scripts/kernel-tests and
// scripts/soak set it (in the qemu bench, to the guest's copy).
package import Foundation

package enum AHAPCorpus {
    /// Why the corpus cannot be read.
    package struct Missing: Error, CustomStringConvertible {
        package let description: String
    }

    /// The environment variable that names the corpus folder.
    package static let variable = "AHAP_CORPUS"

    /// The folder `AHAP_CORPUS` names; it must hold the corpus's `SOURCES.md`.
    package static func root() throws(Missing) -> URL {
        guard let path = ProcessInfo.processInfo.environment[variable], !path.isEmpty else {
            throw Missing(description: "\(variable) is not set: it names the folder of real-world AHAP files")
        }
        guard FileManager.default.fileExists(atPath: path + "/SOURCES.md") else {
            throw Missing(description: "\(variable)=\(path) is not the AHAP corpus (it has no SOURCES.md)")
        }
        return URL(fileURLWithPath: path).standardizedFileURL
    }

    /// Every `.ahap` file under the corpus folder, sorted by path.
    package static func files() throws(Missing) -> [URL] {
        let root = try root()
        guard let enumerator = FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil) else {
            throw Missing(description: "the AHAP corpus \(root.path) cannot be listed")
        }
        var files: [URL] = []
        for case let url as URL in enumerator where url.pathExtension == "ahap" { files.append(url) }
        guard !files.isEmpty else { throw Missing(description: "the AHAP corpus \(root.path) holds no .ahap file") }
        return files.sorted { $0.path < $1.path }
    }
}
