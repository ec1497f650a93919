// What runs the playback passes: a thread that sleeps until the next change point at an absolute
// CLOCK_MONOTONIC deadline (woken early by new work, never polling), or, under a ManualClock, the clock's
// own advance() calls, so tests are deterministic.
import LinuxInput
import Synchronization

protocol PlaybackDriver: Sendable {
    /// New work: run a pass now (the thread re-computes its deadline).
    func wake()
    /// Stops the driver; returns after its last pass unless called from the driver's own thread.
    func shutdown()
}

final class ThreadDriver: PlaybackDriver {
    private let waiter = DeadlineWaiter()
    private let stopping = StopFlag()
    private let thread: Mutex<ServiceThread?> = Mutex(nil)

    init(core: EngineCore) throws(SystemCallError) {
        let waiter = self.waiter
        let stopping = self.stopping
        let started = try ServiceThread.start {
            while !stopping.isSet {
                let deadline = core.runPass()
                if stopping.isSet { break }
                waiter.wait(untilNanoseconds: deadline.map(MonotonicClock.nanoseconds))
            }
        }
        thread.withLock { $0 = started }
    }

    func wake() { waiter.signal() }

    func shutdown() {
        stopping.set()
        waiter.signal()
        guard
            let running = thread.withLock({ handle -> ServiceThread? in
                defer { handle = nil }
                return handle
            })
        else { return }
        // A handler running on the playback thread may stop the engine: that thread ends by itself after
        // the pass; joining it from itself would deadlock.
        if running.isCurrent { running.detach() } else { running.join() }
    }
}

final class InlineDriver: PlaybackDriver {
    private let clock: ManualClock
    private let core: EngineCore
    private let key: Int

    init(clock: ManualClock, core: EngineCore) {
        self.clock = clock
        self.core = core
        key = clock.observe { [weak core] _ in core?.runPass() }
    }

    func wake() { _ = core.runPass() }

    func shutdown() { clock.removeObserver(key) }
}

/// A flag the playback thread's closure can capture (an `Atomic` cannot be captured).
private final class StopFlag: Sendable {
    private let value = Atomic<Bool>(false)
    var isSet: Bool { value.load(ordering: .acquiring) }
    func set() { value.store(true, ordering: .releasing) }
}
