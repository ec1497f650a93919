// Every raw system call of the package passes through this file, so that errno handling,
// EINTR retry and the C types stay in one place. Nothing here is public: `Sys`, the monotonic clock, the
// lock, the deadline waiter and the service thread are package-wide, for the engine and the test devices.
package import CLinuxInput
package import Glibc
import Synchronization

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

/// Failures on purpose, for tests: any call site (named as `SystemCallError.call` names it, without its path
/// argument: `open`, `ioctl(EVIOCSFF)`, `write`, `udev_new`...) fails with a chosen errno on its nth call, or
/// on every call from the nth, instead of reaching the kernel. Disarmed, a call pays one relaxed atomic load.
/// Threads that serve test devices run exempt, so that a fault lands in the code under test only.
package enum SyscallFaults {
    /// Which calls of the site fail.
    package enum Calls: Hashable, Sendable, CustomStringConvertible {
        /// The nth call only (1 is the first).
        case nth(Int)
        /// The nth call and every one after it.
        case from(Int)

        func includes(_ call: Int) -> Bool {
            switch self {
            case .nth(let n): call == n
            case .from(let n): call >= n
            }
        }

        package var description: String {
            switch self {
            case .nth(let n): "call \(n)"
            case .from(let n): "every call from \(n)"
            }
        }
    }

    package struct Plan: Hashable, Sendable {
        package var site: String
        package var errno: Errno
        package var calls: Calls

        package init(site: String, errno: Errno, calls: Calls) {
            self.site = site
            self.errno = errno
            self.calls = calls
        }
    }

    /// What happened while armed: every site reached, in the order first reached, with its number of calls,
    /// and how many calls the plan failed.
    package struct Tally: Sendable {
        package var sites: [String] = []
        package var calls: [String: Int] = [:]
        package var injected = 0
    }

    private struct State {
        var plan: Plan?
        var tally = Tally()
        var exempt: Set<UInt> = []
    }

    private static let armed = Atomic<Bool>(false)
    private static let state = Lock(State())

    /// Starts counting calls, and failing the ones `plan` names (nil: counting only).
    package static func arm(_ plan: Plan?) {
        state.withLock { state in
            state.plan = plan
            state.tally = Tally()
        }
        armed.store(true, ordering: .releasing)
    }

    /// Stops failing and counting; returns the tally since `arm`.
    @discardableResult
    package static func disarm() -> Tally {
        armed.store(false, ordering: .releasing)
        return state.withLock { state in
            state.plan = nil
            return state.tally
        }
    }

    /// The tally so far.
    package static var tally: Tally { state.withLock { $0.tally } }

    /// Runs `body` with the calling thread exempt from faults and from the tally.
    package static func exempting<T>(_ body: () throws -> T) rethrows -> T {
        let thread = ServiceThread.currentID
        state.withLock { _ = $0.exempt.insert(thread) }
        defer { state.withLock { _ = $0.exempt.remove(thread) } }
        return try body()
    }

    /// The errno the call at `call` fails with, or nil to make the call.
    @inline(__always)
    package static func injected(at call: () -> String) -> Errno? {
        guard armed.load(ordering: .relaxed) else { return nil }
        return record(site(of: call()))
    }

    private static func record(_ site: String) -> Errno? {
        let thread = ServiceThread.currentID
        return state.withLock { state -> Errno? in
            guard !state.exempt.contains(thread) else { return nil }
            let count = state.tally.calls[site, default: 0] + 1
            if count == 1 { state.tally.sites.append(site) }
            state.tally.calls[site] = count
            guard let plan = state.plan, plan.site == site, plan.calls.includes(count) else { return nil }
            state.tally.injected += 1
            return plan.errno
        }
    }

    /// The site of a call's name: `ioctl(EVIOCSFF)` stays whole (the request is the site); a path argument,
    /// as in `open(/dev/input/event3)`, is dropped.
    package static func site(of call: String) -> String {
        if call.hasPrefix("ioctl(") { return call }
        return call.firstIndex(of: "(").map { String(call[..<$0]) } ?? call
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

    /// The corresponding C function is `write`.
    package static func write(_ fd: Int32, _ buffer: UnsafeRawBufferPointer) throws(SystemCallError) -> Int {
        try valueOrErrno("write") { Glibc.write(fd, buffer.baseAddress, buffer.count) }
    }

    /// The corresponding C function is `ioctl` with a pointer argument.
    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String, _ arg: UnsafeMutableRawPointer?
    ) throws(SystemCallError) -> Int32 {
        try valueOrErrno("ioctl(\(name()))") { cli_ioctl_ptr(fd, request, arg) }
    }

    /// The corresponding C function is `ioctl` with an integer argument.
    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String, value: Int32
    ) throws(SystemCallError) -> Int32 {
        try valueOrErrno("ioctl(\(name()))") { cli_ioctl_int(fd, request, value) }
    }

    /// The corresponding C function is `ioctl` with no argument.
    package static func ioctl(
        _ fd: Int32, _ request: UInt, _ name: @autoclosure () -> String
    ) throws(SystemCallError) -> Int32 {
        try valueOrErrno("ioctl(\(name()))") { cli_ioctl_none(fd, request) }
    }

    /// The corresponding C function is `poll`. `timeout` in milliseconds, -1 waits forever.
    package static func poll(_ fds: inout [pollfd], timeout: Int32) throws(SystemCallError) -> Int32 {
        let count = nfds_t(fds.count)
        return try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemCallError) -> Int32 in
            try valueOrErrno("poll") { Glibc.poll(buffer.baseAddress, count, timeout) }
        }
    }

    /// The corresponding C function is `pipe2` with `O_CLOEXEC | O_NONBLOCK`: a wake-up channel.
    package static func pipe() throws(SystemCallError) -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        _ = try fds.withUnsafeMutableBufferPointer { (buffer) throws(SystemCallError) -> Int32 in
            try valueOrErrno("pipe2") { cli_pipe2(buffer.baseAddress, O_CLOEXEC | O_NONBLOCK) }
        }
        return (fds[0], fds[1])
    }

    /// The corresponding C function is `access`; true when the calling process may do `mode`.
    package static func access(_ path: String, _ mode: Int32) -> Bool {
        Glibc.access(path, mode) == 0
    }

    /// The corresponding C function is `clock_gettime(CLOCK_MONOTONIC)`, in nanoseconds.
    package static func monotonicNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}

