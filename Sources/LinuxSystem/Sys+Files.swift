// Files and directories: existence, links, types, listings, small attribute files, created files; and a sleep.
package import Glibc

extension Sys {
    /// The corresponding C function is `access(path, F_OK)`: the path exists (whoever may open it).
    package static func exists(_ path: String) -> Bool {
        Glibc.access(path, F_OK) == 0
    }

    /// The corresponding C function is `realpath`: `path` with every symbolic link resolved.
    package static func realPath(_ path: String) throws(SystemCallError) -> String {
        while let injected = SyscallFaults.injected(at: { "realpath" }) {
            if injected != .interrupted { throw SystemCallError(injected, call: "realpath(\(path))") }
        }
        guard let resolved = Glibc.realpath(path, nil) else {
            throw SystemCallError(Errno(rawValue: errno), call: "realpath(\(path))")
        }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// What `fstat` or `stat` says of a file: its type (`st_mode & S_IFMT`: `S_IFREG`, `S_IFIFO`, `S_IFCHR`, ...), its
    /// size in bytes (`st_size`), and which file it is.
    package struct FileStatus: Sendable, Hashable {
        package var type: mode_t
        package var size: Int
        /// The file's identity: the device of its file system (`st_dev`) and its inode number (`st_ino`).
        package var device: UInt64
        package var inode: UInt64

        /// Whether it is a folder.
        package var isDirectory: Bool { type == S_IFDIR }
        /// Whether it is a regular file (not a folder, a device, a pipe or a socket).
        package var isRegularFile: Bool { type == S_IFREG }

        init(_ status: Glibc.stat) {
            type = status.st_mode & S_IFMT
            size = Int(status.st_size)
            device = UInt64(status.st_dev)
            inode = UInt64(status.st_ino)
        }
    }

    /// The corresponding C function is `fstat`: the status of the file open at `fd`.
    package static func fstat(_ fd: Int32) throws(SystemCallError) -> FileStatus {
        var status = Glibc.stat()
        _ = try valueOrErrno("fstat") { Glibc.fstat(fd, &status) }
        return FileStatus(status)
    }

    /// The corresponding C function is `stat`, or `lstat` when not `followingLinks` (both as `fstatat`, which Swift
    /// can call: its `stat` is the structure's name): the status of the file at `path` (of a symbolic link itself,
    /// `S_IFLNK`, with `lstat`).
    package static func stat(_ path: String, followingLinks: Bool = true) throws(SystemCallError) -> FileStatus {
        var status = Glibc.stat()
        let flags = followingLinks ? 0 : AT_SYMLINK_NOFOLLOW
        _ = try valueOrErrno("\(followingLinks ? "stat" : "lstat")(\(path))") {
            Glibc.fstatat(AT_FDCWD, path, &status, flags)
        }
        return FileStatus(status)
    }

    /// The names in a directory (`opendir`/`readdir`), without `.` and `..`.
    package static func directoryEntries(_ path: String) throws(SystemCallError) -> [String] {
        while let injected = SyscallFaults.injected(at: { "opendir" }) {
            if injected != .interrupted { throw SystemCallError(injected, call: "opendir(\(path))") }
        }
        guard let directory = opendir(path) else {
            throw SystemCallError(Errno(rawValue: errno), call: "opendir(\(path))")
        }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

extension Sys {
    /// The corresponding C function is `open` with `O_CREAT | O_CLOEXEC` and a mode: without one, a created
    /// file gets whatever the mode argument happens to be (Swift's two-argument `open` passes 0: mode 000).
    package static func create(_ path: String, flags: Int32, mode: mode_t) throws(SystemCallError) -> Int32 {
        try valueOrErrno("open(\(path))") { Glibc.open(path, flags | O_CREAT | O_CLOEXEC, mode) }
    }
}

extension Sys {
    /// The corresponding C function is `nanosleep`, resumed after a signal until the whole time has passed.
    package static func sleep(nanoseconds: UInt64) {
        var request = timespec(tv_sec: Int(nanoseconds / 1_000_000_000), tv_nsec: Int(nanoseconds % 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) == -1 && errno == EINTR { request = remaining }
    }

    /// A small text file in one `read` (sysfs attributes, `/proc` entries): at most `limit` bytes.
    package static func readSmallFile(_ path: String, limit: Int = 4096) throws(SystemCallError) -> String {
        let fd = try open(path, flags: O_RDONLY)
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: limit)
        let result = bytes.withUnsafeMutableBytes { buffer in
            Result { () throws(SystemCallError) in try Sys.read(fd, into: buffer) }
        }
        return String(decoding: bytes.prefix(try result.get()), as: UTF8.self)
    }

    /// The corresponding C function is `write` of a whole string to a file that exists (configfs and sysfs
    /// attributes take one `write` per value).
    package static func writeFile(_ path: String, _ text: String) throws(SystemCallError) {
        let fd = try open(path, flags: O_WRONLY)
        defer { close(fd) }
        let result = Array(text.utf8).withUnsafeBytes { buffer in
            Result { () throws(SystemCallError) in try Sys.write(fd, buffer) }
        }
        _ = try result.get()
    }

    /// The corresponding C function is `write`, called again until all of `bytes` is written (a pipe or a file
    /// may take part of one); a write that takes nothing fails as `EIO`.
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) throws(SystemCallError) {
        var remaining = bytes[...]
        while !remaining.isEmpty {
            let written = try write(fd, UnsafeRawBufferPointer(rebasing: remaining))
            guard written > 0 else { throw SystemCallError(.ioError, call: "write") }
            remaining = remaining.dropFirst(written)
        }
    }

    /// The corresponding C functions are `open` with `O_CREAT | O_TRUNC`, then `writeAll`: a whole file written
    /// anew (`haptics render --output`).
    package static func writeNewFile(_ path: String, _ bytes: [UInt8], mode: mode_t = 0o644) throws(SystemCallError) {
        let fd = try create(path, flags: O_WRONLY | O_TRUNC, mode: mode)
        defer { close(fd) }
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(SystemCallError) in try writeAll(fd, buffer) }
        }
        try result.get()
    }
}
