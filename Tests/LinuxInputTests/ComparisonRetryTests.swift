import Testing

@testable import LinuxInput

/// The retries of an owed comparison with sysfs, on a clock the test moves: no test waits for one.
@Suite struct ComparisonRetryTests {
    private static let second: UInt64 = 1_000_000_000

    /// A comparison that fails at every retry (sysfs cannot be listed) is tried again 1 s after it was owed, then
    /// 2, 4, 8, 16 and 32 s after each attempt, then every minute (scheduled both by the failed comparison and by the
    /// retry's end, each wait was four times the one before, until 7 December).
    @Test func aComparisonFailingAtEveryRetryWaitsTwiceAsLongEachTimeUpToAMinute() throws {
        var retry = ComparisonRetry()
        var now = 5 * Self.second
        retry.owed(now: now)
        var waits: [UInt64] = []
        for _ in 0..<9 {
            let deadline = try #require(retry.deadline)
            #expect(!retry.isDue(now: deadline - 1))
            waits.append((deadline - now) / Self.second)
            now = deadline
            #expect(retry.isDue(now: now))
            // The retry's drain compares, fails and leaves the comparison owed; the drain's end schedules nothing more.
            let due = retry.deadline
            retry.owed(now: now)
            retry.drained(now: now, due: due)
        }
        #expect(waits == [1, 2, 4, 8, 16, 32, 60, 60, 60])
    }

    /// A retry whose drain could not compare (every receive failed, so the comparison was neither made nor owed anew)
    /// schedules the next: the monitor's poll, woken at each deadline, drains 3 times in the first 10 s (at 1, 3 and
    /// 7 s), not without pause (a deadline left past returned the poll at once).
    @Test func aRetryWhoseDrainComparedNothingSchedulesTheNextOneLater() {
        var retry = ComparisonRetry()
        retry.owed(now: 0)
        var attempts: [UInt64] = []
        for _ in 0..<100 {
            guard let now = retry.deadline, now < 10 * Self.second else { break }
            if retry.isDue(now: now) {
                attempts.append(now / Self.second)
                retry.drained(now: now, due: now)
            }
        }
        #expect(attempts == [1, 3, 7])
    }

    /// A retry's drain whose comparison failed at once, then went on longer than the wait that failure scheduled
    /// (telling records, each HID pad's probe settling a tenth of a second), keeps that retry: the drain's end does not
    /// schedule another past it. Until 7 December it did, and the wait doubled twice.
    @Test func aLongDrainKeepsTheRetryItsFailedComparisonScheduled() {
        var retry = ComparisonRetry()
        retry.owed(now: 0)
        let due = retry.deadline
        #expect(due == Self.second)
        retry.owed(now: Self.second)
        retry.drained(now: 3 * Self.second + Self.second / 2, due: due)
        #expect(retry.deadline == 3 * Self.second)
    }

    /// A comparison made owes none, and the next one owed is retried a second after, not after the longer wait the
    /// failures before had reached.
    @Test func aComparisonMadeStartsTheWaitAgainAtASecond() {
        var retry = ComparisonRetry()
        for attempt in 0..<4 { retry.owed(now: UInt64(attempt) * Self.second) }
        retry.made()
        #expect(retry.deadline == nil)
        #expect(!retry.isDue(now: .max))
        retry.owed(now: 100 * Self.second)
        #expect(retry.deadline == 101 * Self.second)
    }
}
