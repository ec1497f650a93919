// A witness of the guest standing still: a thread at the top real-time priority that asks to wake every 2 ms
// and keeps how late it woke. No thread of the guest can keep it from running, so a late wake of it is time the
// whole guest lost (its processor taken by the host, under emulation two guests on two cores). Wakes late one
// after another are one standstill: between two of them the guest ran at most one period, too short for an
// ordinary thread behind the backlog a stall leaves. What a test then saw late is not the code's doing, and only
// then may a test run a case again.
import Glibc
@_spi(Internals) import LinuxSystem
import Synchronization

final class StallWitness: Sendable {
    /// The witness's period: a stall is at least its wake's lateness and at most that and one period more.
    static let periodNanoseconds: UInt64 = 2_000_000

    /// What the witness saw: its late wake-ups, and whether it ran at the real-time priority (without it, a thread
    /// of the guest could have kept it waiting).
    struct Finding: Sendable {
        var realTime = false
        /// Each wake-up a millisecond or more late, as the stall it shows: when it ended (monotonic seconds), how
        /// long it was, and whether the wake before was late too (the guest ran at most a period in between). The
        /// first `Finding.stallsKept`.
        var stalls: [(end: Double, milliseconds: Double, joined: Bool)] = []
        static let stallsKept = 100_000
        /// How long, while the witness ran, some thread of the guest waited for a processor, for memory (reclaim,
        /// compaction) and for I/O, in milliseconds: the kernel's pressure stall totals (nil where the kernel keeps
        /// none). They tell a thread held back apart from the whole guest standing still, which they do not count.
        var pressure: StallPressure?
        /// The processor time each thread of this process had while the witness ran, and how long it waited for a
        /// processor: which thread held the others back, and which waited for none but did not run.
        var threads: ThreadTimes.Use?

        /// The stalls that overlapped `window` (all when nil), wakes late one after another summed into one
        /// standstill each, in order.
        func standstills(during window: ClosedRange<Double>? = nil) -> [Double] {
            var merged: [Double] = []
            var previousKept = false
            for stall in stalls {
                let overlaps = window.map {
                    stall.end >= $0.lowerBound && stall.end - stall.milliseconds / 1000 <= $0.upperBound
                }
                guard overlaps ?? true else {
                    previousKept = false
                    continue
                }
                if stall.joined, previousKept, let last = merged.popLast() {
                    merged.append(last + stall.milliseconds)
                } else {
                    merged.append(stall.milliseconds)
                }
                previousKept = true
            }
            return merged
        }

        /// The longest standstill of the whole guest that overlapped `window` (monotonic seconds; any when nil).
        func longestStall(during window: ClosedRange<Double>? = nil) -> Double {
            standstills(during: window).max() ?? 0
        }

        /// Whether it proves a standstill of the whole guest of at least `milliseconds`, overlapping `window` when
        /// given: a wake-up's lateness is the least its stall lasted, and only that counts.
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
            let period = StallWitness.periodNanoseconds
            var lateBefore = false
            while state.withLock({ $0.running }) {
                let before = MonotonicTime.nanoseconds()
                Sys.sleep(nanoseconds: period)
                let woke = MonotonicTime.nanoseconds()
                let late = Double(Int64(woke) - Int64(before) - Int64(period)) / 1e6
                let joined = lateBefore
                lateBefore = late >= 1
                guard late >= 1 else { continue }
                state.withLock {
                    if $0.finding.stalls.count < Finding.stallsKept {
                        $0.finding.stalls.append((Double(woke) / 1e9, late, joined))
                    }
                }
            }
        }
    }

    private let watch: Watch
    private let thread: pthread_t
    private let pressureBefore: StallPressure?
    private let threadsBefore: ThreadTimes

    /// Starts the witness; `finish()` stops it.
    init() throws(SystemCallError) {
        let watch = Watch()
        self.watch = watch
        pressureBefore = StallPressure.now()
        threadsBefore = ThreadTimes.now()
        thread = try Sys.startJoinableThread { watch.run() }
    }

    /// Stops the witness and says what it saw.
    func finish() -> Finding {
        watch.state.withLock { $0.running = false }
        Sys.joinThread(thread)
        var finding = watch.state.withLock { $0.finding }
        if let before = pressureBefore, let after = StallPressure.now() { finding.pressure = after.since(before) }
        finding.threads = ThreadTimes.now().since(threadsBefore)
        return finding
    }
}

extension ThreadTimes {
    /// The most processor time a thread of a test's process takes over a pattern of about a second when nothing
    /// spins: the busiest (the emulated device's) took 33 to 40 ms.
    static let ordinaryBusiestMilliseconds = 40.0
    /// Past this, a thread spun (a stream's thread woken for a moment that has passed ran 236 and 251 ms).
    static let spinMilliseconds = 120.0

    /// No thread of this process ran `spinMilliseconds` or more since `before`. More is a `TimingFailure` that only
    /// a standstill of the whole guest for the excess over `ordinaryBusiestMilliseconds` explains: the emulator's
    /// guest has no steal time, so a standstill is counted as processor time of the thread it caught running.
    static func requireNoSpin(since before: ThreadTimes, over what: String) throws {
        let use = ThreadTimes.now().since(before)
        let busiest = use.threads.map(\.ranMilliseconds).max() ?? 0
        guard busiest >= spinMilliseconds else { return }
        throw TimingFailure(
            reason: "a thread ran \(busiest) ms over \(what) (bound \(spinMilliseconds) ms): \(use)",
            explainingStall: busiest - ordinaryBusiestMilliseconds)
    }
}

