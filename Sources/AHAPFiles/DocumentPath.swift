// The path of a document the user named, as a URL.
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
    /// known (the current one was removed), the path is left relative, for the system to refuse.
    package static func url(
        ofPath path: String, from directory: String = FileManager.default.currentDirectoryPath
    ) -> URL {
        guard !path.hasPrefix("/"), directory.hasPrefix("/") else { return URL(fileURLWithPath: path) }
        return URL(fileURLWithPath: directory.hasSuffix("/") ? directory + path : directory + "/" + path)
    }
}
