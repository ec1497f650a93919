// Reading a document from a path the user named, for the AHAP reader and the other files of the package (the
// app's cue sheet, its settings, a pattern's sounds): only regular files are read, and anything else is refused
// with what it is. Reading a directory fails with an unhelpful code, a pipe blocks until something writes to it, a
// device such as `/dev/zero` never ends, and a file the kernel makes up as it is read (`KernelMadeFiles`) gives a
// size that says nothing of what it holds.
//
// What the path leads to is judged before it is opened for reading, and what is opened is what was judged: the
// path is first opened with `O_PATH`, which names the file without opening it (no driver's `open` runs: a device
// is never opened, since opening one may act, `/dev/watchdog` arming the watchdog, a tape rewinding when closed);
// that descriptor's `fstat` and `fstatfs` say what the file is; and a regular file is then opened through the
// descriptor's link in `/proc/thread-self/fd` (the calling thread's own table), the very file judged, whatever the
// path leads to by then, and must be it (its device and inode: a `/proc` that is no procfs answers for another
// file). The open waits for nothing and takes no terminal for the process's own. Where the descriptor has no link
// there (no `/proc`) the path is opened again and must still be the file judged; only there, or where what is
// mounted on `/proc` is not procfs (root's or a user namespace's doing), can another file than the one judged (a
// device too) be opened, and it is refused once open. A read holds two descriptors for a moment.
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

        /// The refusal in words, for a reader that has no more to say of it.
        package var reason: String {
            switch self {
            case .unreadable(let reason): reason
            case .directory: "it is a directory, not a regular file"
            case .tooLarge(let size, let limit): "it is \(size) bytes long, more than the \(limit) read at the most"
            }
        }
    }

    /// The bytes of the regular file at `path`, of at most `maximumBytes` (which is also the most memory the read
    /// takes): its size is checked before reading, and what is read is held to the limit too (a file that grows
    /// while it is read).
    package static func read(_ path: String, maximumBytes: Int) -> Result<[UInt8], Refusal> {
        // One byte past the limit is read to tell a file that grew past it: a limit of `Int.max` is one less.
        let maximumBytes = Swift.min(maximumBytes, Int.max - 1)
        let (fd, status): (Int32, Sys.FileStatus)
        switch openJudged(path) {
        case .success(let opened): (fd, status) = opened
        case .failure(let refusal): return .failure(refusal)
        }
        defer { Sys.close(fd) }
        guard status.size <= maximumBytes else { return .failure(.tooLarge(size: status.size, limit: maximumBytes)) }
        do throws(SystemCallError) {
            return try readAll(fd, size: status.size, maximumBytes: maximumBytes)
        } catch {
            return .failure(.unreadable(reason(error, "reading it")))
        }
    }

    /// The regular file at `path` opened for reading, without blocking, or why not: judged before it is opened,
    /// and the very file judged (see the top of this file). The caller closes the descriptor.
    package static func open(_ path: String) -> Result<Int32, Refusal> {
        openJudged(path).map(\.fd)
    }

    /// `open`, with the opened file's status.
    private static func openJudged(_ path: String) -> Result<(fd: Int32, status: Sys.FileStatus), Refusal> {
        // The system's calls take the path up to its first NUL: another file than the one named.
        guard !path.utf8.contains(0) else { return .failure(.unreadable("its path holds a NUL character")) }
        let named: Int32
        do throws(SystemCallError) {
            named = try Sys.openPath(path)
        } catch {
            return .failure(refusal(opening: path, error))
        }
        defer { Sys.close(named) }
        let judged: Sys.FileStatus
        do throws(SystemCallError) {
            judged = try Sys.fstat(named)
            if let refusal = refusal(ofType: judged.type) { return .failure(refusal) }
            if let refusal = try KernelMadeFiles.refusal(ofDescriptor: named) { return .failure(.unreadable(refusal)) }
        } catch {
            return .failure(.unreadable(reason(error, "looking at it")))
        }
        let flags = O_RDONLY | O_NOCTTY | O_NONBLOCK
        let fd: Int32
        do throws(SystemCallError) {
            fd = try Sys.reopen(named, of: path, flags: flags)
        } catch {
            // Only where the descriptor has no link there (no /proc, or its fd folder hidden): a file system may
            // answer "no such file" to the open of its file, and the path, opened again, may lead elsewhere by now.
            guard error.errno == .noSuchFileOrDirectory,
                (try? Sys.stat(Sys.descriptorLink(named), followingLinks: false)) == nil
            else { return .failure(.unreadable(reason(error, "opening it"))) }
            // No link in /proc: the path again, which must still lead to the file judged.
            do throws(SystemCallError) {
                return sameFile(try Sys.open(path, flags: flags), as: judged)
            } catch {
                return .failure(refusal(opening: path, error))
            }
        }
        return sameFile(fd, as: judged)
    }

    /// The file open at `fd` with its status when it is the file judged (its device and inode); otherwise closed,
    /// and refused.
    private static func sameFile(_ fd: Int32, as judged: Sys.FileStatus) -> Result<
        (fd: Int32, status: Sys.FileStatus), Refusal
    > {
        do throws(SystemCallError) {
            let opened = try Sys.fstat(fd)
            guard opened.device == judged.device, opened.inode == judged.inode else {
                Sys.close(fd)
                return .failure(.unreadable("it was replaced by another file while it was opened"))
            }
            return .success((fd, opened))
        } catch {
            Sys.close(fd)
            return .failure(.unreadable(reason(error, "looking at it")))
        }
    }

    /// The bytes of the file open at `fd`, whose size was `size`: at most one byte past `maximumBytes` is read,
    /// enough to tell a file that grew past the limit.
    static func readAll(_ fd: Int32, size: Int, maximumBytes: Int) throws(SystemCallError) -> Result<
        [UInt8], Refusal
    > {
        // One byte more than the size: the read that finds the end finds it in the same buffer.
        var bytes = [UInt8](repeating: 0, count: size + 1)
        var count = 0
        while true {
            if count == bytes.count {
                guard count <= maximumBytes else {
                    // Its size now, for the message; what was read when the file cannot be looked at (the refusal
                    // is the same: it is past the limit).
                    let grown = (try? Sys.fstat(fd))?.size ?? count
                    return .failure(.tooLarge(size: Swift.max(grown, count), limit: maximumBytes))
                }
                // Here 1 ≤ count ≤ maximumBytes: the sum cannot overflow.
                bytes += repeatElement(0, count: Swift.min(count, maximumBytes - count + 1))
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
        guard let refusal = refusal(ofType: status.type) else { return KernelMadeFiles.refusal(ofPath: path) }
        return refusal.reason
    }

    private static let danglingLink =
        "it is a symbolic link that leads to no file (to one that does not exist, or round in a loop)"

    /// Why a file of `type` (`st_mode & S_IFMT`) is not read; nil for a regular file.
    private static func refusal(ofType type: mode_t) -> Refusal? {
        switch type {
        case S_IFREG: nil
        case S_IFDIR: .directory
        case S_IFCHR, S_IFBLK: .unreadable("it is a device, not a regular file")
        case S_IFIFO: .unreadable("it is a pipe (a FIFO), not a regular file")
        case S_IFSOCK: .unreadable("it is a socket, not a regular file")
        default: .unreadable("it is not a regular file")
        }
    }

    /// Why `path` did not open (its `O_PATH` open, or without `/proc` its open for reading), the `error` of that
    /// `open`: what is there says more than the error when it is no regular file (a socket answers `ENXIO`, a device
    /// this user may not open `EACCES`), and a symbolic link that leads nowhere is said to be one.
    private static func refusal(opening path: String, _ error: SystemCallError) -> Refusal {
        if let status = try? Sys.stat(path), let refusal = refusal(ofType: status.type) { return refusal }
        if isDanglingLink(path, error) { return .unreadable(danglingLink) }
        return .unreadable(reason(error, "opening it"))
    }

    /// Whether `path` is a symbolic link that leads to no file, given the `error` of following it.
    private static func isDanglingLink(_ path: String, _ error: SystemCallError) -> Bool {
        guard error.errno == .noSuchFileOrDirectory || error.errno == .tooManySymbolicLinks else { return false }
        return (try? Sys.stat(path, followingLinks: false))?.type == S_IFLNK
    }

    /// The error of a call made for `step` ("reading it"), in words.
    private static func reason(_ error: SystemCallError, _ step: String) -> String {
        switch error.errno {
        case .noSuchFileOrDirectory: "no such file"
        case .permissionDenied, .notPermitted: "permission denied"
        default: "\(step) failed (\(error.errno.message))"
        }
    }
}
