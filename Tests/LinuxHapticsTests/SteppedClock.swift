// A clock for testing the engine's real playback thread: the monotonic clock's timer thread runs the engine's
// work, but on a time that moves only when the test says, so what the thread sends does not depend on how late
// the machine wakes it.
import LinuxHaptics
import LinuxInput
import Testing
@_spi(Internals) import LinuxSystem

/// A clock whose time moves only in `advance(by:)`, stopping at every change point the engine's timers ask for
/// on the way, as `ManualClock` does; unlike `ManualClock`, the work runs on each timer's own thread, the one
/// `MonotonicClock` starts for an engine. `advance(by:)` only moves the time and wakes the threads whose deadline
/// came: it returns once every thread has finished what it was woken for, so the test and the threads never
/// read the clock while it moves.
final class SteppedClock: HapticClock {
    private struct TimerState {
        /// The thread's timer, which runs the work.
        var thread: (any HapticTimer)?
        /// In a call of the work.
        var running = false
        /// Woken (or just started), and not yet into the call that takes it.
        var woken = true
        /// When its work last asked to run again; nil: only when woken.
        var deadline: Double?
    }

    private struct State {
        var now: Double
        var timers: [Int: TimerState] = [:]
        var nextTimer = 0
    }

    private let state: Lock<State>
    /// Signalled whenever a thread finishes a call of its work.
    private let callEnded = DeadlineWaiter()

    /// Only a hang (a thread that never comes back from its work) reaches this bound.
    static let hangGuardNanoseconds: UInt64 = 30_000_000_000

    init(startingAt start: Double = 0) { state = Lock(State(now: start)) }

    var now: Double { state.withLock { $0.now } }

    func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer {
        let key = state.withLock { state in
            defer { state.nextTimer += 1 }
            state.timers[state.nextTimer] = TimerState()
            return state.nextTimer
        }
        let thread: any HapticTimer
        do throws(HapticEngineError) {
            thread = try startThread(key: key, work)
        } catch {
            removeTimer(key)
            throw error
        }
        state.withLock { $0.timers[key]?.thread = thread }
        return Timer(clock: self, key: key, thread: thread)
    }

    /// The monotonic clock's timer thread, running `work` and keeping the timer's state.
    private func startThread(key: Int, _ work: @escaping @Sendable () -> Double?) throws(HapticEngineError)
        -> any HapticTimer
    {
        try MonotonicClock().makeTimer { [self] in
            state.withLock {
                $0.timers[key]?.running = true
                $0.timers[key]?.woken = false
            }
            let deadline = work()
            state.withLock {
                $0.timers[key]?.running = false
                $0.timers[key]?.deadline = deadline
            }
            callEnded.signal()
            // The thread sleeps until woken: by the engine, or by `advance(by:)` when the deadline comes.
            return nil
        }
    }

    /// Moves time forward by `seconds`: to each deadline a timer asked for on the way in turn, waking its thread
    /// there and waiting until it has run, then to the end.
    func advance(by seconds: Double) {
        let end = now + max(seconds, 0)
        while true {
            waitUntilIdle()
            let woken = state.withLock { state -> [any HapticTimer]? in
                let now = state.now
                guard let next = state.timers.values.compactMap(\.deadline).filter({ $0 > now && $0 <= end }).min()
                else {
                    state.now = max(now, end)
                    return nil
                }
                state.now = next
                var threads: [any HapticTimer] = []
                for (key, timer) in state.timers where timer.deadline == next {
                    state.timers[key]?.woken = true
                    if let thread = timer.thread { threads.append(thread) }
                }
                return threads
            }
            guard let woken else { return }
            for thread in woken { thread.wake() }
        }
    }

    /// Moves time forward by `seconds` and wakes no thread: the machine standing still under a timer's work, which
    /// calls this (unlike `advance(by:)`, which waits for that work). The work sees the later time from then on.
    func stall(for seconds: Double) { state.withLock { $0.now += max(seconds, 0) } }

    /// Waits until no thread is in its work or has been woken for more.
    private func waitUntilIdle() {
        let hangGuard = MonotonicTime.nanoseconds() + Self.hangGuardNanoseconds
        while state.withLock({ $0.timers.values.contains { $0.running || $0.woken } }) {
            guard MonotonicTime.nanoseconds() < hangGuard else {
                Issue.record("a playback thread did not come back from its work")
                return
            }
            callEnded.wait(untilNanoseconds: hangGuard)
        }
    }

    private func woke(_ key: Int) { state.withLock { $0.timers[key]?.woken = true } }
    private func removeTimer(_ key: Int) { _ = state.withLock { $0.timers.removeValue(forKey: key) } }

    private struct Timer: HapticTimer {
        let clock: SteppedClock
        let key: Int
        let thread: any HapticTimer

        func wake() {
            clock.woke(key)
            thread.wake()
        }

        func cancel() {
            thread.cancel()
            clock.removeTimer(key)
        }
    }
}
