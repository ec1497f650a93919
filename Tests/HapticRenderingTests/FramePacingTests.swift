import HapticRendering
import Testing

/// hid-nintendo's frames as `FramePacing` follows them from the pad's reports and the calls made.
@Suite struct FramePacingTests {
    /// Reports every 15 ms from 1 s, each up to 1 ms late (as an emulated pad's poll rounds up), seeded.
    static func reports(count: Int, lateness: Double = 0.001, seed: UInt64 = 7) -> [Double] {
        var state = seed
        return (0..<count).map { index in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let jitter = Double(state >> 11) / Double(1 << 53) * lateness
            return 1 + Double(index) * 0.015 + jitter
        }
    }

    @Test func thePeriodFollowsTheReportsWhateverTheirLatenessTheReportsNotReadAndAJumpInTheirPhase() {
        var pacing = FramePacing()
        // Read in bursts with reports lost between them, as the node's short queue loses them; halfway through,
        // the reports start again 6 ms later (an emulated pad late by more than a period starts again from then).
        for (index, time) in Self.reports(count: 400).enumerated() where index % 7 < 3 {
            pacing.report(at: time + (index >= 200 ? 0.006 : 0))
        }
        let period = pacing.reportPeriod ?? 0
        // Within 0.3 ms: over the 160 ms a grid is carried (the lead and four frames), 3 ms at most.
        #expect(abs(period - 0.015) < 0.0003, "\(period)")
    }

    @Test func aCallFromRestIsPlacedHalfAReportAfterAReport() throws {
        var pacing = FramePacing()
        #expect(pacing.callInstant(from: 1) == nil, "no report yet")
        let reports = Self.reports(count: 10, lateness: 0)
        for time in reports { pacing.report(at: time) }
        let last = try #require(reports.last)
        // Before the last report's lead: that instant; later, the same phase a whole number of periods on.
        #expect(abs(try #require(pacing.callInstant(from: last)) - (last + 0.0075)) < 1e-9)
        #expect(abs(try #require(pacing.callInstant(from: last + 0.008)) - (last + 0.0225)) < 1e-9)
        #expect(abs(try #require(pacing.callInstant(from: last + 0.0375)) - (last + 0.0375)) < 1e-9)
    }

    @Test func aPadReportingEveryEightMillisecondsHasNoGrid() {
        var pacing = FramePacing()
        for index in 0..<40 { pacing.report(at: 1 + Double(index) * 0.008) }
        #expect(pacing.grid(callingFrom: 1.4) == nil)
    }

    @Test func theGridIsEveryOtherReportAndKeepsTheParityOfTheFramesSent() throws {
        var pacing = FramePacing()
        let reports = Self.reports(count: 200, lateness: 0)
        for time in reports.prefix(10) { pacing.report(at: time) }
        let grid = try #require(pacing.grid(callingFrom: reports[9]))
        #expect(abs(grid.period - 0.030) < 1e-6)
        // Calls on the grid, one a frame for half a second, then rest: the worker's frames and then its resends (every
        // fourth report) stay on the grid's parity, and so does the grid.
        var call = grid.instant(atOrAfter: reports[12]) - FramePacing.callLead
        for _ in 0..<16 {
            pacing.called(at: call, moves: true)
            call += 0.030
        }
        pacing.called(at: call, moves: false)
        for time in reports.dropFirst(10) { pacing.report(at: time) }
        let later = try #require(pacing.grid(callingFrom: reports[199]))
        let offset = (later.origin - grid.origin) / 0.030
        #expect(abs(offset - offset.rounded()) < 0.01, "moved by \(offset) frames")
    }

    @Test func aSendOnTheOtherParityMovesTheGrid() throws {
        var pacing = FramePacing()
        let reports = Self.reports(count: 40, lateness: 0)
        for time in reports.prefix(10) { pacing.report(at: time) }
        let grid = try #require(pacing.grid(callingFrom: reports[9]))
        // A call from rest right after a report on the other parity: sent at once, its frame 25 ms later on the
        // first report then, which is on the other parity.
        let other = grid.instant(atOrAfter: reports[10]) + 0.015
        pacing.called(at: other + 0.001, moves: true)
        for time in reports.dropFirst(10) { pacing.report(at: time) }
        let moved = try #require(pacing.grid(callingFrom: reports[39]))
        let offset = (moved.origin - grid.origin) / 0.030
        #expect(abs(offset - offset.rounded() - 0.5) < 0.01 || abs(offset - offset.rounded() + 0.5) < 0.01)
    }
}