// MARK: - Device layer: hot-plug

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

// MARK: - Threads: the device monitor's and the virtual pad's server threads

extension Sys {
    /// The corresponding C function is `pthread_create` for a detached thread that runs `body` once.
    package static func startThread(_ body: @escaping @Sendable () -> Void) throws(SystemCallError) {
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        _ = try createThread(&attributes, body)
    }

    /// `sigaction` for each of `signals` with a handler that writes the signal's number, as one byte, to a pipe
    /// made once per process; returns the pipe's read end, where a thread can block until a signal comes.
    package static func signalPipe(_ signals: [Int32]) throws(SystemCallError) -> Int32 {
        try valueOrErrno("sigaction") {
            signals.withUnsafeBufferPointer { cli_signal_pipe($0.baseAddress, Int32($0.count)) }
        }
    }

    /// The corresponding C function is `pthread_create` for a joinable thread; pair with `joinThread`.
    package static func startJoinableThread(_ body: @escaping @Sendable () -> Void) throws(SystemCallError) -> pthread_t
    {
        try createThread(nil, body)
    }

    private static func createThread(
        _ attributes: UnsafePointer<pthread_attr_t>?, _ body: @escaping @Sendable () -> Void
    ) throws(SystemCallError) -> pthread_t {
        while let injected = SyscallFaults.injected(at: { "pthread_create" }) {
            if injected != .interrupted { throw SystemCallError(injected, call: "pthread_create") }
        }
        let box = Unmanaged.passRetained(ThreadBody(body))
        var thread = pthread_t()
        let code = pthread_create(
            &thread, attributes,
            { context in
                guard let context else { return nil }
                Unmanaged<ThreadBody>.fromOpaque(context).takeRetainedValue().run()
                return nil
            }, box.toOpaque())
        if code != 0 {
            box.release()
            throw SystemCallError(Errno(rawValue: code), call: "pthread_create")
        }
        return thread
    }

    /// The corresponding C function is `pthread_join`; waits for the thread's body to return.
    package static func joinThread(_ thread: pthread_t) {
        _ = pthread_join(thread, nil)
    }
}

// MARK: - Files and directories

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
}

// MARK: - Test devices: configfs gadgets and FunctionFS

extension Sys {
    /// The corresponding C function is `mount` (no flags, no data).
    package static func mount(source: String, target: String, type: String) throws(SystemCallError) {
        _ = try valueOrErrno("mount(\(type) on \(target))") { Glibc.mount(source, target, type, 0, nil) }
    }

    /// The corresponding C function is `umount2` with no flags.
    package static func unmount(_ target: String) throws(SystemCallError) {
        _ = try valueOrErrno("umount(\(target))") { umount2(target, 0) }
    }

    /// The corresponding C function is `mkdir`.
    package static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(SystemCallError) {
        _ = try valueOrErrno("mkdir(\(path))") { mkdir(path, mode) }
    }

    /// The corresponding C function is `rmdir`.
    package static func removeDirectory(_ path: String) throws(SystemCallError) {
        _ = try valueOrErrno("rmdir(\(path))") { rmdir(path) }
    }

    /// The corresponding C function is `symlink`: `link` will point at `target`.
    package static func symbolicLink(_ target: String, at link: String) throws(SystemCallError) {
        _ = try valueOrErrno("symlink(\(link))") { symlink(target, link) }
    }

