// The one clock of all haptic timing: CLOCK_MONOTONIC in seconds, like Core Haptics' CACurrentMediaTime().
// A clock tells the time and wakes whoever waits on it, as Swift's `Clock` does with `now` and `sleep(until:)`:
// the engine asks its clock for a timer and never needs to know which clock it has, so a manual clock (the
// LinuxHapticsTesting product) drives the same engine deterministically, without a thread.

/// A source of "now" in seconds on the monotonic time line the engine schedules on, and of the timer that
/// wakes the engine at the times it asks for.
public protocol HapticClock: Sendable {
    /// Seconds since an arbitrary fixed point (boot, for `MonotonicClock`). Never goes backwards.
    var now: Double { get }

    /// Starts calling `work` at the times it asks for. `work` returns the next time (on this clock) it wants to
    /// run, or nil to wait until `HapticTimer.wake()`. Calls may come from any
    /// thread (a manual clock runs `work` on the thread that advances it or wakes the timer), so `work`
    /// serialises itself.
    func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer
}

/// A running timer of a `HapticClock`.
public protocol HapticTimer: Sendable {
    /// New work: run it now, whatever the time it asked for last.
    func wake()
    /// New work due at `time` (on the timer's clock): run it no later than then, or sooner if the time it asked
    /// for last is sooner. A caller that worked out when the work is next needed lets the timer sleep until then.
    func wake(by time: Double)
    /// Stops the timer; returns after its last call, unless called from within that call.
    func cancel()
}

extension HapticTimer {
    /// A timer that cannot move its next call earlier without running the work runs it now.
    public func wake(by time: Double) { wake() }
}
