// How the engine's playback thread sleeps until its next deadline.
internal import Glibc

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
