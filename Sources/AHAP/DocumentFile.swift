// Reading a document from a path the user named, for the AHAP reader and the other JSON files of the package
// (the app's cue sheet): only regular files within a size limit are read, and anything else is refused with
// what it is. Reading a directory fails with an unhelpful code, a pipe blocks until something writes to it, and
// a device such as `/dev/zero` never ends.
#if canImport(FoundationEssentials)
package import FoundationEssentials
#else
package import Foundation
#endif

package enum DocumentFile {
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
        if let refusal = refusal(ofFileAt: url, maximumBytes: maximumBytes) { return .failure(refusal) }
        do {
            return .success(try Data(contentsOf: url))
        } catch {
            return .failure(.unreadable(readFailureReason(error)))
        }
    }

    private static func refusal(ofFileAt url: URL, maximumBytes: Int) -> Refusal? {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: url.resolvingSymlinksInPath().path)
        } catch {
            return .unreadable(readFailureReason(error))
        }
        switch attributes[.type] as? FileAttributeType {
        case .typeRegular?:
            break
        case .typeDirectory?:
            return .directory
        case .typeCharacterSpecial?, .typeBlockSpecial?:
            return .unreadable("it is a device, not a regular file")
        case .typeSymbolicLink?:
            return .unreadable("it is a symbolic link to a file that does not exist")
        default:
            return .unreadable("it is not a regular file (a pipe or a socket)")
        }
        let size = (attributes[.size] as? Int) ?? (attributes[.size] as? UInt64).map { Int(clamping: $0) } ?? 0
        return size <= maximumBytes ? nil : .tooLarge(size: size, limit: maximumBytes)
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
