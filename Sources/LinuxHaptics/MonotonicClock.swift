// The clock of every engine outside tests, and its timer thread.
@_spi(Internals) import LinuxSystem
import Synchronization

/// `CLOCK_MONOTONIC`: the clock of uinput's timestamps and of `clock_nanosleep`, unaffected by wall-clock
/// changes. Its timer is a thread that sleeps until absolute deadlines (woken early by new work, never polling).
public struct MonotonicClock: HapticClock {
    public init() {}

    public var now: Double { Double(MonotonicTime.nanoseconds()) / Self.nanosecondsPerSecond }

    public func makeTimer(_ work: @escaping @Sendable () -> Double?) throws(HapticEngineError) -> any HapticTimer {
        do throws(SystemCallError) {
            return try ThreadTimer(work)
        } catch {
            throw HapticEngineError(.systemError, "cannot start the playback thread: \(error)")
        }
    }

    static let nanosecondsPerSecond = 1e9

    /// The absolute deadline in monotonic nanoseconds for a time in seconds (never before zero; a time past
    /// what 64 bits of nanoseconds hold, about 584 years, or infinity, is the last one they hold). Rounded to the
    /// nearest nanosecond, so that a time made from nanoseconds (`now`) gives them back: a deadline handed out
    /// as seconds is then reached, not missed by one, by a clock that stops exactly on it.
    static func nanoseconds(_ seconds: Double) -> UInt64 { MonotonicTime.nanoseconds(seconds: seconds) }
}

/// The monotonic clock's timer: one thread, asleep on a `DeadlineTimer` between calls, so that new work due
/// later (`wake(by:)`) only brings its sleep's end forward.
private final class ThreadTimer: HapticTimer {
    private let timer: DeadlineTimer
    private let stopping = StopFlag()
    private let thread: Lock<ServiceThread?> = Lock(nil)

    init(_ work: @escaping @Sendable () -> Double?) throws(SystemCallError) {
        let timer = try DeadlineTimer()
        self.timer = timer
        let stopping = self.stopping
        let started = try ServiceThread.start {
            while !stopping.isSet {
                let deadline = work()
                if stopping.isSet { break }
                timer.sleep(untilNanoseconds: deadline.map(MonotonicClock.nanoseconds))
            }
        }
        thread.withLock { $0 = started }
    }

    func wake() { timer.wake() }

    func wake(by time: Double) { timer.wake(byNanoseconds: MonotonicClock.nanoseconds(time)) }

    func cancel() {
        stopping.set()
        timer.wake()
        guard
            let running = thread.withLock({ handle -> ServiceThread? in
                defer { handle = nil }
                return handle
            })
        else { return }
        // A handler running on the timer's thread may stop the engine: that thread ends by itself after the
        // call; joining it from itself would deadlock. So would joining it from inside any engine's handler: two
        // engines' handlers, each on its own engine's thread, stopping each other's engine waited for each other
        // for ever (until 6 December). The thread, told to stop, ends by itself after what it is doing.
        if running.isCurrent || HandlerThreads.currentIsInside { running.detach() } else { running.join() }
    }
}

/// A flag the timer thread's closure can capture (an `Atomic` cannot be captured).
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
