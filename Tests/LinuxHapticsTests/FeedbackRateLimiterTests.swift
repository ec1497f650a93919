// The rate limits, exactly: which calls of a given sequence are admitted and which are dropped, and why.
import LinuxHaptics
@testable import AppHaptics
import Testing

@Suite struct FeedbackRateLimiterTests {
    /// Feeds calls at `milliseconds` and returns the times admitted.
    static func admitted(
        _ milliseconds: [Int], limits: FeedbackRateLimits = .standard
    ) -> (admitted: [Int], limiter: FeedbackRateLimiter) {
        var limiter = FeedbackRateLimiter(limits: limits)
        let admitted = milliseconds.filter { limiter.admit(at: .milliseconds($0)) == .admitted }
        return (admitted, limiter)
    }

    @Test func aCallEvery10msForOneSecond() {
        let calls = Array(stride(from: 0, through: 1000, by: 10))
        let (admitted, limiter) = Self.admitted(calls)
        // 50 ms spacing lets 0...200 through, then the burst limit (5 per 500 ms) holds until 500, 550...,
        // and the sustained limit (10 per second) is reached at 1000, exactly one second after the first.
        #expect(admitted == [0, 50, 100, 150, 200, 500, 550, 600, 650, 700, 1000])
        #expect(limiter.admittedCount == 11)
        #expect(limiter.droppedCount == calls.count - 11)
    }

    @Test func aCallEvery60ms() {
        let calls = Array(stride(from: 0, through: 1200, by: 60))
        let (admitted, limiter) = Self.admitted(calls)
        #expect(admitted == [0, 60, 120, 180, 240, 540, 600, 660, 720, 780, 1080, 1140, 1200])
        #expect(limiter.droppedCount == 8)
    }

    @Test func tenPerSecondEvenlySpacedIsExactlyAllowed() {
        let calls = Array(stride(from: 0, through: 3000, by: 100))
        let (admitted, limiter) = Self.admitted(calls)
        #expect(admitted == calls)
        #expect(limiter.droppedCount == 0)
    }

    /// Limits with counts as large as `Int.max` (no count limit) keep only the admissions within the longer window:
    /// a call a millisecond for ten seconds keeps a second's (until 6 December it kept all 10,000).
    @Test func hugeCountsKeepOnlyTheAdmissionsWithinTheWindow() {
        let limits = FeedbackRateLimits(
            sustainedCount: .max, sustainedWindow: .seconds(1), burstCount: .max, burstWindow: .milliseconds(500),
            minimumSpacing: .zero)
        let calls = Array(0..<10_000)
        let (admitted, limiter) = Self.admitted(calls, limits: limits)
        #expect(admitted == calls)
        #expect(limiter.keptAdmissions <= 1001, "\(limiter.keptAdmissions)")
        // The window still counts: the standard limits after pruning admit exactly as before.
        #expect(Self.admitted(Array(stride(from: 0, through: 1000, by: 10))).admitted.count == 11)
    }

    @Test func theVerdictSaysWhichLimitDropped() {
        var limiter = FeedbackRateLimiter()
        #expect(limiter.admit(at: .milliseconds(0)) == .admitted)
        #expect(limiter.admit(at: .milliseconds(49)) == .dropped(.tooSoon))
        for time in [50, 100, 150, 200] { #expect(limiter.admit(at: .milliseconds(time)) == .admitted) }
        #expect(limiter.admit(at: .milliseconds(499)) == .dropped(.burstLimit))
        #expect(limiter.admit(at: .milliseconds(500)) == .admitted)
    }

    @Test func sustainedLimitAloneWithoutBurstOrSpacing() {
        let limits = FeedbackRateLimits(burstCount: 100, minimumSpacing: .zero)
        var limiter = FeedbackRateLimiter(limits: limits)
        let verdicts = (0..<20).map { limiter.admit(at: .milliseconds($0)) }
        #expect(verdicts.prefix(10).allSatisfy { $0 == .admitted })
        #expect(verdicts.dropFirst(10).allSatisfy { $0 == .dropped(.sustainedLimit) })
        #expect(limiter.admit(at: .milliseconds(999)) == .dropped(.sustainedLimit))
        #expect(limiter.admit(at: .milliseconds(1000)) == .admitted, "the first admission left the window")
    }

    @Test func minimumSpacingIsConfigurable() {
        let limits = FeedbackRateLimits.standard.withMinimumSpacing(.milliseconds(100))
        let (admitted, limiter) = Self.admitted([0, 99, 100, 150, 200], limits: limits)
        #expect(admitted == [0, 100, 200])
        #expect(limiter.droppedCount == 2)
        #expect(FeedbackRateLimits.standard.withMinimumSpacing(.milliseconds(-5)).minimumSpacing == .zero)
    }

    @Test func aLongFloodIsDroppedNotQueued() {
        // 100 000 calls 1 ms apart (100 s): nothing is held back for later, so exactly the limits' share plays.
        let (admitted, limiter) = Self.admitted(Array(0..<100_000))
        #expect(limiter.admittedCount + limiter.droppedCount == 100_000)
        // Steady state: each second admits 10, five 50 ms apart at its start and five at its middle.
        #expect(admitted.count == 1000)
        #expect(zip(admitted, admitted.dropFirst(5)).allSatisfy { $1 - $0 >= 500 })
    }
}
