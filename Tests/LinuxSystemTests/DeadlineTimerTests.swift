// The playback thread's sleep: a wake due later brings the end of the sleep forward without ending it now, a wake
// asked for while the thread is awake ends its next sleep, and an earlier wake is never put off by a later one.
// Each wait on the sleeping thread is bounded (a hang guard, not a timing check).
import Synchronization
import Testing
@_spi(Internals) @testable import LinuxSystem

@Suite struct DeadlineTimerTests {
    /// A thread that sleeps on `timer` once, with `deadline`, and notes when it woke.
    private final class Sleeper: Sendable {
        private let woke = Atomic<Bool>(false)
        private let thread = Lock<ServiceThread?>(nil)

        init(_ timer: DeadlineTimer, deadline: UInt64?) throws {
            let started = try ServiceThread.start { [self] in
                timer.sleep(untilNanoseconds: deadline)
                woke.store(true, ordering: .sequentiallyConsistent)
            }
            thread.withLock { $0 = started }
        }

        var hasWoken: Bool { woke.load(ordering: .sequentiallyConsistent) }

        /// Waits (up to 10 s) for the sleep to end; whether it did.
        func awaitWaking() -> Bool {
            let deadline = Sys.monotonicNanoseconds() + 10_000_000_000
            while !hasWoken, Sys.monotonicNanoseconds() < deadline { Sys.sleep(nanoseconds: 1_000_000) }
            if hasWoken { thread.withLock { $0?.join() } }
            return hasWoken
        }
    }

    /// A wake far past `awaitWaking`'s 10 s limit: a sleep it ends counts as not woken.
    private static func anHourFromNow() -> UInt64 { Sys.monotonicNanoseconds() + 3_600_000_000_000 }

    @Test func aWakeDueLaterLeavesTheThreadAsleepUntilThen() throws {
        let timer = try DeadlineTimer()
        let sleeper = try Sleeper(timer, deadline: nil)
        Sys.sleep(nanoseconds: 20_000_000)
        timer.wake(byNanoseconds: Self.anHourFromNow())
        Sys.sleep(nanoseconds: 100_000_000)
        #expect(!sleeper.hasWoken, "a wake due in an hour ended the sleep at once")
        timer.wake(byNanoseconds: Sys.monotonicNanoseconds() + 20_000_000)
        #expect(sleeper.awaitWaking(), "a wake due in 20 ms did not end the sleep")
    }

    @Test func aWakeAskedForWhileAwakeEndsTheNextSleep() throws {
        let timer = try DeadlineTimer()
        timer.wake()
        let sleeper = try Sleeper(timer, deadline: nil)
        #expect(sleeper.awaitWaking())
    }

    @Test func aLaterWakeDoesNotPutOffAnEarlierOne() throws {
        let timer = try DeadlineTimer()
        let sleeper = try Sleeper(timer, deadline: nil)
        timer.wake(byNanoseconds: Sys.monotonicNanoseconds() + 20_000_000)
        timer.wake(byNanoseconds: Self.anHourFromNow())
        #expect(sleeper.awaitWaking(), "the wake due in 20 ms was put off by the one due in an hour")
    }

    @Test func aDeadlineAlreadyPastEndsTheSleepAtOnce() throws {
        let timer = try DeadlineTimer()
        #expect(try Sleeper(timer, deadline: 1).awaitWaking())
        #expect(try Sleeper(timer, deadline: 0).awaitWaking())
    }
}
