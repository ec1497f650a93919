// Reading a document from a path the user named, for the AHAP reader and the other JSON files of the package (the
// app's cue sheet, its settings): only regular files within a size limit are read, and anything else is refused
// with what it is. Reading a directory fails with an unhelpful code, a pipe blocks until something writes to it, a
// device such as `/dev/zero` never ends, and a file the kernel makes up as it is read (`KernelMadeFiles`) gives a
// size that says nothing of what it holds.
//
// What the path leads to is looked at before it is opened: a device is never opened, since opening one may act
// (`/dev/watchdog` arms the watchdog, a tape device rewinds when closed). Then the file is opened and judged again
// by its descriptor, so that the file whose type, file system and size were checked is the file read, not whatever
// the path leads to a moment later. The open waits for nothing (a FIFO put in the file's place meanwhile would wait
// for a writer) and takes no terminal for the process's own.
internal import Glibc

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

    /// The bytes of the regular file at `path`, of at most `maximumBytes`: its size is checked before reading, and
    /// what is read is held to the limit too (a file that grows while it is read).
    package static func read(_ path: String, maximumBytes: Int) -> Result<[UInt8], Refusal> {
        if let status = try? Sys.stat(path) {
            if let refusal = refusal(ofType: status.type) { return .failure(refusal) }
            if let refusal = KernelMadeFiles.refusal(ofPath: path) { return .failure(.unreadable(refusal)) }
        }
        let fd: Int32
        do throws(SystemCallError) {
            fd = try Sys.open(path, flags: O_RDONLY | O_NOCTTY | O_NONBLOCK)
        } catch {
            return .failure(refusal(opening: path, error))
        }
        defer { Sys.close(fd) }
        do throws(SystemCallError) {
            let status = try Sys.fstat(fd)
            if let refusal = refusal(ofType: status.type) { return .failure(refusal) }
            if let refusal = try KernelMadeFiles.refusal(ofDescriptor: fd) { return .failure(.unreadable(refusal)) }
            guard status.size <= maximumBytes else {
                return .failure(.tooLarge(size: status.size, limit: maximumBytes))
            }
            return try readAll(fd, size: status.size, maximumBytes: maximumBytes)
        } catch {
            return .failure(.unreadable(reason(error)))
        }
    }

    /// The bytes of the file open at `fd`, whose size was `size`: at most one byte past `maximumBytes` is read,
    /// enough to tell a file that grew past the limit.
    private static func readAll(_ fd: Int32, size: Int, maximumBytes: Int) throws(SystemCallError) -> Result<
        [UInt8], Refusal
    > {
        // One byte more than the size: the read that finds the end finds it in the same buffer.
        var bytes = [UInt8](repeating: 0, count: size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= maximumBytes else {
                    let grown = try Sys.fstat(fd).size
                    return .failure(.tooLarge(size: Swift.max(grown, count), limit: maximumBytes))
                }
                bytes += repeatElement(0, count: Swift.min(count, maximumBytes + 1 - count))
            }
            let start = count
            let result = bytes.withUnsafeMutableBytes { buffer in
                Result { () throws(SystemCallError) in
                    try Sys.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[start...]))
                }
            }
            let read = try result.get()
            if read == 0 { break }
            count += read
        }
        bytes.removeSubrange(count...)
        return .success(bytes)
    }

    /// Why the file at `path` (its links followed) is not a regular file, in words (a file the kernel makes up as
    /// it is read is none: `KernelMadeFiles`); nil for one, or when there is none (whoever opens or creates it then
    /// says why): for a path about to be written, which is not opened here.
    package static func notRegular(_ path: String) -> String? {
        let status: Sys.FileStatus
        do throws(SystemCallError) {
            status = try Sys.stat(path)
        } catch {
            return isDanglingLink(path, error) ? danglingLink : nil
        }
        switch refusal(ofType: status.type) {
        case nil: return KernelMadeFiles.refusal(ofPath: path)
        case .directory: return "it is a directory, not a regular file"
        case .unreadable(let reason): return reason
        case .tooLarge: return nil
        }
    }

    private static let danglingLink =
        "it is a symbolic link that leads to no file (to one that does not exist, or round in a loop)"

    /// Why a file of `type` (`st_mode & S_IFMT`) is not read; nil for a regular file.
    private static func refusal(ofType type: mode_t) -> Refusal? {
        switch type {
        case S_IFREG: nil
        case S_IFDIR: .directory
        case S_IFCHR, S_IFBLK: .unreadable("it is a device, not a regular file")
        default: .unreadable("it is not a regular file (a pipe or a socket)")
        }
    }

    /// Why `path` did not open, the `error` of its `open`: what is there says more than the error when it is no
    /// regular file (a socket answers `ENXIO`, a device this user may not open `EACCES`), and a symbolic link that
    /// leads nowhere is said to be one.
    private static func refusal(opening path: String, _ error: SystemCallError) -> Refusal {
        if let status = try? Sys.stat(path), let refusal = refusal(ofType: status.type) { return refusal }
        if isDanglingLink(path, error) { return .unreadable(danglingLink) }
        return .unreadable(reason(error))
    }

    /// Whether `path` is a symbolic link that leads to no file, given the `error` of following it.
    private static func isDanglingLink(_ path: String, _ error: SystemCallError) -> Bool {
        guard error.errno == .noSuchFileOrDirectory || error.errno == .tooManySymbolicLinks else { return false }
        return (try? Sys.stat(path, followingLinks: false))?.type == S_IFLNK
    }

    /// A failed call's error in words.
    private static func reason(_ error: SystemCallError) -> String {
        switch error.errno {
        case .noSuchFileOrDirectory: "no such file"
        case .permissionDenied, .notPermitted: "permission denied"
        default: "the system refused it (\(error.errno.message))"
        }
    }
}
