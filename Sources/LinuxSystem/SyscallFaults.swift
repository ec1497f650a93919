// Failures on purpose, shared by the unit tests and the kernel tests' faults/ suite: every wrapper of `Sys` asks
// here before it reaches the kernel.
import Synchronization

/// Failures on purpose, for tests: any call site (named as `SystemCallError.call` names it, without its path
/// argument: `open`, `ioctl(EVIOCSFF)`, `write`, `udev_new`...) fails with a chosen errno on its nth call, or
/// on every call from the nth, instead of reaching the kernel. Disarmed, a call pays one relaxed atomic load.
/// Threads that serve test devices run exempt, so that a fault lands in the code under test only.
package enum SyscallFaults {
    /// Which calls of the site fail.
    package enum Calls: Hashable, Sendable, CustomStringConvertible {
        /// The nth call only (1 is the first).
        case nth(Int)
        /// The nth call and every one after it.
        case from(Int)

        func includes(_ call: Int) -> Bool {
            switch self {
            case .nth(let n): call == n
            case .from(let n): call >= n
            }
        }

        package var description: String {
            switch self {
            case .nth(let n): "call \(n)"
            case .from(let n): "every call from \(n)"
            }
        }
    }

    package struct Plan: Hashable, Sendable {
        package var site: String
        package var errno: Errno
        package var calls: Calls
        /// Only the calls of the site whose whole name contains this (a path, as in `open(/dev/input/event7)`) are
        /// counted for `calls` and failed; nil: every call of the site.
        package var matching: String?

        package init(site: String, errno: Errno, calls: Calls, matching: String? = nil) {
            self.site = site
            self.errno = errno
            self.calls = calls
            self.matching = matching
        }
    }

    /// What happened while armed: every site reached, in the order first reached, with its number of calls,
    /// and how many calls the plan failed.
    package struct Tally: Sendable {
        package var sites: [String] = []
        package var calls: [String: Int] = [:]
        package var injected = 0
    }

    private struct State {
        var plan: Plan?
        /// The calls the plan's `matching` picked out so far.
        var matched = 0
        var tally = Tally()
        var exempt: Set<UInt> = []
        /// The one thread the plan and the tally are for (`withPlan(onThisThreadOnly:)`); nil: every thread not exempt.
        var onlyThread: UInt?
    }

    private static let armed = Atomic<Bool>(false)
    private static let state = Lock(State())

    /// Starts counting calls, and failing the ones `plan` names (nil: counting only).
    package static func arm(_ plan: Plan?) {
        state.withLock { state in
            state.plan = plan
            state.matched = 0
            state.tally = Tally()
        }
        armed.store(true, ordering: .releasing)
    }

    /// Stops failing and counting; returns the tally since `arm`.
    @discardableResult
    package static func disarm() -> Tally {
        armed.store(false, ordering: .releasing)
        return state.withLock { state in
            state.plan = nil
            return state.tally
        }
    }

    /// The tally so far.
    package static var tally: Tally { state.withLock { $0.tally } }

    /// Held by `withPlan` for the length of its body.
    private static let planOwner = Lock(())

    /// Arms `plan` for the length of `body` alone and returns the tally with the body's result, one caller at a
    /// time: unit tests run in parallel in one process, where a plan armed by one would replace another's.
    /// `onThisThreadOnly`: only the calling thread's calls are failed and counted, for a body that makes the calls
    /// under test itself: a test running beside it in the same process (listing devices, say) is neither failed nor
    /// counted.
    package static func withPlan<T: Sendable>(
        _ plan: Plan?, onThisThreadOnly: Bool = false, _ body: () throws -> T
    ) throws -> (result: T, tally: Tally) {
        try planOwner.withLock { _ throws(any Error) in
            if onThisThreadOnly { state.withLock { $0.onlyThread = ServiceThread.currentID } }
            arm(plan)
            defer {
                disarm()
                state.withLock { $0.onlyThread = nil }
            }
            let result = try body()
            return (result, tally)
        }
    }

    /// Runs `body` with the calling thread exempt from faults and from the tally.
    package static func exempting<T>(_ body: () throws -> T) rethrows -> T {
        let thread = ServiceThread.currentID
        state.withLock { _ = $0.exempt.insert(thread) }
        defer { state.withLock { _ = $0.exempt.remove(thread) } }
        return try body()
    }

    /// The errno the call at `call` fails with, or nil to make the call.
    @inline(__always)
    package static func injected(at call: () -> String) -> Errno? {
        guard armed.load(ordering: .relaxed) else { return nil }
        return record(call())
    }

    private static func record(_ call: String) -> Errno? {
        let thread = ServiceThread.currentID
        let site = site(of: call)
        return state.withLock { state -> Errno? in
            guard !state.exempt.contains(thread), state.onlyThread.map({ $0 == thread }) ?? true else { return nil }
            let count = state.tally.calls[site, default: 0] + 1
            if count == 1 { state.tally.sites.append(site) }
            state.tally.calls[site] = count
            guard let plan = state.plan, plan.site == site else { return nil }
            var nth = count
            if let matching = plan.matching {
                guard call.contains(matching) else { return nil }
                state.matched += 1
                nth = state.matched
            }
            guard plan.calls.includes(nth) else { return nil }
            state.tally.injected += 1
            return plan.errno
        }
    }

    /// The site of a call's name: `ioctl(EVIOCSFF)` stays whole (the request is the site), and so do
    /// `read(timerfd)` (the playback thread's sleep) and `read(reports)` (a pad's input reports read for their
    /// times), apart from the reads of devices and watches; a path argument, as in `open(/dev/input/event3)`, is
    /// dropped.
    package static func site(of call: String) -> String {
        if call.hasPrefix("ioctl(") || call == "read(timerfd)" || call == "read(reports)" { return call }
        return call.firstIndex(of: "(").map { String(call[..<$0]) } ?? call
    }
}
