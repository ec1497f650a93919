// The trigger motors' report writer without a pad: a file stands in for the hidraw node, so each report written
// can be read back.
import Foundation
import Glibc
import HapticRendering
import LinuxInput
import Logging
import Testing
@_spi(Internals) import LinuxSystem

@testable import LinuxHaptics

@Suite struct XboxReportWriterTests {
    static func reports(in file: ReportFile) throws -> [XboxRumbleReport] {
        let reports = try file.reports(length: XboxRumbleReport.length, XboxRumbleReport.init(bytes:))
        #expect(!reports.contains(nil), "every write was one whole report 3")
        return reports.compactMap { $0 }
    }

    @Test func triggerAndBodyMembersShareOneReportThatEnablesTheBodyOnlyWhileOneDrivesIt() throws {
        let file = ReportFile()
        let path = file.path
        let logger = quietLogger()
        let triggers = try XboxReportWriter.join(path, as: .triggers, logger: logger)
        let body = try XboxReportWriter.join(path, as: .body, logger: logger)
        try triggers.writer.set(triggers.member, MotorMagnitudes(strong: 0.3, weak: 0.3))
        try body.writer.set(body.member, MotorMagnitudes(strong: 0.7, weak: 0.2))
        body.writer.leave(body.member)
        triggers.writer.leave(triggers.member)
        let written = try Self.reports(in: file)
        #expect(written.map(\.enable) == [0x0f, 0x0f, 0x0c, 0x0c])
        #expect(written.map(\.leftTrigger) == [30, 30, 30, 0] && written.map(\.rightTrigger) == [30, 30, 30, 0])
        #expect(written.map(\.strong) == [0, 70, 0, 0] && written.map(\.weak) == [0, 20, 0, 0])
    }

    @Test func twoEnginesOnOnePadShareOneReportEachKeepingTheOthersTrigger() throws {
        let file = ReportFile()
        let path = file.path
        let logger = quietLogger()
        let left = try XboxReportWriter.join(path, as: .triggers, logger: logger)
        let right = try XboxReportWriter.join(path, as: .triggers, logger: logger)
        #expect(left.writer === right.writer)
        try left.writer.set(left.member, MotorMagnitudes(strong: 0.5, weak: 0))
        try right.writer.set(right.member, MotorMagnitudes(strong: 0, weak: 0.8))
        right.writer.leave(left.member)
        right.writer.leave(right.member)
        let written = try Self.reports(in: file)
        #expect(written.map(\.leftTrigger) == [50, 50, 0, 0])
        #expect(written.map(\.rightTrigger) == [0, 80, 80, 0])
        let triggers = XboxRumbleReport.enableLeftTrigger | XboxRumbleReport.enableRightTrigger
        #expect(written.allSatisfy { $0.enable == triggers && $0.strong == 0 && $0.weak == 0 })
        #expect(written.allSatisfy { $0.duration == XboxReportOutput.durationUnits && $0.loopCount == 0 })
        // The last member closed the node: a set after it is refused, and a new member opens it again.
        #expect(throws: OutputFailure.self) { try left.writer.set(left.member, .off) }
        let again = try XboxReportWriter.join(path, as: .triggers, logger: logger)
        #expect(again.writer !== left.writer)
        again.writer.leave(again.member)
    }

    /// Of two members that renew (two trigger engines playing), the first with levels writes its renewals; the
    /// other's go out only when no report did for a renewal interval (the first late), and it takes over once the
    /// first is at rest. Until 6 December each engine wrote its own, 40 reports a second for one pad.
    @Test func ofTwoMembersThatRenewOneWritesTheOthersOnlyWhenNoReportWentOutForAnInterval() throws {
        let file = ReportFile()
        let now = Lock<UInt64>(1_000_000_000)
        func at(_ milliseconds: UInt64) { now.withLock { $0 = 1_000_000_000 + milliseconds * 1_000_000 } }
        let logger = quietLogger()
        let left = try XboxReportWriter.join(file.path, as: .triggers, logger: logger) { now.withLock { $0 } }
        let right = try XboxReportWriter.join(file.path, as: .triggers, logger: logger)
        let writer = left.writer
        try writer.set(left.member, MotorMagnitudes(strong: 0.5, weak: 0))
        at(1)
        try writer.set(right.member, MotorMagnitudes(strong: 0, weak: 0.8))
        var written: [Int] = []
        func renew(_ member: Int, at milliseconds: UInt64) throws {
            at(milliseconds)
            try writer.renew(member)
            written.append(try Self.reports(in: file).count)
        }
        try renew(left.member, at: 50)  // the first renews: written
        try renew(right.member, at: 51)  // 1 ms after a report: left out
        try renew(right.member, at: 101)  // the first is late, nothing for 51 ms: written
        try renew(left.member, at: 104)  // the first's own renewal: written
        at(110)
        try writer.set(left.member, .off)
        try renew(right.member, at: 111)  // now the first with levels: written
        #expect(written == [3, 3, 4, 5, 7])
        writer.leave(left.member)
        writer.leave(right.member)
    }
}

@Suite struct ReportDiversionTests {
    @Test func aRumbleOutputJoinsTheReportOnlyWhileATriggerEngineWritesItAndLeavesWithItsLastLevels() throws {
        let file = ReportFile()
        let path = file.path
        let logger = quietLogger()
        let diversion = ReportDiversion(node: path, logger: logger)
        #expect(!diversion.isActive && !diversion.isJoined)
        let trigger = try XboxReportWriter.join(path, as: .triggers, logger: logger)
        #expect(diversion.isActive)
        try diversion.route(MotorMagnitudes(strong: 0.4, weak: 0.1))
        #expect(diversion.isJoined)
        trigger.writer.leave(trigger.member)
        #expect(!diversion.isActive)
        #expect(diversion.leave() == MotorMagnitudes(strong: 0.4, weak: 0.1))
        #expect(!diversion.isJoined && diversion.leave() == nil)
        let written = try XboxReportWriterTests.reports(in: file)
        // The body joined (all four enabled, its levels), the trigger left (the body alone), the body left.
        #expect(written.map(\.enable) == [0x0f, 0x0f, 0x0c])
        #expect(written.map(\.strong) == [40, 40, 0])
    }
}
