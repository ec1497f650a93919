import Dispatch
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

    @Test(arguments: [0.0064, 0.0095])
    func aLateLastReportMovesNeitherTheCallInstantNorTheGrid(lateness: Double) throws {
        let reports = Self.reports(count: 20, lateness: 0)
        var onTime = FramePacing()
        var late = FramePacing()
        for time in reports.dropLast() {
            onTime.report(at: time)
            late.report(at: time)
        }
        let last = try #require(reports.last)
        onTime.report(at: last)
        // The emulated pad's thread, or the host reading the report, late by under or over half a period: the
        // reports to come are not.
        late.report(at: last + lateness)
        #expect(late.lastReport == last + lateness)
        #expect(abs(try #require(late.onTimeReport) - last) < 1e-9)
        for from in [last + 0.007, last + 0.02, last + 0.05] {
            let expected = try #require(onTime.callInstant(from: from))
            #expect(abs(try #require(late.callInstant(from: from)) - expected) < 1e-9, "from \(from)")
        }
        // Calls on the frames for a while, the last report late: the frames stay on the grid the reports give.
        let grid = try #require(onTime.grid(callingFrom: last))
        let moved = try #require(late.grid(callingFrom: last))
        #expect(abs(moved.origin - grid.origin) < 1e-9, "\(moved) against \(grid)")
        #expect(abs(moved.period - grid.period) < 1e-9, "\(moved) against \(grid)")
    }

    @Test(arguments: [0.005, 0.0095])
    func aLateReportTheWorkerSentOnKeepsItsParityOnTheGrid(lateness: Double) throws {
        let reports = Self.reports(count: 30, lateness: 0)
        var onTime = FramePacing()
        var late = FramePacing()
        for time in reports.prefix(20) {
            onTime.report(at: time)
            late.report(at: time)
        }
        let grid = try #require(onTime.grid(callingFrom: reports[19]))
        // A call for the frame on the grid's next instant; the report that frame goes on comes `lateness` late.
        let frame = grid.instant(atOrAfter: reports[20])
        let call = frame - FramePacing.callLead
        onTime.called(at: call, moves: true)
        late.called(at: call, moves: true)
        let index = try #require(reports.firstIndex { abs($0 - frame) < 1e-9 })
        for time in reports[20...index] {
            onTime.report(at: time)
            late.report(at: time == frame ? time + lateness : time)
        }
        let expected = try #require(onTime.grid(callingFrom: frame + 0.001))
        let moved = try #require(late.grid(callingFrom: frame + lateness + 0.001))
        #expect(abs(Self.frames(moved, from: expected)) < 1e-6, "\(moved) against \(expected)")
        #expect(abs(moved.origin - expected.origin) < 1e-9)
    }

    @Test func fromLinux64AFrameLeavesTheMiddleOfATickRoundedFourMillisecondsAfterItsReportOverUSBOnly() throws {
        let rules = { (from64: Bool, tick: Double?, usb: Bool) in
            FramePacing.Rules.forKernel(from64: from64, tick: tick, overUSB: usb)
        }
        #expect(rules(false, 0.004, true) == .linux61)
        #expect(rules(false, 0.004, false) == .linux61, "before 6.4 the bus changes nothing")
        #expect(rules(true, 0.004, false) == nil, "from 6.4 Bluetooth sends are 60 ms apart")
        // msleep(4) waits two ticks at 250 Hz (4 to 8 ms), five at 1000 Hz (4 to 5 ms).
        let debian = try #require(rules(true, 0.004, true))
        #expect(debian.waitsForReport && debian.spacing == 0.020 && abs(debian.sendDelay - 0.006) < 1e-12)
        #expect(abs((try #require(rules(true, 0.001, true))).sendDelay - 0.0045) < 1e-12)
        #expect(abs((try #require(rules(true, nil, true))).sendDelay - 0.006) < 1e-12, "no tick read: 250 Hz")
    }

    /// The grid's offset from `reference`'s, in frames, between -0.5 and 0.5.
    static func frames(_ grid: FrameGrid, from reference: FrameGrid) -> Double {
        let offset = (grid.origin - reference.origin) / reference.period
        return offset - offset.rounded()
    }

    @Test func fromLinux64ACallFromRestGoesOnTheNextReportAndItsFramesLeaveTheSendDelayLater() throws {
        let reports = Self.reports(count: 40, lateness: 0)
        let rules = FramePacing.Rules(waitsForReport: true, spacing: 0.020, sendDelay: 0.006)
        var older = FramePacing()
        var newer = FramePacing(rules: rules)
        for time in reports.prefix(10) {
            older.report(at: time)
            newer.report(at: time)
        }
        // A call 1 ms after a report: 6.1 sends at once and its frame on the report 30 ms on; 6.4 waits for the
        // next report, 15 ms on, and its frames keep that parity.
        let call = reports[10] + 0.001
        older.called(at: call, moves: true)
        newer.called(at: call, moves: true)
        for time in reports[10..<14] {
            older.report(at: time)
            newer.report(at: time)
        }
        let old = try #require(older.grid(callingFrom: reports[13]))
        let new = try #require(newer.grid(callingFrom: reports[13]))
        #expect(abs(Self.frames(old, from: try #require(FrameGrid(origin: reports[12], period: 0.030)))) < 1e-6)
        #expect(abs(Self.frames(new, from: try #require(FrameGrid(origin: reports[11] + 0.006, period: 0.030)))) < 1e-6)
    }

    @Test func fromLinux64EachResendGoesOnTheReportAfterTheOneThatStartsIt() throws {
        let reports = Self.reports(count: 60, lateness: 0)
        var pacing = FramePacing(rules: FramePacing.Rules(waitsForReport: true, spacing: 0.020, sendDelay: 0.006))
        for time in reports.prefix(10) { pacing.report(at: time) }
        // One moving call: on the next report the worker sends the frame it sent last, 30 ms later the call's, and
        // 30 ms later once more (the driver started it again on the first report, 50 ms after the last frame left
        // long before); then the driver starts it on a report 50 ms after the frame left, and again on the next
        // (the frame has not left yet): two sends, on the report after it and 30 ms later, each start counting one
        // resend of the five.
        pacing.called(at: reports[10] + 0.0075, moves: true)
        pacing.report(at: reports[10])
        var sends: [Double] = []
        for time in reports.dropFirst(11) {
            pacing.report(at: time)
            let send = try #require(pacing.grid(callingFrom: time)).origin - 0.006
            if sends.last.map({ abs($0 - send) > 1e-6 }) ?? true { sends.append(send) }
        }
        #expect(abs(sends[0] - reports[11]) < 1e-6, "the first send: \(sends)")
        let spacings = zip(sends, sends.dropFirst()).map { (($1 - $0) * 1000).rounded() }
        #expect(spacings == [30, 30, 75, 30, 75, 30], "\(spacings)")
    }

    @Test func aFirstReportReadLateLeavesThePeriodAndTheGridToTheReportsAfterIt() throws {
        // The first report 9 ms late, as when the pad's thread or the host is busy as the engine opens the pad: a
        // first interval of 6 ms, which seeded the period before.
        var reports = Self.reports(count: 12, lateness: 0)
        reports[0] += 0.009
        var pacing = FramePacing()
        for time in reports { pacing.report(at: time) }
        let period = try #require(pacing.reportPeriod)
        #expect(abs(period - 0.015) < 0.0003, "\(period)")
        #expect(pacing.grid(callingFrom: reports[11]) != nil)
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

    /// Whether `body` returns within `seconds`, run on a thread of its own: one that never returns fails the test
    /// rather than hanging it (its thread spins on until the process ends).
    static func returns(within seconds: Double, _ body: @escaping @Sendable () -> Void) -> Bool {
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            body()
            done.signal()
        }
        return done.wait(timeout: .now() + seconds) == .success
    }

    /// A report, or a grid asked for, far beyond the last report (1e9 s on, or at 1e300 s): the reports start again
    /// from there, as from the first, and five reports on the grid is back. Taking such a report ran every report
    /// between, one by one (billions), and at 1e300 trapped counting them as an `Int`; a grid asked for that far
    /// ahead ran them too, and at 1e300, where a period no longer moves the time, never ended.
    @Test(arguments: [1e9, 1e300])
    func aReportOrAGridFarBeyondTheLastReportStartsTheReportsAgainAtOnce(time: Double) throws {
        var pacing = FramePacing()
        for report in Self.reports(count: 10, lateness: 0) { pacing.report(at: report) }
        pacing.called(at: 1.14, moves: true)
        let before = pacing
        let grid = Self.returns(within: 10) { _ = before.grid(callingFrom: time) }
        #expect(grid, "the grid from \(time) was not found in 10 s")
        let after = Self.returns(within: 10) {
            var pacing = before
            pacing.report(at: time)
            precondition(pacing.lastReport == time && pacing.grid(callingFrom: time) == nil)
        }
        try #require(after, "the report at \(time) was not taken in 10 s")
        pacing.report(at: time)
        #expect(pacing.lastReport == time && pacing.onTimeReport == time)
        guard time + 0.015 > time else { return }
        for index in 1...5 { pacing.report(at: time + Double(index) * 0.015) }
        let origin = try #require(pacing.grid(callingFrom: time + 0.1)).origin
        let offset = (origin - time) / 0.015
        #expect(abs(offset - offset.rounded()) < 1e-3, "the grid's origin \(origin) is on the reports")
    }
}
