// The file system a file is on, by its magic number (`KernelMadeFiles`), and a descriptor that names a file without
// opening it (`DocumentFile`). Swift's Glibc module declares neither `statfs` nor `O_PATH`; CLinuxSystem has them.
internal import CLinuxSystem
internal import Glibc

extension Sys {
    /// The corresponding C function is `fstatfs`: the magic number of the file system that the file open at `fd`
    /// is on (`f_type`: `PROC_SUPER_MAGIC`, `SYSFS_MAGIC`, ... of linux/magic.h).
    package static func fstatfs(_ fd: Int32) throws(SystemCallError) -> UInt32 {
        var magic: UInt32 = 0
        _ = try valueOrErrno("fstatfs") { cls_fstatfs_magic(fd, &magic) }
        return magic
    }

    /// The corresponding C function is `statfs`: `fstatfs` for the file at `path`, its links followed.
    package static func statfs(_ path: String) throws(SystemCallError) -> UInt32 {
        var magic: UInt32 = 0
        _ = try valueOrErrno("statfs(\(path))") { cls_statfs_magic(path, &magic) }
        return magic
    }

    /// The corresponding C function is `open` with `O_PATH`: a descriptor that names the file at `path` (its links
    /// followed) without opening it. No driver's `open` runs and nothing can be read through it; `fstat` and
    /// `fstatfs` judge the file by it, and the file it names is opened through its link in `/proc/thread-self/fd`.
    /// Named `open(O_PATH, path)`: the `open` call site, apart from the opens of the path itself.
    package static func openPath(_ path: String) throws(SystemCallError) -> Int32 {
        try valueOrErrno("open(O_PATH, \(path))") { cls_open_path(path) }
    }

    /// The corresponding C function is `open`, of the file a descriptor from `openPath(path)` names, through the
    /// descriptor's link in `/proc/thread-self/fd`: that very file, whatever `path` leads to by now. The calling
    /// thread's own table: `/proc/self/fd` shows the process's first thread's, which holds another file under the
    /// same number in a thread that unshared its table (`CLONE_FILES`), and is gone once that thread has exited.
    /// Named `open(path via /proc/thread-self/fd/N)`, so that a fault planned for the opens of a path finds this one
    /// too.
    package static func reopen(_ named: Int32, of path: String, flags: Int32) throws(SystemCallError) -> Int32 {
        let link = descriptorLink(named)
        return try valueOrErrno("open(\(path) via \(link))") { Glibc.open(link, flags | O_CLOEXEC) }
    }

    /// The link in `/proc` through which the calling thread's descriptor `fd` is opened again (`reopen`).
    package static func descriptorLink(_ fd: Int32) -> String { "/proc/thread-self/fd/\(fd)" }
}
