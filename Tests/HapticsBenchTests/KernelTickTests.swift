import Testing

@testable import haptics_bench

@Suite struct KernelTickTests {
    @Test func jiffiesOverAQuarterSecondGiveTheNearestPeriodTheKernelCanHave() {
        #expect(KernelTick.period(jiffies: 62, overNanoseconds: 250_300_000) == 4_000_000)
        #expect(KernelTick.period(jiffies: 25, overNanoseconds: 251_000_000) == 10_000_000)
        #expect(KernelTick.period(jiffies: 75, overNanoseconds: 250_000_000) == 3_333_333)
        #expect(KernelTick.period(jiffies: 251, overNanoseconds: 250_000_000) == 1_000_000)
    }

    @Test func aCountNearNoPeriodTheKernelCanHaveOrNoCountGivesNone() {
        // 6 ms a tick: none of 1, 3.33, 4 or 10 ms is within 10 % of it.
        #expect(KernelTick.period(jiffies: 40, overNanoseconds: 240_000_000) == nil)
        #expect(KernelTick.period(jiffies: 0, overNanoseconds: 250_000_000) == nil)
        #expect(KernelTick.period(jiffies: 62, overNanoseconds: 0) == nil)
    }

    @Test func thePeriodIsTheOneTwoOfThreeReadingsNameAndNoneWhenNoTwoAgree() {
        #expect(KernelTick.agreed([4_000_000, 3_333_333, 4_000_000]) == 4_000_000)
        #expect(KernelTick.agreed([3_333_333, 4_000_000, 4_000_000]) == 4_000_000)
        #expect(KernelTick.agreed([nil, 4_000_000, 4_000_000]) == 4_000_000)
        #expect(KernelTick.agreed([4_000_000, 3_333_333, 10_000_000]) == nil)
        #expect(KernelTick.agreed([4_000_000, nil, nil]) == nil)
        #expect(KernelTick.agreed([]) == nil)
    }

    @Test func aCallIsTimedAQuarterOfATickPastTheFirstTickItCanFollow() {
        let tick: Int64 = 4_000_000
        // Ticks at multiples of 4 ms; calls at 1 ms past one, not before the earliest time asked.
        #expect(KernelTick.callTime(notBefore: 10_000_000_000, period: tick) == 10_001_000_000)
        #expect(KernelTick.callTime(notBefore: 10_000_500_000, period: tick) == 10_001_000_000)
        #expect(KernelTick.callTime(notBefore: 10_001_000_000, period: tick) == 10_001_000_000)
        #expect(KernelTick.callTime(notBefore: 10_001_000_001, period: tick) == 10_005_000_000)
        #expect(KernelTick.callTime(notBefore: 10_003_999_999, period: tick) == 10_005_000_000)
        // A period that is no whole number of microseconds (HZ 300) keeps its grid.
        let odd: Int64 = 3_333_333
        let call = KernelTick.callTime(notBefore: 7_000_000_000, period: odd)
        #expect(call >= 7_000_000_000 && call - 7_000_000_000 < odd)
        #expect((call - odd / 4) % odd == 0)
    }
}
