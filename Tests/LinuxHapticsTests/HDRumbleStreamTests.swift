// The HD rumble stream without a pad: a file stands in for the hidraw node, so what the stream wrote can be read
// back report by report. Its pace against a real driver is the kernel tests' (hd/switch-pro/).
import AHAP
import Foundation
import Glibc
import HapticTestDevices
import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Testing

@testable import LinuxHaptics

@Suite struct HDRumbleStreamTests {
    /// A keeper that remembers what it was told; by default its timeout is an hour, so that no pause of the
    /// test's threads makes the stream skip a counter.
    final class RecordingKeeper: SilenceKeeper, @unchecked Sendable {
        let timeoutNanoseconds: UInt64
        init(timeoutNanoseconds: UInt64 = 3_600_000_000_000) { self.timeoutNanoseconds = timeoutNanoseconds }
        private let lock = NSLock()
        private var beats: [(armed: Bool, silence: [UInt8])] = []
        private var closed = false
        func heartbeat(armed: Bool, silence: [UInt8]) { lock.withLock { beats.append((armed, silence)) } }
        func close() { lock.withLock { closed = true } }
        var heartbeats: [(armed: Bool, silence: [UInt8])] { lock.withLock { beats } }
        var isClosed: Bool { lock.withLock { closed } }
    }

    /// Plays `pattern` from now on a stream into a file until `wait` has passed and `until` holds for the
    /// reports written so far (or 10 s, however slow the machine), closes it, and returns the reports written and
    /// the keeper.
    static func stream(
        _ pattern: HapticPattern, for wait: Duration,
        keeper: RecordingKeeper = RecordingKeeper(),
        until done: @escaping ([SwitchRumbleReport]) -> Bool = { _ in true }
    ) async throws -> (reports: [SwitchRumbleReport], keeper: RecordingKeeper) {
        let file = ReportFile()
        let stream = try HDRumbleStream(
            device: try file.device(), keeper: keeper, locality: .all, logger: quietLogger())
        func written() throws -> [SwitchRumbleReport?] {
            try file.reports(length: SwitchRumbleReport.length, SwitchRumbleReport.init(bytes:))
        }
        stream.play(pattern, atNanoseconds: MonotonicTime.nanoseconds())
        try await Task.sleep(for: wait)
        for _ in 0..<500 where !done(try written().compactMap { $0 }) {
            try await Task.sleep(for: .milliseconds(20))
        }
        stream.close()
        let reports = try written()
        #expect(!reports.contains(nil), "every write was one whole report")
        return (reports.compactMap { $0 }, keeper)
    }

    @Test func aToneIsWrittenAtItsBandWithCountersOneApartThenThreeReportsAtRest() async throws {
        let tone = AHAPFixtures.tone(seconds: 1, sharpness: 0.25)
        let (reports, keeper) = try await Self.stream(tone, for: .milliseconds(100)) { reports in
            reports.contains { !$0.frame.left.isAtRest } && reports.last?.frame.left.isAtRest == true
                && reports.reversed().prefix { $0.frame.left.isAtRest }.count >= HDRumbleStream.restReports
        }
        for (previous, next) in zip(reports, reports.dropFirst()) {
            #expect(next.counter == (previous.counter + 1) & 0x0f)
        }
        let playing = reports.filter { !$0.frame.left.isAtRest }
        try #require(!playing.isEmpty)
        let wanted = SharpnessFrequencyMap.hdRumble.frequency(sharpness: 0.25)
        for report in playing {
            #expect(abs(report.frame.left.lowFrequency / wanted - 1) < 0.03)
            #expect(report.frame.left == report.frame.right)
            #expect(report.frame.left.highAmplitudeIndex == 0)
        }
        let after = reports.drop { $0.frame.left.isAtRest }.drop { !$0.frame.left.isAtRest }
        #expect(after.count == HDRumbleStream.restReports)
        #expect(after.allSatisfy { $0.frame.left.isAtRest && $0.frame.right.isAtRest })
        // The keeper heard of every report before it was written, armed while it or the one before moved an
        // actuator, with the report at rest that would follow; after the first report at rest, it was disarmed.
        let beats = keeper.heartbeats
        #expect(beats.count == reports.count + 1)
        #expect(beats.filter(\.armed).count == playing.count + 1)
        let disarming = try #require(beats.firstIndex { !$0.armed })
        #expect(beats[disarming - 1].armed && beats[disarming - 1].silence == beats[disarming].silence)
        let perReport = Array(beats[..<disarming]) + Array(beats[(disarming + 1)...])
        for (beat, report) in zip(perReport, reports) {
            #expect(beat.silence == SwitchRumbleReport.rest(counter: report.counter &+ 1).bytes)
        }
        #expect(keeper.isClosed)
    }

