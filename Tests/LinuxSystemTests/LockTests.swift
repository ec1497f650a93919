import Testing
@_spi(Internals) @testable import LinuxSystem

@Suite struct LockTests {
    /// Shares one lock between threads (a `Lock` cannot be copied into their closures itself).
    private final class Shared: Sendable {
        let counts = Lock<[String: Int]>([:])
    }

    private struct Refused: Error {}

    private final class Token: Sendable {}

    @Test func threadsThatChangeTheValueTogetherLoseNoChange() throws {
        let shared = Shared()
        let threads = try (0..<4).map { _ in
            try ServiceThread.start {
                for _ in 0..<10_000 { shared.counts.withLock { $0["n", default: 0] += 1 } }
            }
        }
        threads.forEach { $0.join() }
        #expect(shared.counts.withLock { $0["n"] } == 40_000)
    }

    @Test func aThrowingBodyKeepsItsChangesAndReleasesTheLock() {
        let lock = Lock(1)
        #expect(throws: Refused.self) {
            try lock.withLock { (value) throws(Refused) in
                value = 2
                throw Refused()
            }
        }
        #expect(lock.withLock { value in value } == 2)
    }

    @Test func lockingAgainFromTheThreadThatHoldsItTraps() async {
        await #expect(processExitsWith: .failure) {
            let lock = Lock(0)
            lock.withLock { _ in lock.withLock { $0 += 1 } }
        }
    }

    @Test func aLockIfAvailableRunsOnlyWhenNoThreadHoldsTheLock() throws {
        let shared = Shared()
        #expect(shared.counts.withLockIfAvailable { $0["free", default: 0] += 1 } != nil)
        let reentered = shared.counts.withLock { _ in shared.counts.withLockIfAvailable { _ in true } }
        #expect(reentered == nil)
        let (held, release) = (DeadlineWaiter(), DeadlineWaiter())
        let holder = try ServiceThread.start {
            shared.counts.withLock { _ in
                held.signal()
                release.wait(untilNanoseconds: nil)
            }
        }
        held.wait(untilNanoseconds: nil)
        let whileHeld = shared.counts.withLockIfAvailable { counts in
            counts["held", default: 0] += 1
            return true
        }
        release.signal()
        holder.join()
        #expect(whileHeld == nil)
        #expect(shared.counts.withLock { $0 } == ["free": 1])
    }

    @Test func theValueGoesWithTheLock() {
        weak var released: Token?
        do {
            let token = Token()
            released = token
            let lock = Lock(token)
            #expect(lock.withLock { $0 === released })
        }
        #expect(released == nil)
    }
}