/// The threads of this process (`/proc/self/task`): for each, whether it runs at a real-time priority, and the
/// processor time it has had and has waited for (`schedstat`), in nanoseconds.
struct ThreadTimes: Sendable {
    struct Thread: Sendable {
        var realTime: Bool
        var ran: UInt64
        var waited: UInt64
    }
    var threads: [Int: Thread] = [:]

    static func now() -> ThreadTimes {
        var times = ThreadTimes()
        for entry in (try? Sys.directoryEntries("/proc/self/task")) ?? [] {
            guard let id = Int(entry),
                let stat = try? Sys.readSmallFile("/proc/self/task/\(entry)/stat"),
                let schedstat = try? Sys.readSmallFile("/proc/self/task/\(entry)/schedstat"),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // After the name: the state is field 3; the policy, field 41, is 0 for the ordinary one.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            let numbers = schedstat.split(whereSeparator: { $0 == " " || $0 == "\n" }).compactMap { UInt64($0) }
            guard fields.count > 38, let policy = Int(fields[38]), numbers.count >= 2 else { continue }
            times.threads[id] = Thread(realTime: policy == 1 || policy == 2, ran: numbers[0], waited: numbers[1])
        }
        return times
    }

    /// What each thread alive at both ends had in between.
    struct Use: Sendable, CustomStringConvertible {
        var threads: [(id: Int, realTime: Bool, ranMilliseconds: Double, waitedMilliseconds: Double)]

        /// The threads that ran or waited 5 ms or more, the longest first.
        var description: String {
            let shown = threads.filter { $0.ranMilliseconds >= 5 || $0.waitedMilliseconds >= 5 }
                .sorted { $0.ranMilliseconds + $0.waitedMilliseconds > $1.ranMilliseconds + $1.waitedMilliseconds }
            guard !shown.isEmpty else { return "no thread of this process ran or waited 5 ms" }
            return "threads of this process, ran / waited for a processor: "
                + shown.prefix(8).map {
                    "\($0.id)\($0.realTime ? " (real-time)" : "") \(AudioSuite.tenths($0.ranMilliseconds)) / "
                        + "\(AudioSuite.tenths($0.waitedMilliseconds)) ms"
                }.joined(separator: ", ")
        }
    }

    func since(_ earlier: ThreadTimes) -> Use {
        Use(
            threads: threads.compactMap { id, now in
                guard let then = earlier.threads[id] else { return nil }
                return (
                    id, now.realTime, Double(now.ran &- then.ran) / 1e6, Double(now.waited &- then.waited) / 1e6
                )
            })
    }
}

/// The kernel's pressure stall totals (`/proc/pressure/*`, the "some" line: time in which at least one thread
/// waited), in milliseconds.
struct StallPressure: Sendable, CustomStringConvertible {
    var processor: Double
    var memory: Double
    var io: Double

    /// The totals now; nil when the kernel keeps none (built without them, or `psi=0`).
    static func now() -> StallPressure? {
        func some(_ resource: String) -> Double? {
            guard let text = try? Sys.readSmallFile("/proc/pressure/" + resource),
                let line = text.split(separator: "\n").first(where: { $0.hasPrefix("some ") }),
                let total = line.split(separator: " ").first(where: { $0.hasPrefix("total=") }),
                let microseconds = Double(total.dropFirst("total=".count))
            else { return nil }
            return microseconds / 1000
        }
        guard let processor = some("cpu"), let memory = some("memory"), let io = some("io") else { return nil }
        return StallPressure(processor: processor, memory: memory, io: io)
    }

    func since(_ earlier: StallPressure) -> StallPressure {
        StallPressure(processor: processor - earlier.processor, memory: memory - earlier.memory, io: io - earlier.io)
    }

    var description: String {
        "some thread waited \(AudioSuite.tenths(processor)) ms for a processor, \(AudioSuite.tenths(memory)) ms for "
            + "memory and \(AudioSuite.tenths(io)) ms for I/O (pressure stall totals)"
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
                    let each = seen.standstills(during: failure.window)
                    let listed =
                        each.isEmpty
                        ? ""
                        : " (\(each.count) standstills of 1 ms or more: "
                            + each.suffix(12).map { "\(AudioSuite.tenths($0))" }.joined(separator: ", ")
                            + " ms\(each.count > 12 ? ", the last 12" : "")"
                            + "; \(AudioSuite.tenths(each.reduce(0, +))) ms in all)"
                    throw TestFailure(
                        reason: "\(failure.reason); the guest stood still at most \(stood) ms \(when)\(priority)"
                            + "\(listed), and \(AudioSuite.tenths(failure.explainingStall)) ms would have explained it"
                            + "; while the case ran, " + (seen.pressure.map { "\($0)" } ?? "no pressure totals kept")
                            + "; " + (seen.threads.map { "\($0)" } ?? ""))
                }
                guard attempt < 3 else {
                    throw TestFailure(
                        reason: "\(failure.reason); the third run in a row to fail so, each while the whole guest "
                            + "stood still (\(stood) ms this time)")
                }
                print(
                    "  \(failure.reason), with the whole guest standing still \(stood) ms (a real-time thread woke "
                        + "that late, in wakes late one after another): run again")
            } catch {
                _ = witness.finish()
                throw error
            }
        }
    }
}