    @Test func afterAnArmedPauseAsLongAsTheKeepersTimeoutTheNextReportSkipsTheCounterItsSilenceTook() async throws {
        // A keeper whose timeout is 0 may have written its silence before any report that follows an armed
        // heartbeat: each such report skips the counter of that silence.
        let tone = AHAPFixtures.tone(seconds: 1, sharpness: 0.25)
        let (reports, keeper) = try await Self.stream(
            tone, for: .milliseconds(100), keeper: RecordingKeeper(timeoutNanoseconds: 0)
        ) { reports in
            reports.contains { !$0.frame.left.isAtRest }
                && reports.reversed().prefix { $0.frame.left.isAtRest }.count >= HDRumbleStream.restReports
        }
        // One heartbeat per report, but for the disarming one after the first report at rest.
        let beats = keeper.heartbeats
        let disarming = try #require(beats.firstIndex { !$0.armed })
        let perReport = Array(beats[..<disarming]) + Array(beats[(disarming + 1)...])
        try #require(perReport.count == reports.count)
        var skipped = 0
        for index in reports.indices.dropFirst() {
            let previous = reports[index - 1]
            // The keeper was armed after the report before when that report, or the one before it, moved an
            // actuator: its silence then took the next counter, and this report the one after.
            let armed = perReport[index - 1].armed
            #expect(perReport[index - 1].silence == SwitchRumbleReport.rest(counter: previous.counter &+ 1).bytes)
            #expect(reports[index].counter == (previous.counter + (armed ? 2 : 1)) & 0x0f, "report \(index)")
            if armed { skipped += 1 }
        }
        #expect(skipped == reports.filter { !$0.frame.left.isAtRest }.count + 1)
    }

