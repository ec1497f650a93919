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
        /// Each wake-up a millisecond or more late, as the stall it shows: when it ended (monotonic seconds) and
        /// how long it was. The first `Finding.stallsKept`.
        var stalls: [(end: Double, milliseconds: Double)] = []
        static let stallsKept = 100_000

        /// The longest stall of the whole guest that overlapped `window` (monotonic seconds; any when nil).
        func longestStall(during window: ClosedRange<Double>? = nil) -> Double {
            guard let window else { return longestMilliseconds }
            return stalls.filter { $0.end >= window.lowerBound && $0.end - $0.milliseconds / 1000 <= window.upperBound }
                .map(\.milliseconds).max() ?? 0
        }

        /// Whether it proves a stall of the whole guest of at least `milliseconds`, overlapping `window` when given.
        func provesStall(ofAtLeast milliseconds: Double, during window: ClosedRange<Double>? = nil) -> Bool {
            realTime && longestStall(during: window) >= milliseconds
        }
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
                let woke = MonotonicTime.nanoseconds()
                let late = Double(Int64(woke) - Int64(before) - Int64(period)) / 1e6
                state.withLock {
                    $0.finding.longestMilliseconds = max($0.finding.longestMilliseconds, late)
                    if late >= 1, $0.finding.stalls.count < Finding.stallsKept {
                        $0.finding.stalls.append((Double(woke) / 1e9, late))
                    }
                }
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

/// A failure of timing alone that the whole guest standing still for `explainingStall` milliseconds or longer
/// (within `window`, monotonic seconds, when the failure shows when it came about) would explain: no thread of the
/// code under test could have run then either. Thrown inside `StallWitness.againAfterAGuestStall`, which runs the
/// case again only when a witness proves such a stall.
struct TimingFailure: Error, CustomStringConvertible {
    let reason: String
    let explainingStall: Double
    var window: ClosedRange<Double>? = nil
    var description: String { reason }
}

extension StallWitness {
    /// Runs `body` and runs it again, at most twice, when it failed with a `TimingFailure` while a witness saw the
    /// whole guest stand still for at least the failure's `explainingStall`. A timing failure with no such stall
    /// fails the test, naming the longest stall seen, and so does any other failure. Each run again is printed
    /// with the stall.
    static func againAfterAGuestStall(_ body: () async throws -> Void) async throws {
        for attempt in 1...3 {
            let witness = try StallWitness()
            do {
                try await body()
                _ = witness.finish()
                return
            } catch let failure as TimingFailure {
                let seen = witness.finish()
                let stood = AudioSuite.tenths(seen.longestStall(during: failure.window))
                guard seen.provesStall(ofAtLeast: failure.explainingStall, during: failure.window) else {
                    let priority = seen.realTime ? "" : " (not at real-time priority: no proof)"
                    let when = failure.window == nil ? "meanwhile" : "then"
                    throw TestFailure(
                        reason: "\(failure.reason); the guest stood still at most \(stood) ms \(when)\(priority), "
                            + "and \(AudioSuite.tenths(failure.explainingStall)) ms would have explained it")
                }
                guard attempt < 3 else {
                    throw TestFailure(
                        reason: "\(failure.reason); the third run in a row to fail so, each while the whole guest "
                            + "stood still (\(stood) ms this time)")
                }
                print(
                    "  \(failure.reason), with the whole guest standing still \(stood) ms (a real-time thread woke "
                        + "that late): run again")
            } catch {
                _ = witness.finish()
                throw error
            }
        }
    }
}