    /// The corresponding C function is `unlink`.
    package static func unlink(_ path: String) throws(SystemCallError) {
        _ = try valueOrErrno("unlink(\(path))") { Glibc.unlink(path) }
    }

    /// The corresponding C function is `read`, returning `EINTR` instead of retrying: for a thread that is
    /// woken by a signal to leave a blocking read.
    package static func readOnce(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(SystemCallError) -> Int
    {
        try valueOrErrno("read", retryOnInterrupt: false) { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }
}

/// Carries a closure across `pthread_create`'s untyped context pointer.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}

// MARK: - The lock of all shared state

/// A value that one thread at a time reads or changes, the package's one lock: `Synchronization.Mutex`'s shape
/// (`withLock`) and behaviour (priority inheritance; locking it again from the thread that holds it traps) on a
/// `pthread_mutex_t`. Not `Mutex` itself because ThreadSanitizer intercepts pthread's mutex calls and so sees the
/// order they impose, while `Mutex` waits for a contended lock in the kernel, from the uninstrumented Swift
/// runtime: under contention a TSan build reports races on everything a `Mutex` guards.
package struct Lock<Value: ~Copyable>: ~Copyable {
    // Heap-allocated so that neither moves while another thread waits on or reads them.
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline let value: UnsafeMutablePointer<Value>

    package init(_ initialValue: consuming sending Value) {
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        pthread_mutexattr_setprotocol(&attributes, Int32(PTHREAD_PRIO_INHERIT))
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// The corresponding C functions are `pthread_mutex_lock` and `pthread_mutex_unlock`: runs `body` on the
    /// value while no other thread can. Traps when this thread already holds the lock (it would never return).
    @inlinable
    package borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let locked = pthread_mutex_lock(mutex)
        precondition(locked == 0, "Lock.withLock: pthread_mutex_lock returned \(locked) (35, EDEADLK: already held)")
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }

    /// The corresponding C function is `pthread_mutex_trylock`: runs `body` on the value when no thread holds
    /// the lock, this one included; otherwise returns nil at once, without waiting and without trapping.
    @inlinable
    package borrowing func withLockIfAvailable<Result, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value.pointee)
    }
}

extension Lock: @unchecked Sendable where Value: ~Copyable {}

// MARK: - Engine: monotonic deadlines and its playback thread

/// `CLOCK_MONOTONIC` in nanoseconds: the one clock of every haptic deadline (and of uinput's timestamps).
package enum MonotonicTime {
    package static func nanoseconds() -> UInt64 { Sys.monotonicNanoseconds() }
}

/// A sleep until an absolute `CLOCK_MONOTONIC` deadline that another thread can cut short: a pthread
/// condition variable whose clock is set to `CLOCK_MONOTONIC` (the default, `CLOCK_REALTIME`, would jump
/// with the wall clock), plus a flag so that a `signal()` sent before the wait is not lost.
package final class DeadlineWaiter: @unchecked Sendable {
    // Heap-allocated so the pthread objects never move; guarded by themselves.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    private var signalled = false

    package init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    /// The corresponding C function is `pthread_cond_timedwait` (or `pthread_cond_wait` with no deadline).
    /// Returns when `deadline` (monotonic nanoseconds) has passed or `signal()` was called, whichever is
    /// first; a signal is consumed.
    package func wait(untilNanoseconds deadline: UInt64?) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        while !signalled {
            guard let deadline else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            var spec = timespec(
                tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
            if pthread_cond_timedwait(condition, mutex, &spec) == ETIMEDOUT { break }
        }
        signalled = false
    }

    /// Wakes the waiting thread now, or makes its next `wait` return at once.
    package func signal() {
        pthread_mutex_lock(mutex)
        signalled = true
        pthread_cond_signal(condition)
        pthread_mutex_unlock(mutex)
    }
}

/// A joinable thread for services that outlive a call (the engine's playback thread).
package struct ServiceThread: Sendable {
    private let handle: pthread_t

    /// The corresponding C function is `pthread_create`.
    package static func start(_ body: @escaping @Sendable () -> Void) throws(SystemCallError) -> ServiceThread {
        ServiceThread(handle: try Sys.startJoinableThread(body))
    }

    /// The corresponding C function is `pthread_join`.
    package func join() { Sys.joinThread(handle) }

    /// The corresponding C function is `pthread_detach`: for a thread that ends by itself, unjoined.
    package func detach() { _ = pthread_detach(handle) }

    /// Whether the caller is this thread (`pthread_equal(pthread_self())`): joining oneself would deadlock.
    package var isCurrent: Bool { pthread_equal(handle, pthread_self()) != 0 }

    /// The calling thread's id (`pthread_self()`), unique among the threads alive at the same time; any thread,
    /// not only a service thread.
    package static var currentID: UInt { UInt(pthread_self()) }
}
