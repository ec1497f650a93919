// The system calls only the emulated USB controllers make (configfs gadgets and FunctionFS): mounts, the
// directories and links that build a gadget. They go through LinuxSystem's `valueOrErrno`, so that they retry on
// EINTR, throw typed errors and answer to the fault hooks like every other call, but live here because nothing
// but the test devices makes them.
internal import Glibc
@_spi(Internals) internal import LinuxSystem

extension Sys {
    /// The corresponding C function is `mount` (no flags, no data).
    static func mount(source: String, target: String, type: String) throws(SystemCallError) {
        _ = try valueOrErrno("mount(\(type) on \(target))") { Glibc.mount(source, target, type, 0, nil) }
    }

    /// The corresponding C function is `umount2` with no flags.
    static func unmount(_ target: String) throws(SystemCallError) {
        _ = try valueOrErrno("umount(\(target))") { umount2(target, 0) }
    }

    /// The corresponding C function is `mkdir`.
    static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(SystemCallError) {
        _ = try valueOrErrno("mkdir(\(path))") { mkdir(path, mode) }
    }

    /// The corresponding C function is `rmdir`.
    static func removeDirectory(_ path: String) throws(SystemCallError) {
        _ = try valueOrErrno("rmdir(\(path))") { rmdir(path) }
    }

    /// The corresponding C function is `symlink`: `link` will point at `target`.
    static func symbolicLink(_ target: String, at link: String) throws(SystemCallError) {
        _ = try valueOrErrno("symlink(\(link))") { symlink(target, link) }
    }

    /// The corresponding C function is `unlink`.
    static func unlink(_ path: String) throws(SystemCallError) {
        _ = try valueOrErrno("unlink(\(path))") { Glibc.unlink(path) }
    }
}
