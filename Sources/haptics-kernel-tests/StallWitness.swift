// A witness of the guest standing still: a thread at the top real-time priority that asks to wake every 5 ms
// and keeps how late it woke at most. No thread of the guest can keep it from running, so a late wake
// of it is time the whole guest lost (its processor taken by the host, under emulation two guests on two cores).
// What a test then saw late is not the code's doing, and only then may a test run a case again.
import Glibc
@_spi(Internals) import LinuxSystem
import Synchronization

final class StallWitness: Sendable {
    /// What the witness saw: the longest lateness of its wake-ups, and whether it ran at the real-time priority
    /// (without it, a thread of the guest could have kept it waiting).
    struct Finding: Sendable {
        var longestMilliseconds = 0.0
        var realTime = false

        /// Whether it proves a stall of the whole guest of at least `milliseconds`.
        func provesStall(ofAtLeast milliseconds: Double) -> Bool { realTime && longestMilliseconds >= milliseconds }
    }

    /// The witness thread's loop and what it found, shared with the thread.
    private final class Watch: Sendable {
        let state = Mutex<(running: Bool, finding: Finding)>((true, Finding()))

        func run() {
            let realTime = Sys.runAtRealTimePriority()
            state.withLock { $0.finding.realTime = realTime }
            let period: UInt64 = 5_000_000
            while state.withLock({ $0.running }) {
                let before = MonotonicTime.nanoseconds()
                Sys.sleep(nanoseconds: period)
                let late = Double(Int64(MonotonicTime.nanoseconds()) - Int64(before) - Int64(period)) / 1e6
                state.withLock { $0.finding.longestMilliseconds = max($0.finding.longestMilliseconds, late) }
            }
        }
    }

    private let watch: Watch
    private let thread: pthread_t

    /// Starts the witness; `finish()` stops it.
    init() throws(SystemCallError) {
        let watch = Watch()
        self.watch = watch
        thread = try Sys.startJoinableThread { watch.run() }
    }

    /// Stops the witness and says what it saw.
    func finish() -> Finding {
        watch.state.withLock { $0.running = false }
        Sys.joinThread(thread)
        return watch.state.withLock { $0.finding }
    }
}
