// A thread's sleep until a deadline that other threads can bring forward without waking it: a CLOCK_MONOTONIC
// timerfd set to absolute times, which the sleeping thread reads. `DeadlineWaiter` wakes its thread to hand it
// anything new; here a caller that knows when the thread is next needed sets that time, and the thread sleeps on
// until then, so a caller's change that is due later costs it one system call and no thread switch.
internal import CLinuxSystem

package final class DeadlineTimer: Sendable {
    private struct State {
        /// While the thread sleeps: the time it wakes at (`UInt64.max`: only when woken); nil while it is awake.
        var sleepsUntil: UInt64?
        /// The earliest wake asked for while the thread was awake: its next sleep ends by then.
        var requested = UInt64.max
    }

    private let descriptor: Int32
    private let state = Lock(State())

    package init() throws(SystemCallError) {
        descriptor = try Sys.monotonicTimer()
    }

    deinit { Sys.close(descriptor) }

    /// Sleeps until `deadline` (monotonic nanoseconds; nil: until woken), or until the earlier time a `wake`
    /// asked for, during this sleep or while the thread was awake since the last one.
    package func sleep(untilNanoseconds deadline: UInt64?) {
        let armed = state.withLock { state in
            let wakesAt = Swift.min(deadline ?? .max, state.requested)
            state.requested = .max
            state.sleepsUntil = wakesAt
            return arm(wakesAt)
        }
        // A timer that could not be set would never expire: the sleep ends at once instead.
        guard armed else {
            state.withLock { $0.sleepsUntil = nil }
            return
        }
        try? Sys.waitForTimer(descriptor)
        // A wake that comes between the expiry and this line arms the timer again and is not kept in
        // `requested`: it needs no keeping, because whatever its caller changed before calling it is there for
        // the thread to see after this lock.
        state.withLock { $0.sleepsUntil = nil }
    }

    /// The thread is needed by `deadline` (monotonic nanoseconds; now or past: at once): a sleep that would end
    /// later ends then, and a thread that is awake sleeps no later than that next time. An earlier wake stands.
    package func wake(byNanoseconds deadline: UInt64) {
        state.withLock { state in
            guard let sleepsUntil = state.sleepsUntil else {
                state.requested = Swift.min(state.requested, deadline)
                return
            }
            guard deadline < sleepsUntil else { return }
            state.sleepsUntil = deadline
            // Not set to that time: woken now rather than left asleep past it.
            if !arm(deadline) { _ = arm(0) }
        }
    }

    /// Wakes the thread now, or makes its next sleep end at once.
    package func wake() { wake(byNanoseconds: 0) }

    /// Sets the timer to expire at `nanoseconds` (`UInt64.max`: never); whether it was set. Only a descriptor that
    /// is not a timer makes that fail, or a fault injected in a test.
    private func arm(_ nanoseconds: UInt64) -> Bool {
        (try? Sys.setTimer(descriptor, absoluteNanoseconds: nanoseconds == .max ? nil : nanoseconds)) != nil
    }
}
