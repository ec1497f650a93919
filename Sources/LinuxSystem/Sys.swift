// Every raw system call of the package passes through `Sys`, so that errno handling, EINTR retry and the C types
// stay in one place; each wrapper names the C function it calls. Nothing here is public: the input devices, the
// sound hardware, the engine and the test devices reach it as a package-wide layer. Files, threads and hot-plug
// watches are in the extensions beside this file; the USB gadget's configfs calls live with the test devices.
internal import CLinuxSystem
package import Glibc

/// Runs `body` until it returns something other than -1 with `EINTR`, turning -1 into a typed error.
@inline(__always)
package func valueOrErrno<T: FixedWidthInteger>(
    _ call: @autoclosure () -> String, retryOnInterrupt: Bool = true, _ body: () -> T
) throws(SystemCallError) -> T {
    while true {
        let code: Int32
        if let injected = SyscallFaults.injected(at: call) {
            code = injected.rawValue
        } else {
            let result = body()
            if result != -1 { return result }
            code = errno
        }
        if code == EINTR && retryOnInterrupt { continue }
        throw SystemCallError(Errno(rawValue: code), call: call())
    }
}

package enum Sys {
    /// The corresponding C function is `open`; always `O_CLOEXEC` so no descriptor leaks into children.
    package static func open(_ path: String, flags: Int32) throws(SystemCallError) -> Int32 {
        try valueOrErrno("open(\(path))") { Glibc.open(path, flags | O_CLOEXEC) }
    }

    /// The corresponding C function is `close`. Never retried: on Linux the descriptor is gone even on EINTR.
    package static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// The corresponding C function is `read`.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int {
        try valueOrErrno("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// The corresponding C function is `read` on an input device's event node read only for when its reports came
    /// (`InputReportReader`). A call site of its own (`read(reports)`, `SyscallFaults.site(of:)`), apart from the
    /// reads of devices and watches.
    package static func readReports(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError)
        -> Int
    {
        try valueOrErrno("read(reports)") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// The corresponding C function is `write`.
    package static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try valueOrErrno("write") { Glibc.write(fd, buffer.baseAddress, buffer.count) }
    }

    /// The `write` system call made in place (`cls_write_direct`), not through the C library's function: the
    /// events written to an event node, whose play write is the whole of a prepared start. The same call site as
    /// `write` for fault injection. Under a sanitizer it is libc's `write`, which the sanitizers intercept.
    package static func writeDirect(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try valueOrErrno("write") { cls_write_direct(fd, buffer.baseAddress, buffer.count) }
    }

    /// The corresponding C function is `ioctl` with a pointer argument.
    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String, _ arg: UnsafeMutableRawPointer?
    ) throws(SystemCallError) -> Int32 {
        try valueOrErrno("ioctl(\(name()))") { cls_ioctl_ptr(fd, request, arg) }
    }

    /// The corresponding C function is `ioctl` with an integer argument.
    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String, value: Int32
    ) throws(SystemCallError) -> Int32 {
        try valueOrErrno("ioctl(\(name()))") { cls_ioctl_int(fd, request, value) }
    }

    /// The corresponding C function is `ioctl` with no argument.
    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String
    ) throws(SystemCallError) -> Int32 {
        try valueOrErrno("ioctl(\(name()))") { cls_ioctl_none(fd, request) }
    }

    /// The corresponding C function is `poll`. `timeout` in milliseconds, -1 waits forever.
    package static func poll(_ fds: inout [pollfd], timeout: Int32) throws(SystemCallError) -> Int32 {
        let count = nfds_t(fds.count)
        return try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemCallError) -> Int32 in
            try valueOrErrno("poll") { Glibc.poll(buffer.baseAddress, count, timeout) }
        }
    }

    /// The corresponding C function is `pipe2` with `O_CLOEXEC`, and `O_NONBLOCK` unless `blocking`: non-blocking,
    /// a wake-up channel; blocking, a child process's standard input or output.
    package static func pipe(blocking: Bool = false) throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        let flags = blocking ? O_CLOEXEC : O_CLOEXEC | O_NONBLOCK
        _ = try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemCallError) -> Int32 in
            try valueOrErrno("pipe2") { cls_pipe2(buffer.baseAddress, flags) }
        }
        return (fds[0], fds[1])
    }

    /// The corresponding C function is `access`; true when the calling process may do `mode`.
    package static func access(_ path: String, _ mode: Int32) -> Bool {
        Glibc.access(path, mode) == 0
    }

    /// The corresponding C function is `access(F_OK)`: nil when `path` names something this process can reach,
    /// else why not: nothing there (`ENOENT`), a folder on the way it may not search (`EACCES`), a name too long
    /// (`ENAMETOOLONG`), a part of the way that is no folder (`ENOTDIR`), too many links (`ELOOP`).
    package static func unreachable(_ path: String) -> SystemCallError? {
        Glibc.access(path, F_OK) == 0 ? nil : SystemCallError(Errno(rawValue: errno), call: "access(\(path))")
    }

    /// The corresponding C function is `clock_getres(CLOCK_MONOTONIC_COARSE)`, in nanoseconds: the kernel's tick
    /// (1 / `CONFIG_HZ`), the step of its coarse clock and of its timer wheel. Nil when the kernel does not say.
    package static func kernelTickNanoseconds() -> UInt64? {
        var ts = timespec()
        guard clock_getres(CLOCK_MONOTONIC_COARSE, &ts) == 0 else { return nil }
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The corresponding C function is `uname`: the running kernel's release (`uname -r`), nil when it fails.
    package static func kernelRelease() -> String? {
        var names = utsname()
        guard Glibc.uname(&names) == 0 else { return nil }
        return withUnsafeBytes(of: names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    }

    /// The running kernel's version, major and minor, from its release (`6.12.117+deb13-amd64` → 6, 12); nil when
    /// the release cannot be read.
    package static func kernelVersion() -> (major: Int, minor: Int)? {
        guard let release = kernelRelease() else { return nil }
        let numbers = release.split(whereSeparator: { !$0.isNumber }).prefix(2).compactMap { Int($0) }
        return numbers.count == 2 ? (numbers[0], numbers[1]) : nil
    }

    /// Whether the running kernel is `major`.`minor` or later; false when its version cannot be read.
    package static func kernelIsAtLeast(_ major: Int, _ minor: Int) -> Bool {
        guard let version = kernelVersion() else { return false }
        return version.major > major || (version.major == major && version.minor >= minor)
    }

    /// The kernel's tick (`kernelTickNanoseconds`) in seconds.
    package static func kernelTickSeconds() -> Double? { kernelTickNanoseconds().map { Double($0) / 1e9 } }

    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`, in nanoseconds.
    package static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// The corresponding C function is `read`, returning `EINTR` instead of retrying: for a thread that is
    /// woken by a signal to leave a blocking read.
    package static func readOnce(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int
    {
        try valueOrErrno("read", retryOnInterrupt: false) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }
}

extension Sys {
    /// The corresponding C function is `inotify_init1(IN_CLOEXEC | IN_NONBLOCK)`.
    package static func inotifyInit() throws(SystemCallError) -> Int32 {
        try valueOrErrno("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) }
    }

    /// The corresponding C function is `inotify_add_watch`; returns the watch descriptor.
    package static func inotifyAddWatch(_ fd: Int32, _ path: String, mask: UInt32) throws(SystemCallError) -> Int32 {
        try valueOrErrno("inotify_add_watch(\(path))") { inotify_add_watch(fd, path, mask) }
    }
}
