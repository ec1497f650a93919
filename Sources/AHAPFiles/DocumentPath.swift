// A document the user named, as a URL: the file it names, and its bytes.
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif
package import LinuxSystem

extension DocumentFile {
    /// The file `path` names as the system reads it: a relative path is put after `directory` as text. A URL
    /// relative to that directory drops each `..` with the component before it (RFC 3986), and after a symbolic
    /// link `link/..` is the folder of the link's target, not the folder the link is in. When the directory is not
    /// known (the current one was removed), the path is left relative (a URL with no scheme), and read from the
    /// current folder, as the system reads it (`..` of a removed folder is still its parent).
    package static func url(
        ofPath path: String, from directory: String = FileManager.default.currentDirectoryPath
    ) -> URL {
        guard !path.hasPrefix("/"), directory.hasPrefix("/") else { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: directory.hasSuffix("/") ? directory + path : directory + "/" + path)
    }

    /// The bytes of the document `url` names, read as `read(_:maximumBytes:)` reads a path. A URL that names no
    /// local file (`https:`, or another host: `file://host/...`, `//host/...`) is refused: its path is not read from
    /// the local disk as if it were one. Its path is
    /// read as written, a final `/` kept: `file.ahap/` names a folder, which a file is not (`url.path` drops it).
    package static func read(_ url: URL, maximumBytes: Int) -> Result<[UInt8], Refusal> {
        let host = url.host(percentEncoded: false).flatMap { $0.isEmpty || $0 == "localhost" ? nil : $0 }
        // A relative path made a URL where the current folder is not known (`url(ofPath:)`): read as written.
        if url.scheme == nil, host == nil, !url.relativePath.isEmpty {
            return read(url.relativePath, maximumBytes: maximumBytes)
        }
        if let host, url.scheme == nil || url.isFileURL {
            return .failure(.unreadable("it names no local file (a file of the host \(host)): pass its bytes"))
        }
        guard url.isFileURL else {
            return .failure(
                .unreadable("it names no local file (a URL of the scheme \(url.scheme ?? "none")): pass its bytes"))
        }
        return read(url.path(percentEncoded: false), maximumBytes: maximumBytes)
    }
}
