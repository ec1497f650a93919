import Testing

@testable import haptics_bench

@Suite struct DriverFidelityTests {
    /// A 20 ms pulse at 10-30 ms of a 60 ms target.
    static let target = (0..<60).map { $0 >= 10 && $0 < 30 ? 1.0 : 0 }

    /// The same pulse played `lag` samples late (early when negative), sampled from `before` samples before 0.
    static func played(lag: Int, before: Int) -> [Double] {
        DriverBench.sampled(
            { time in (10 + lag..<30 + lag).contains(Int((time * 1000).rounded())) ? 1 : 0 },
            count: 160, before: before)
    }

    @Test func theBestLagOfALateOutputIsItsDelayAndLeavesNoError() {
        let best = DriverBench.bestLag(Self.played(lag: 40, before: 50), Self.target, before: 50)
        #expect(best.lag == 40)
        #expect(best.squares == 0)
    }

    @Test func anEarlyOutputIsFittedByANegativeLagWhenSampledFromBeforeTheOrigin() {
        let best = DriverBench.bestLag(Self.played(lag: -8, before: 50), Self.target, before: 50)
        #expect(best.lag == -8)
        #expect(best.squares == 0)
    }

    @Test func atLagZeroTheErrorCountsEverySampleTheOutputMisses() {
        let early = Self.played(lag: -8, before: 50)
        // 8 samples early at the start and 8 missing at the end of the pulse.
        #expect(DriverBench.squaredError(early, Self.target, lag: 0, before: 50) == 16)
    }
}
