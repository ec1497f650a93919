// The one clock of all haptic timing: CLOCK_MONOTONIC in seconds, like Core Haptics' CACurrentMediaTime().
// Injectable, so the scheduler and the players' state machines run under a manual clock in unit tests.
import LinuxInput
import Synchronization

/// A source of "now" in seconds on the monotonic time line the engine schedules on.
public protocol HapticClock: Sendable {
    /// Seconds since an arbitrary fixed point (boot, for `MonotonicClock`). Never goes backwards.
    var now: Double { get }
}

/// `CLOCK_MONOTONIC`: the clock of uinput's timestamps and of `clock_nanosleep`, unaffected by wall-clock
/// changes.
public struct MonotonicClock: HapticClock {
    public init() {}
    public var now: Double { Double(MonotonicTime.nanoseconds()) / MonotonicClock.nanosecondsPerSecond }

    static let nanosecondsPerSecond = 1e9

    /// The absolute deadline in monotonic nanoseconds for a time in seconds (never before zero).
    static func nanoseconds(_ seconds: Double) -> UInt64 {
        guard seconds.isFinite, seconds > 0 else { return 0 }
        return UInt64(seconds * nanosecondsPerSecond)
    }
}

/// A clock that moves only when told to. An engine on a `ManualClock` runs no playback thread: its
/// scheduled work runs inside `advance(by:)`/`set(to:)`, on the calling thread, deterministically.
public final class ManualClock: HapticClock {
    private struct State {
        var now: Double
        var observers: [Int: @Sendable (Double) -> Double?] = [:]
        var nextObserver = 0
    }

    private let state: Mutex<State>

    /// Bounds the change points run inside one `set(to:)`, against a runaway schedule.
    private static let maximumStepsPerAdvance = 1_000_000

    public init(startingAt start: Double = 0) { state = Mutex(State(now: start)) }

    public var now: Double { state.withLock { $0.now } }

    /// Moves time forward by `seconds` (negative values are ignored: a monotonic clock never goes back),
    /// running the work that becomes due on the way.
    public func advance(by seconds: Double) { set(to: now + max(seconds, 0)) }

    /// Moves time to `time` if it is later than now. Time stops at every change point an engine asked for on
    /// the way, and the engine's work runs there, as if its playback thread had woken exactly on time.
    public func set(to time: Double) {
        for _ in 0..<Self.maximumStepsPerAdvance {
            let (current, observers) = state.withLock { ($0.now, Array($0.observers.values)) }
            let deadlines = observers.compactMap { $0(current) }
            guard let next = deadlines.filter({ $0 > current && $0 <= time }).min() else { break }
            state.withLock { $0.now = next }
        }
        let (current, observers) = state.withLock { state in
            state.now = max(state.now, time)
            return (state.now, Array(state.observers.values))
        }
        for observer in observers { _ = observer(current) }
    }

    /// Registers work to run whenever time moves; it returns its next deadline (nil: none).
    func observe(_ observer: @escaping @Sendable (Double) -> Double?) -> Int {
        state.withLock { state in
            let key = state.nextObserver
            state.nextObserver += 1
            state.observers[key] = observer
            return key
        }
    }

    func removeObserver(_ key: Int) {
        _ = state.withLock { $0.observers.removeValue(forKey: key) }
    }
}
