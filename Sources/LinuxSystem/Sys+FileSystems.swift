// The file system a file is on, by its magic number (`KernelMadeFiles`). Swift's Glibc module does not declare
// `statfs`; CLinuxSystem calls it.
internal import CLinuxSystem

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
}
