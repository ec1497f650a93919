// A clock for tests: time moves only when told to, and an engine's timer runs its work at each change point on
// the way, on the calling thread, so a whole schedule plays deterministically in no time.
public import LinuxHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem

/// A clock that moves only when told to. An engine on a `ManualClock` runs no playback thread: its scheduled
/// work runs inside `advance(by:)`/`set(to:)`, on the calling thread, deterministically.
public final class ManualClock: HapticClock {
    private struct State {
        var now: Double
        var timers: [Int: @Sendable () -> Double?] = [:]
        var nextTimer = 0
    }

    private let state: Lock<State>

    /// Bounds the change points run inside one `set(to:)`, against a runaway schedule.
    private static let maximumStepsPerAdvance = 1_000_000

    public init(startingAt start: Double = 0) { state = Lock(State(now: start)) }

    public var now: Double { state.withLock { $0.now } }

    /// Moves time forward by `seconds` (negative values are ignored: a monotonic clock never goes back),
    /// running the work that becomes due on the way.
    public func advance(by seconds: Double) { set(to: now + max(seconds, 0)) }

    /// Moves time to `time` if it is later than now. Time stops at every change point a timer asked for on the
    /// way, and the timer's work runs there, as if a playback thread had woken exactly on time.
    public func set(to time: Double) {
        for _ in 0..<Self.maximumStepsPerAdvance {
            let (current, timers) = state.withLock { ($0.now, Array($0.timers.values)) }
            let deadlines = timers.compactMap { $0() }
            // Work that asks to run again at once (a deadline now or past) runs again before time moves, as a
            // thread whose deadline has passed does.
            if deadlines.contains(where: { $0 <= current }) { continue }
            guard let next = deadlines.filter({ $0 > current && $0 <= time }).min() else { break }
            state.withLock { $0.now = next }
        }
        let timers = state.withLock { state in
            state.now = max(state.now, time)
            return Array(state.timers.values)
        }
        for work in timers { _ = work() }
    }

    /// Moves time to `time` at once if it is later than now, and runs the timers' work only there: as a playback
    /// thread the machine woke late, past every change point on the way.
    public func wakeLate(at time: Double) {
        let timers = state.withLock { state in
            state.now = max(state.now, time)
            return Array(state.timers.values)
        }
        for work in timers { _ = work() }
    }

    /// A timer that runs `work` whenever time moves and whenever it is woken; it never starts a thread.
    public func makeTimer(_ work: @escaping @Sendable () -> Double?) -> any HapticTimer {
        let key = state.withLock { state in
            defer { state.nextTimer += 1 }
            state.timers[state.nextTimer] = work
            return state.nextTimer
        }
        return Timer(clock: self, key: key, work: work)
    }

    private func removeTimer(_ key: Int) { _ = state.withLock { $0.timers.removeValue(forKey: key) } }

    private struct Timer: HapticTimer {
        let clock: ManualClock
        let key: Int
        let work: @Sendable () -> Double?

        func wake() { _ = work() }
        func cancel() { clock.removeTimer(key) }
    }
}
