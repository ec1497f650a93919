// Reading a document from a path the user named, for the AHAP reader and the other JSON files of the package
// (the app's cue sheet): only regular files within a size limit are read, and anything else is refused with
// what it is. Reading a directory fails with an unhelpful code, a pipe blocks until something writes to it, a
// device such as `/dev/zero` never ends, and a file the kernel makes up as it is read (`KernelMadeFiles`) gives a
// size that says nothing of what it holds.
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

package enum DocumentFile {
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

    /// Why a path is not read.
    package enum Refusal: Error, Sendable, Hashable {
        /// It cannot be read, or is not a regular file: the reason in words ("it is a device, ...").
        case unreadable(String)
        /// It is a directory (the reader's callers suggest what to name instead).
        case directory
        /// A regular file of `size` bytes, more than the limit of `limit`.
        case tooLarge(size: Int, limit: Int)
    }

    /// The bytes of the regular file at `url`, of at most `maximumBytes` (checked before reading).
    package static func read(_ url: URL, maximumBytes: Int) -> Result<Data, Refusal> {
        switch size(ofFileAt: url, maximumBytes: maximumBytes) {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(0):
            // Not read: Foundation's reader loses a 4 KB buffer on every empty file it reads.
            return .success(Data())
        case .success:
            do {
                let data = try Data(contentsOf: url)
                // Measured again: a file that grew since its size was read (or another put in its place) is
                // held to the limit too.
                guard data.count <= maximumBytes else {
                    return .failure(.tooLarge(size: data.count, limit: maximumBytes))
                }
                return .success(data)
            } catch {
                return .failure(.unreadable(readFailureReason(error)))
            }
        }
    }

    /// The size of the regular file at `url`, or why it is not read.
    private static func size(ofFileAt url: URL, maximumBytes: Int) -> Result<Int, Refusal> {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
        } catch {
            return .failure(.unreadable(readFailureReason(error)))
        }
        if let refusal = refusal(ofType: attributes[.type] as? FileAttributeType) { return .failure(refusal) }
        guard let size = byteCount(attributes[.size]) else {
            return .failure(.unreadable("its size cannot be read"))
        }
        if let refusal = KernelMadeFiles.refusal(ofFileWith: attributes) { return .failure(.unreadable(refusal)) }
        return size <= maximumBytes ? .success(size) : .failure(.tooLarge(size: size, limit: maximumBytes))
    }

    /// Why a file of `type` is not read; nil for a regular file.
    private static func refusal(ofType type: FileAttributeType?) -> Refusal? {
        switch type {
        case .typeRegular?: nil
        case .typeDirectory?: .directory
        case .typeCharacterSpecial?, .typeBlockSpecial?: .unreadable("it is a device, not a regular file")
        case .typeSymbolicLink?:
            .unreadable("it is a symbolic link that leads to no file (to one that does not exist, or round in a loop)")
        default: .unreadable("it is not a regular file (a pipe or a socket)")
        }
    }

    /// Why the file at `path` (its links followed) is not a regular file, in words (a file the kernel makes up as
    /// it is read is none: `KernelMadeFiles`); nil for one, or when it cannot be looked at (whoever opens it then
    /// says why).
    package static func notRegular(_ path: String) -> String? {
        let url = URL(fileURLWithPath: path).resolvingSymlinksInPath()
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        switch refusal(ofType: attributes[.type] as? FileAttributeType) {
        case nil: return KernelMadeFiles.refusal(ofFileWith: attributes)
        case .directory: return "it is a directory, not a regular file"
        case .unreadable(let reason): return reason
        case .tooLarge: return nil
        }
    }

    /// A file's size as the file manager gives it: `UInt` from FoundationEssentials, `Int`, `UInt64` or `Int64`
    /// elsewhere; nil for anything else.
    static func byteCount(_ value: Any?) -> Int? {
        switch value {
        case let size as UInt: Int(clamping: size)
        case let size as Int: size
        case let size as UInt64: Int(clamping: size)
        case let size as Int64: Int(clamping: size)
        default: nil
        }
    }

    private static func readFailureReason(_ error: any Error) -> String {
        guard let cocoa = error as? CocoaError else { return "\(error)" }
        switch cocoa.code {
        case .fileReadNoSuchFile, .fileNoSuchFile: return "no such file"
        case .fileReadNoPermission: return "permission denied"
        case .fileReadTooLarge: return "too large"
        default: return "the system refused it (Cocoa error \(cocoa.code.rawValue))"
        }
    }
}