    @Test(
        arguments: [
            // (armed at, disarmed at, now, timeout, may have written), in ms
            (0, nil, 79, 100, false), (0, nil, 80, 100, true), (10, nil, 500, 100, true), (0, 50, 500, 100, false),
            (0, 85, 500, 100, true), (0, nil, 0, 0, true), (100, nil, 50, 100, false),
        ] as [(UInt64, UInt64?, UInt64, UInt64, Bool)])
    func theKeeperMayHaveWrittenOnceArmedForTwentyMillisecondsShortOfItsTimeout(
        armed: UInt64, disarmed: UInt64?, now: UInt64, timeout: UInt64, wrote: Bool
    ) {
        let ms: UInt64 = 1_000_000
        #expect(
            HDRumbleStream.keeperMayHaveWritten(
                armedAt: armed * ms, disarmedAt: disarmed.map { $0 * ms }, now: now * ms, timeout: timeout * ms)
                == wrote)
    }

    /// A keeper that acts as the guard process does, on the stream's own device: when a heartbeat reaches it
    /// after its timeout while armed, it first writes the silence the one before carried. One heartbeat, the
    /// `held`-th, is held up for `hold` before it reaches the keeper, as when the writer's thread stood still
    /// between taking its counter and sending the heartbeat.
    final class GuardingKeeper: SilenceKeeper, @unchecked Sendable {
        let timeoutNanoseconds: UInt64 = 100_000_000
        private let device: HidrawDevice
        private let held: Int
        private let hold: Duration
        private let lock = NSLock()
        private var beats = 0
        private var last: (armed: Bool, silence: [UInt8], at: UInt64)?
        private var written: [[UInt8]] = []

        init(device: HidrawDevice, held: Int, hold: Duration) {
            self.device = device
            self.held = held
            self.hold = hold
        }

        func heartbeat(armed: Bool, silence: [UInt8]) {
            let index = lock.withLock { () -> Int in
                defer { beats += 1 }
                return beats
            }
            if index == held { Thread.sleep(forTimeInterval: Double(hold.components.attoseconds) / 1e18) }
            lock.withLock {
                let now = MonotonicTime.nanoseconds()
                if let last, last.armed, now - last.at >= timeoutNanoseconds {
                    try? device.write(last.silence)
                    written.append(last.silence)
                }
                last = (armed, silence, now)
            }
        }

        func close() {}
        var silencesWritten: [[UInt8]] { lock.withLock { written } }
    }

    @Test func aHeartbeatHeldUpPastTheKeepersTimeoutAfterTheCounterWasTakenMakesTheReportTakeTheNextCounter()
        async throws
    {
        let file = ReportFile()
        let device = try file.device()
        // The second heartbeat, sent for the second report of a tone, 25 to 30 ms after the first: its counter is
        // taken with no skip, and then the thread stands still past the keeper's timeout.
        let keeper = GuardingKeeper(device: device, held: 1, hold: .milliseconds(150))
        let stream = try HDRumbleStream(device: device, keeper: keeper, locality: .all, logger: quietLogger())
        // Long enough that the report after the held heartbeat still plays on a slow machine: the stream is
        // closed once six reports are written.
        stream.play(AHAPFixtures.tone(seconds: 2, sharpness: 0.25), atNanoseconds: MonotonicTime.nanoseconds())
        func written() throws -> [SwitchRumbleReport?] {
            try file.reports(length: SwitchRumbleReport.length, SwitchRumbleReport.init(bytes:))
        }
        for _ in 0..<500 where try written().count < 6 {
            try await Task.sleep(for: .milliseconds(20))
        }
        stream.close()
        let reports = try written()
        #expect(!reports.contains(nil), "every write was one whole report")
        let all = reports.compactMap { $0 }
        // The keeper wrote its silence before the held-up report (and again after any other pause as long, on a
        // machine that slow): no two reports the pad got in a row share a counter, the keeper's among them.
        let silence = try #require(keeper.silencesWritten.first.flatMap(SwitchRumbleReport.init(bytes:)))
        let at = try #require(all.firstIndex(of: silence))
        #expect(at > 0 && at + 1 < all.count)
        for (previous, next) in zip(all, all.dropFirst()) {
            #expect(next.counter != previous.counter, "two reports in a row with one counter: \(all.map(\.counter))")
        }
        // The report after it took the next counter, or the one after that: the thread stood still after it read
        // the clock for the held heartbeat, so the keeper may have read that heartbeat before the stall and written
        // its silence too.
        let step = (all[at + 1].counter &- silence.counter) & 0x0f
        #expect(step == 1 || step == 2, "counters \(all.map(\.counter)), the keeper's silence at \(at)")
        #expect(!all[at + 1].frame.left.isAtRest)
    }

    @Test func closingMidPatternEndsWithAReportAtRestAndDisarmsTheKeeper() async throws {
        let (reports, keeper) = try await Self.stream(AHAPFixtures.tone(seconds: 5), for: .milliseconds(50)) {
            $0.contains { !$0.frame.left.isAtRest }
        }
        let last = try #require(reports.last)
        #expect(last.frame.left.isAtRest && last.frame.right.isAtRest)
        #expect(reports.dropLast().contains { !$0.frame.left.isAtRest })
        #expect(keeper.heartbeats.last?.armed == false)
    }

    @Test func nothingIsWrittenWhileNothingPlays() async throws {
        let silent = HapticPattern(events: [], parameters: [])
        let (reports, keeper) = try await Self.stream(silent, for: .milliseconds(100))
        #expect(reports.isEmpty)
        #expect(keeper.heartbeats.isEmpty)
    }
}

@Suite struct HDRumbleJoyConTests {
    @Test func aLoneJoyConsOneActuatorPlaysAHandlePatternOnBothSidesBytes() async throws {
        let file = ReportFile()
        let stream = try HDRumbleStream(
            device: try file.device(), keeper: nil, locality: .rightHandle, mirrorsSides: true, logger: quietLogger())
        stream.play(AHAPFixtures.tone(seconds: 5, sharpness: 0.8), atNanoseconds: MonotonicTime.nanoseconds())
        for _ in 0..<500 {
            try await Task.sleep(for: .milliseconds(20))
            if try file.bytes().count >= 2 * SwitchRumbleReport.length { break }
        }
        stream.close()
        let first = try #require(
            try file.reports(length: SwitchRumbleReport.length, SwitchRumbleReport.init(bytes:)).first ?? nil)
        #expect(!first.frame.right.isAtRest)
        #expect(first.frame.left == first.frame.right)
    }
}
