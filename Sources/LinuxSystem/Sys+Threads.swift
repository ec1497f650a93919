// Threads: the device monitor's and the virtual pad's server threads, the engine's playback thread, and the pipe
// a thread reads signals from.
internal import CLinuxSystem
package import Glibc

extension Sys {
    /// The corresponding C function is `sched_yield`: lets another thread run, while waiting for one that is
    /// about to finish something short.
    package static func yield() { _ = sched_yield() }

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
            signals.withUnsafeBufferPointer { cls_signal_pipe($0.baseAddress, Int32($0.count)) }
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

    /// The corresponding C function is `timerfd_create` on `CLOCK_MONOTONIC`, close-on-exec and blocking: a
    /// descriptor whose `read` waits for the expiry `setTimer` sets.
    package static func monotonicTimer() throws(SystemCallError) -> Int32 {
        try valueOrErrno("timerfd_create") { cls_monotonic_timerfd() }
    }

    /// The corresponding C function is `timerfd_settime` with `TFD_TIMER_ABSTIME`: the timer expires once, at
    /// `nanoseconds` on the monotonic clock (a time already past: at once); nil disarms it. Fails only for a
    /// descriptor that is not a timer.
    package static func setTimer(_ fd: Int32, absoluteNanoseconds nanoseconds: UInt64?) throws(SystemCallError) {
        // An expiry of 0 would disarm: the earliest time that expires is 1 ns.
        let expiry = nanoseconds.map { Swift.max($0, 1) }
        _ = try valueOrErrno("timerfd_settime") {
            cls_timerfd_set_absolute(
                fd, Int64(expiry.map { Swift.min($0 / 1_000_000_000, UInt64(Int64.max)) } ?? 0),
                Int(expiry.map { $0 % 1_000_000_000 } ?? 0))
        }
    }

    /// The corresponding C function is `read` on a timer from `monotonicTimer`: waits until it expires. A call
    /// site of its own (`read(timerfd)`, `SyscallFaults.site(of:)`), apart from the reads of devices and watches.
    package static func waitForTimer(_ fd: Int32) throws(SystemCallError) {
        var expirations: UInt64 = 0
        _ = try withUnsafeMutableBytes(of: &expirations) { (buffer) throws(SystemCallError) in
            try valueOrErrno("read(timerfd)") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
        }
    }

    /// The corresponding C function is `pthread_setschedparam` with `SCHED_FIFO` for the calling thread: it then
    /// runs before every thread of the ordinary policy whenever it is ready, `belowTop` steps under the highest
    /// real-time priority. Needs `CAP_SYS_NICE` (or an `RLIMIT_RTPRIO` that allows it); returns whether it took.
    package static func runAtRealTimePriority(belowTop: Int32 = 0) -> Bool {
        var parameters = sched_param()
        let top = sched_get_priority_max(SCHED_FIFO)
        parameters.sched_priority = Swift.max(top - belowTop, sched_get_priority_min(SCHED_FIFO))
        return pthread_setschedparam(pthread_self(), SCHED_FIFO, &parameters) == 0
    }

    /// The corresponding C function is `pthread_join`; waits for the thread's body to return.
    package static func joinThread(_ thread: pthread_t) {
        _ = pthread_join(thread, nil)
    }
}

/// Carries a closure across `pthread_create`'s untyped context pointer.
private final class ThreadBody {
    let run: @Sendable () -> Void
    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
