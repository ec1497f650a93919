// The HD rumble stream without a pad: a file stands in for the hidraw node, so what the stream wrote can be read
// back report by report, and a `SteppedClock` stands in for the monotonic clock, so the stream's own thread writes
// each report at the time it asked for however late the machine runs it. Its pace against a real driver, on the
// real clock, is the kernel tests' (hd/switch-pro/).
import AHAP
import AudioRendering
import Foundation
import HapticTestDevices
import HapticRendering
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Testing

@testable import LinuxHaptics

@Suite struct HDRumbleStreamTests {
    /// A keeper that remembers what it was told, and when on `clock`; its timeout is an hour unless given, so that
    /// the stream skips no counter.
    final class RecordingKeeper: SilenceKeeper, @unchecked Sendable {
        let timeoutNanoseconds: UInt64
        private let clock: SteppedClock
        /// Found gone by the heartbeat with this index and every later one (never when nil).
        private let goneFrom: Int?
        init(clock: SteppedClock, timeoutNanoseconds: UInt64 = 3_600_000_000_000, goneFrom: Int? = nil) {
            self.clock = clock
            self.timeoutNanoseconds = timeoutNanoseconds
            self.goneFrom = goneFrom
        }
        private let lock = NSLock()
        private var beats: [(armed: Bool, silence: [UInt8], at: Double)] = []
        private var closed = false
        func heartbeat(armed: Bool, silence: [UInt8]) {
            let now = clock.now
            lock.withLock { beats.append((armed, silence, now)) }
        }
        var isGone: Bool { lock.withLock { goneFrom.map { beats.count > $0 } ?? false } }
        func close() { lock.withLock { closed = true } }
        var heartbeats: [(armed: Bool, silence: [UInt8], at: Double)] { lock.withLock { beats } }
        var isClosed: Bool { lock.withLock { closed } }
    }

    /// A stream into a file on a clock that moves only when the test moves it.
    final class SteppedStream {
        let file = ReportFile()
        let clock = SteppedClock(startingAt: 100)
        /// The file opened as the first stream's node (each stream opens its own, as each opens the pad's).
        let device: HidrawDevice
        /// The first member started (`start`), the engine whose stream it is.
        private(set) var stream: HDRumbleMember?
        private var streamsMade = 0

        init() throws { device = try file.device() }

        /// The node a new stream writes: `device` for the first, the file opened again for each later one.
        func nextDevice() throws(OutputFailure) -> HidrawDevice {
            defer { streamsMade += 1 }
            guard streamsMade > 0 else { return device }
            do {
                return try file.device()
            } catch {
                throw OutputFailure(.other, "\(error)")
            }
        }

        /// Starts the stream, its keeper made from the clock and its node, and returns its first member; called
        /// again, a member that joins it (another engine on the same pad), or of a new stream once it has ended.
        func start(
            keeper: (SteppedClock, HidrawDevice) -> any SilenceKeeper, locality: HapticLocality = .all,
            mirrorsSides: Bool = false, gain: Double = 1
        ) throws -> HDRumbleMember {
            let member = try HDRumbleMember.joining(
                file.path, locality: locality, mirrorsSides: mirrorsSides, gain: gain
            ) { () throws(OutputFailure) -> HDRumbleStream in
                let device = try nextDevice()
                do throws(HapticEngineError) {
                    return try HDRumbleStream(
                        device: device, keeper: keeper(clock, device), clock: clock, logger: quietLogger())
                } catch {
                    throw OutputFailure(.other, error.message)
                }
            }
            if stream == nil { stream = member }
            return member
        }

        /// Plays `pattern` from now, `after` seconds on.
        func play(_ pattern: HapticPattern, after seconds: Double = 0) {
            stream?.play(pattern, atNanoseconds: MonotonicClock.nanoseconds(clock.now + seconds))
        }

        /// Moves time on by `seconds`, the stream's thread writing every report due on the way.
        func advance(by seconds: Double) { clock.advance(by: seconds) }

        /// Every report written so far; each write was one whole report.
        func reports() throws -> [SwitchRumbleReport] {
            let written = try file.reports(length: SwitchRumbleReport.length, SwitchRumbleReport.init(bytes:))
            #expect(!written.contains(nil), "every write was one whole report")
            return written.compactMap { $0 }
        }
    }

    /// Milliseconds from `start` (100 s, where every `SteppedStream` starts) to each of `times`, rounded.
    static func milliseconds(_ times: [Double], from start: Double = 100) -> [Int] {
        times.map { Int((($0 - start) * 1000).rounded()) }
    }

    /// A keeper found gone while a tone plays (killed, or its channel broken): nothing would put the pad at rest if
    /// this process died, so the stream puts it at rest at once and ends with a failure the engine hears (it played
    /// on unguarded until its end).
    @Test func aKeeperFoundGoneEndsTheStreamAtRest() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock, goneFrom: 2)
        let stream = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 1, sharpness: 0.25))
        rig.advance(by: 1.5)
        let reports = try rig.reports()
        stream.close()
        #expect(reports.map { $0.frame.left.isAtRest } == [false, false, false, true], "\(reports.count) reports")
        #expect(stream.failure?.message.contains("the silence guard") == true, "\(stream.failure as Any)")
    }

    /// The engine's gain scales every band's amplitude (it was left out, so `--gain 0.2` played at full strength);
    /// at 0 nothing moves the actuators.
    @Test func theEnginesGainScalesEveryAmplitude() throws {
        func amplitudes(gain: Double) throws -> [Double] {
            let rig = try SteppedStream()
            _ = try rig.start(keeper: { clock, _ in RecordingKeeper(clock: clock) }, gain: gain)
            rig.play(AHAPFixtures.tone(seconds: 0.1, intensity: 1, sharpness: 0.25))
            rig.advance(by: 1)
            rig.stream?.close()
            return try rig.reports().map { $0.frame.left.lowAmplitude }.filter { $0 > 0 }
        }
        let full = try amplitudes(gain: 1)
        let half = try amplitudes(gain: 0.5)
        #expect(full.count == 4 && half.count == 4)
        for (loud, quiet) in zip(full, half) {
            #expect(abs(quiet / loud - 0.5) < 0.05, "\(quiet) at gain 0.5 against \(loud) at 1")
        }
        #expect(try amplitudes(gain: 0).isEmpty)
    }

    /// A 0.1 s tone's moment 20 ms in, asked for half a second later (a command that woke late to print it), is the
    /// tone's band as it was sent; what the actuators do by then is rest. Read as the last report written, the tone
    /// was printed as silence whenever the reader woke after the tone's end.
    @Test func aMomentAskedForAfterItPassedIsWhatTheActuatorsPlayedThen() throws {
        let rig = try SteppedStream()
        _ = try rig.start { _, _ in RecordingKeeper(clock: rig.clock) }
        rig.play(AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25))
        rig.advance(by: 0.5)
        let stream = try #require(rig.stream)
        let then = stream.activity(at: 100.02)
        #expect(then.left > 0.5 && then.right > 0.5, "\(then)")
        let wanted = SharpnessFrequencyMap.hdRumble.frequency(sharpness: 0.25)
        #expect(then.frequency.map { abs($0 / wanted - 1) < 0.03 } ?? false, "\(then)")
        #expect(stream.activity == .atRest && stream.activity(at: 100.5) == .atRest)
        #expect(stream.activity(at: 99.9) == .atRest, "before the tone, nothing played")
        stream.close()
    }

    @Test func aToneIsWrittenEvery30MillisecondsAtItsBandWithCountersOneApartThenThreeReportsAtRest() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25))
        rig.advance(by: 1)
        rig.stream?.close()
        let reports = try rig.reports()
        // The tone sounds over the updates at 0, 30, 60 and 90 ms; the three at rest follow at the same pace, then
        // nothing.
        #expect(reports.map(\.counter) == Array(0..<7))
        let playing = reports.filter { !$0.frame.left.isAtRest }
        #expect(playing.count == 4)
        #expect(Array(reports.prefix(4)) == playing)
        let wanted = SharpnessFrequencyMap.hdRumble.frequency(sharpness: 0.25)
        for report in playing {
            #expect(abs(report.frame.left.lowFrequency / wanted - 1) < 0.03)
            #expect(report.frame.left == report.frame.right)
            #expect(report.frame.left.highAmplitudeIndex == 0)
        }
        #expect(reports.dropFirst(4).allSatisfy { $0.frame.left.isAtRest && $0.frame.right.isAtRest })
        // The keeper heard of every report before it was written, armed while it or the one before moved an
        // actuator, with the report at rest that would follow; after the first report at rest, it was disarmed.
        let beats = keeper.heartbeats
        #expect(beats.count == reports.count + 1)
        #expect(beats.map(\.armed) == [true, true, true, true, true, false, false, false])
        #expect(Self.milliseconds(beats.map(\.at)) == [0, 30, 60, 90, 120, 120, 150, 180])
        #expect(beats[4].silence == beats[5].silence)
        let perReport = Array(beats[..<5]) + Array(beats[6...])
        for (beat, report) in zip(perReport, reports) {
            #expect(beat.silence == SwitchRumbleReport.rest(counter: report.counter &+ 1).bytes)
        }
        #expect(keeper.isClosed)
    }

    @Test func aSourceStartingBetweenUpdatesIsWritten25MillisecondsAfterTheLastReportNot30() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 5, intensity: 0.2, sharpness: 0.25))
        rig.advance(by: 0.010)
        rig.play(AHAPFixtures.tone(seconds: 5, intensity: 1, sharpness: 0.25))
        rig.advance(by: 0.060)
        rig.stream?.close()
        // The second source is written as soon as hid-nintendo's spacing allows; the regular pace goes on from
        // there.
        #expect(Self.milliseconds(keeper.heartbeats.dropLast().map(\.at)) == [0, 25, 55])
        let reports = try rig.reports()
        try #require(reports.count == 4)
        #expect(reports[1].frame.left.lowAmplitude > reports[0].frame.left.lowAmplitude)
        #expect(reports[3].frame.left.isAtRest)
    }

    @Test func aSourceThatStartsLaterIsWrittenFirstAtItsStart() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 1, sharpness: 0.25), after: 0.2)
        rig.advance(by: 0.199)
        #expect(try rig.reports().isEmpty)
        rig.advance(by: 0.002)
        #expect(try rig.reports().count == 1)
        #expect(Self.milliseconds(keeper.heartbeats.map(\.at)) == [200])
        rig.stream?.close()
    }

    @Test func afterAnArmedPauseAsLongAsTheKeepersTimeoutTheNextReportSkipsTheCounterItsSilenceTook() throws {
        // A keeper whose timeout is 0 may have written its silence before any report that follows an armed
        // heartbeat: each such report skips the counter of that silence.
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock, timeoutNanoseconds: 0)
        _ = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25))
        rig.advance(by: 1)
        rig.stream?.close()
        let reports = try rig.reports()
        // Four reports that play and three at rest; the keeper was armed after the first five (the fifth, at rest,
        // follows one that played), so each of the five after the first skipped one counter.
        #expect(reports.map(\.counter) == [0, 2, 4, 6, 8, 10, 11])
        // One heartbeat per report, but for the disarming one after the first report at rest.
        let beats = keeper.heartbeats
        try #require(beats.count == reports.count + 1 && !beats[5].armed)
        let perReport = Array(beats[..<5]) + Array(beats[6...])
        for (beat, report) in zip(perReport, reports) {
            #expect(beat.silence == SwitchRumbleReport.rest(counter: report.counter &+ 1).bytes)
        }
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
    /// after its timeout while armed, it first writes the silence the one before carried. While it takes one
    /// heartbeat, the `held`-th, the machine stands still for `hold` seconds: before the keeper hears of it (the
    /// writer's thread stood still between taking its counter and sending the heartbeat) or after.
    final class GuardingKeeper: SilenceKeeper, @unchecked Sendable {
        let timeoutNanoseconds: UInt64 = 100_000_000
        let isGone = false
        private let clock: SteppedClock
        private let device: HidrawDevice
        private let held: Int
        private let hold: Double
        private let holdsAfterHearing: Bool
        private let lock = NSLock()
        private var beats = 0
        private var last: (armed: Bool, silence: [UInt8], at: UInt64)?
        private var written: [[UInt8]] = []

        init(clock: SteppedClock, device: HidrawDevice, held: Int, hold: Double, holdsAfterHearing: Bool) {
            self.clock = clock
            self.device = device
            self.held = held
            self.hold = hold
            self.holdsAfterHearing = holdsAfterHearing
        }

        func heartbeat(armed: Bool, silence: [UInt8]) {
            lock.withLock {
                let holds = beats == held
                beats += 1
                if holds, !holdsAfterHearing { clock.stall(for: hold) }
                let now = MonotonicClock.nanoseconds(clock.now)
                if let last, last.armed, now - last.at >= timeoutNanoseconds {
                    try? device.write(last.silence)
                    written.append(last.silence)
                }
                last = (armed, silence, now)
                if holds, holdsAfterHearing { clock.stall(for: hold) }
            }
        }

        func close() {}
        var silencesWritten: [[UInt8]] { lock.withLock { written } }
    }

    /// The second heartbeat, sent for the second report of a tone 30 ms after the first, takes its counter (1)
    /// with no skip; then the machine stands still for 150 ms, past the keeper's 100 ms timeout. The stream cannot
    /// tell whether the keeper heard that heartbeat before or after, so the report takes counter 3, past both
    /// silences the keeper may write: 1 (the first heartbeat's, written when the second came late) or 2 (the
    /// second's, written when the third came late).
    @Test(arguments: [(false, 1), (true, 2)] as [(Bool, UInt8)])
    func aHeartbeatHeldUpPastTheKeepersTimeoutAfterTheCounterWasTakenMakesTheReportSkipEverySilenceTheKeeperMayWrite(
        holdsAfterHearing: Bool, silenceCounter: UInt8
    ) throws {
        let rig = try SteppedStream()
        var keeper: GuardingKeeper?
        _ = try rig.start { clock, device in
            let guarding = GuardingKeeper(
                clock: clock, device: device, held: 1, hold: 0.150, holdsAfterHearing: holdsAfterHearing)
            keeper = guarding
            return guarding
        }
        rig.play(AHAPFixtures.tone(seconds: 1, sharpness: 0.25))
        rig.advance(by: 0.300)
        rig.stream?.close()
        let all = try rig.reports()
        let silence = SwitchRumbleReport.rest(counter: silenceCounter)
        #expect(keeper?.silencesWritten == [silence.bytes])
        try #require(all.count > 4)
        #expect(all.prefix(4).map(\.counter) == [0, silenceCounter, 3, 4])
        #expect(all[1] == silence)
        #expect(!all[0].frame.left.isAtRest && !all[2].frame.left.isAtRest)
        for (previous, next) in zip(all.dropFirst(2), all.dropFirst(3)) {
            #expect(next.counter == (previous.counter + 1) & 0x0f, "counters \(all.map(\.counter))")
        }
    }

    @Test func closingMidPatternEndsWithAReportAtRestAndDisarmsTheKeeper() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 5))
        rig.advance(by: 0.050)
        rig.stream?.close()
        let reports = try rig.reports()
        #expect(reports.count == 3)
        #expect(reports.dropLast().allSatisfy { !$0.frame.left.isAtRest })
        #expect(reports.last?.frame.left.isAtRest == true && reports.last?.frame.right.isAtRest == true)
        #expect(keeper.heartbeats.last?.armed == false)
        // A second close finds nothing more to write.
        rig.stream?.close()
        #expect(try rig.reports().count == 3)
    }

    /// A keeper that stands the machine still for `stall` in every heartbeat: the write after it comes that late.
    final class StallingKeeper: SilenceKeeper, @unchecked Sendable {
        let timeoutNanoseconds: UInt64 = 3_600_000_000_000
        let isGone = false
        private let clock: SteppedClock
        private let stall: Double
        init(clock: SteppedClock, stall: Double) {
            self.clock = clock
            self.stall = stall
        }
        func heartbeat(armed: Bool, silence: [UInt8]) { clock.stall(for: stall) }
        func close() {}
    }

    /// A transient at `time` (sharpness 1: the high band) over a tone at sharpness 0 (the low band) of `seconds`.
    static func tap(at time: Double, overToneOf seconds: Double) -> HapticPattern {
        let tone = AHAPFixtures.tone(seconds: seconds, intensity: 0.5, sharpness: 0)
        let tap = AHAPFixtures.tap(sharpness: 1)
        var tapEvent = tap.events[0]
        tapEvent.relativeTime = time
        return HapticPattern(events: tone.events + [tapEvent], parameters: [])
    }

    /// Each report written with the time of its heartbeat, which goes out just before it: one per report, and a
    /// second one (disarming the keeper) after the first report at rest that follows a playing one.
    static func timed(_ rig: SteppedStream, _ keeper: RecordingKeeper) throws -> [(
        report: SwitchRumbleReport, milliseconds: Int
    )] {
        let beats = keeper.heartbeats
        var timed: [(report: SwitchRumbleReport, milliseconds: Int)] = []
        var beat = 0
        var wasPlaying = false
        for report in try rig.reports() where beat < beats.count {
            timed.append((report, milliseconds([beats[beat].at])[0]))
            beat += 1
            let playing = !report.frame.left.isAtRest || !report.frame.right.isAtRest
            if wasPlaying, !playing { beat += 1 }
            wasPlaying = playing
        }
        return timed
    }

    /// The milliseconds (from 100 s) of the reports that carry the high band.
    static func highBandTimes(_ rig: SteppedStream, _ keeper: RecordingKeeper) throws -> [Int] {
        try timed(rig, keeper).filter { $0.report.frame.left.highAmplitudeIndex > 0 }.map(\.milliseconds)
    }

    /// `pattern` with a tap of sharpness 0.25 at `time` after it.
    static func tap(at time: Double, after pattern: HapticPattern) -> HapticPattern {
        var tap = AHAPFixtures.tap(sharpness: 0.25).events[0]
        tap.relativeTime = time
        return HapticPattern(events: pattern.events + [tap], parameters: [])
    }

    @Test(
        "A beat after a silent stretch goes out at its own time, not early with the update that reaches it",
        arguments: [
            // After the first tap's three reports at rest the stream waits for the second (at 90 ms it finds the
            // update at 120 would reach it).
            (0.15, [0, 30, 60, 90, 150, 180, 210, 240]),
            (0.14, [0, 30, 60, 90, 140, 170, 200, 230]),
            // A report at rest whose update would reach the beat is left out: the pad is at rest already.
            (0.07, [0, 30, 70, 100, 130, 160]),
        ])
    func aBeatAfterASilentStretch(second: Double, written: [Int]) throws {
        // Looked at again at the regular pace, the update that reached the second tap carried it up to 30 ms early
        // (at 120 ms for 140, at 60 ms for 70).
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(Self.tap(at: second, after: AHAPFixtures.tap(sharpness: 0.25)))
        rig.advance(by: 0.4)
        rig.stream?.close()
        let timed = try Self.timed(rig, keeper)
        #expect(timed.filter { !$0.report.frame.left.isAtRest }.map(\.milliseconds) == [0, Int(second * 1000)])
        #expect(timed.map(\.milliseconds) == written, "each beat, three at rest after it unless the next comes first")
    }

    @Test func aPlayerStartedWhileTheStreamWaitsForABeatIsWrittenAtItsStartAndTheBeatAtItsOwn() throws {
        // Taps at 0 and 1000 ms; the stream waits from 90 ms for the second. A tap started at 300 ms goes out at
        // 300 ms, not at the end of that wait, and the second beat still at 1000 ms.
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(Self.tap(at: 1, after: AHAPFixtures.tap(sharpness: 0.25)))
        rig.advance(by: 0.3)
        rig.play(AHAPFixtures.tap(sharpness: 0.25))
        rig.advance(by: 0.9)
        rig.stream?.close()
        let timed = try Self.timed(rig, keeper)
        #expect(timed.filter { !$0.report.frame.left.isAtRest }.map(\.milliseconds) == [0, 300, 1000])
    }

    @Test func aSilentVoiceUnderWayIsLookedAtOnceAnUpdateAndABeatAfterItPlays() throws {
        // A tone at intensity 0 for 200 ms (a voice under way, which a curve could make heard at any frame), then
        // a tap at 240 ms: the stream looks at each update, writes nothing while all is silent, and writes the tap
        // with the update at 240 ms. A silent look once asked to run again at once: on the real clock the thread
        // spun, on this one it was never called again and the tap never went out.
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(Self.tap(at: 0.24, after: AHAPFixtures.tone(seconds: 0.2, intensity: 0, sharpness: 0)))
        rig.advance(by: 0.4)
        rig.stream?.close()
        let timed = try Self.timed(rig, keeper)
        #expect(timed.map(\.milliseconds) == [240, 270, 300, 330], "the tap, three at rest after it")
    }

    /// A report device whose `held`-th write takes `hold` seconds of the stream's clock: the write returns that
    /// much later (a Bluetooth link that backs up), the report written all the same.
    final class SlowDevice: ReportDevice, @unchecked Sendable {
        private let device: HidrawDevice
        private let clock: SteppedClock
        private let held: Int
        private let hold: Double
        private let lock = NSLock()
        private var writes = 0
        init(_ device: HidrawDevice, clock: SteppedClock, held: Int, hold: Double) {
            self.device = device
            self.clock = clock
            self.held = held
            self.hold = hold
        }
        var node: String { device.node }
        func write(_ report: [UInt8]) throws(EventDeviceError) {
            let holds = lock.withLock {
                defer { writes += 1 }
                return writes == held
            }
            try device.write(report)
            if holds { clock.stall(for: hold) }
        }
        func close() { device.close() }
    }

    /// The second report of a tone (at 30 ms) stays in `write` for 150 ms, past the keeper's 100 ms timeout: the
    /// guard may have written its silence meanwhile and gone quiet, and the report lands after it. The keeper is
    /// armed again as soon as the write returns (at 180 ms, with the same silence), not only at the next report
    /// (210 ms): a process killed in between would have left the pad playing that report. The counters go on one by
    /// one (the guard's silence, if written, came before the report).
    @Test func aWriteHeldUpPastTheKeepersTimeoutArmsTheKeeperAgainAsSoonAsItReturns() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock, timeoutNanoseconds: 100_000_000)
        let member = try HDRumbleMember.joining(rig.file.path, locality: .all) {
            () throws(OutputFailure) -> HDRumbleStream in
            do throws(HapticEngineError) {
                return try HDRumbleStream(
                    device: SlowDevice(rig.device, clock: rig.clock, held: 1, hold: 0.150), keeper: keeper,
                    clock: rig.clock, logger: quietLogger())
            } catch {
                throw OutputFailure(.other, error.message)
            }
        }
        member.play(
            AHAPFixtures.tone(seconds: 0.3, sharpness: 0.25), atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now))
        rig.advance(by: 0.25)
        member.close()
        let beats = keeper.heartbeats
        try #require(beats.count >= 4)
        #expect(Self.milliseconds(beats.prefix(4).map(\.at)) == [0, 30, 180, 210])
        #expect(beats.prefix(4).allSatisfy { $0.armed })
        #expect(beats[2].silence == beats[1].silence)
        let reports = try rig.reports()
        try #require(reports.count >= 3)
        #expect(reports.prefix(3).map(\.counter) == [0, 1, 2])
        #expect(beats[3].silence == SwitchRumbleReport.rest(counter: 3).bytes)
    }

    @Test func aLoopedTapAloneIsWrittenEachTimeTheLoopComesRound() throws {
        // A tap looped every 200 ms: each round, the tap and three reports at rest, then nothing until the loop
        // comes round, whose tap goes out at 200 and 400 ms rather than with the update that reaches it (180 ms).
        let timed = try Self.aTapLooped(every: 0.2)
        #expect(timed.filter { !$0.report.frame.left.isAtRest }.map(\.milliseconds) == [0, 200, 400])
    }

    /// The reports of a tap looped every `loopLength` seconds for `seconds`, then closed, and their times.
    static func aTapLooped(every loopLength: Double, for seconds: Double = 0.5) throws -> [(
        report: SwitchRumbleReport, milliseconds: Int
    )] {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        let stream = try rig.start { _, _ in keeper }
        _ = stream.stream.play(
            HDRumbleStream.Source(
                renderer: BandRenderer(pattern: AHAPFixtures.tap(sharpness: 0.25), locality: .all), offset: 0,
                loopLength: loopLength),
            atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now))
        rig.advance(by: seconds)
        stream.close()
        return try timed(rig, keeper)
    }

    /// A tap looped every 0.1234 s (370.2 frames at 3 kHz) for a thousand passes goes out where the engine's clock
    /// puts each pass, to the millisecond. Until 7 December the loop's length was rounded to whole frames once and
    /// repeated, and the thousandth pass went out 67 ms early.
    @Test func aTapLoopedAThousandTimesIsWrittenWhereTheClockPutsEachPass() throws {
        let loop = 0.1234
        let timed = try Self.aTapLooped(every: loop, for: 1000.5 * loop)
        let taps = timed.filter { !$0.report.frame.left.isAtRest }.map(\.milliseconds)
        let expected = (0...1000).map { Int((Double($0) * loop * 1000).rounded()) }
        #expect(taps.count == expected.count)
        let worst = zip(taps, expected).map { abs($0 - $1) }.max() ?? .max
        #expect(worst <= 1, "a pass went out \(worst) ms off the clock (the last at \(taps.last ?? 0) ms)")
    }

    /// A loop's only tap on the last frame of its shorter passes (a tap at 0.1 s, 300 frames at 3 kHz, looped every
    /// 300.2 frames: it sounds in the passes of 301) is written in each pass that holds it, whether or not the
    /// player has a stop ahead. Until 7 December a stream whose source had a stop looked for the tap in the next
    /// pass only, found none, and slept to the stop: nothing was written.
    @Test(arguments: [false, true])
    func aTapOnTheShorterPassesLastFrameIsWrittenInEachPassThatHoldsIt(stopsLater: Bool) throws {
        let renderer = BandRenderer(
            pattern: Self.tap(at: 0.1, after: HapticPattern(events: [], parameters: [])), locality: .all)
        let voice = try #require(renderer.waveform.firstVoiceFrame(atOrAfter: 0))
        let loopLength = (Double(voice) + 0.2) / BandRenderer.sampleRate
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        let stream = try rig.start { _, _ in keeper }
        let start = rig.clock.now
        let id = stream.stream.play(
            HDRumbleStream.Source(renderer: renderer, offset: 0, loopLength: loopLength),
            atNanoseconds: MonotonicClock.nanoseconds(start))
        if stopsLater { stream.stream.stop(id, atNanoseconds: MonotonicClock.nanoseconds(start + 60 * loopLength)) }
        rig.advance(by: 50 * loopLength)
        stream.close()
        let loop = LoopFrames(length: loopLength, rate: BandRenderer.sampleRate)
        let holding = (0..<49).filter { loop.length(ofPass: $0) > voice }
        let taps = try Self.timed(rig, keeper).map(\.report.frame.left.isAtRest).split(separator: true)
        #expect(!holding.isEmpty && taps.count == holding.count)
    }

    /// A tap looped every trillion seconds (a player takes any finite `loopEnd`): the tap and its reports at rest go
    /// out, and the stream, which looks for the loop's next round after them, finds none it can count to. Until 7
    /// December converting that round's time to nanoseconds stopped the process.
    @Test func aTapLoopedEveryTrillionSecondsIsWrittenOnceAndTheStreamGoesOn() throws {
        let timed = try Self.aTapLooped(every: 1e12)
        #expect(timed.filter { !$0.report.frame.left.isAtRest }.map(\.milliseconds) == [0])
        #expect(timed.last?.report.frame.left.isAtRest == true)
    }

    /// Bands the mix scaled down to full amplitude together (their quotients may sum to a hair over 1) go out as
    /// steps that do not sum past the largest. Until 7 December these were rounded each on its own: 1004 to 1009
    /// thousandths.
    @Test(arguments: [(0.13, 0.94), (0.24, 0.89), (0.57, 0.71), (0.052, 0.948), (1, 1)])
    func bandsTheMixScaledToFullAmplitudeNeverEncodePastTheLargestStep(low: Double, high: Double) {
        let bands = ActuatorBands.mixing(
            [Carrier(frequency: 160, amplitude: low), Carrier(frequency: 320, amplitude: high)], crossover: 226)
        let actuator = HDRumbleStream.actuator(bands)
        let steps = SwitchRumbleActuator.amplitudeSteps
        let sum = steps[Int(actuator.lowAmplitudeIndex)] + steps[Int(actuator.highAmplitudeIndex)]
        #expect(
            sum <= SwitchRumbleActuator.maximumAmplitude,
            "bands summing to \(bands.low.amplitude + bands.high.amplitude)")
    }

    /// The first process of a PID namespace forks no silence guard (the kernel would kill it with the process,
    /// before it writes), and says why and what to do; any other process does.
    @Test func theFirstProcessOfAPIDNamespaceStartsNoSilenceGuardAndSaysHowToRunWithOne() {
        let refusal = EvdevOutputSource.guardRefusal(processID: 1)
        #expect(refusal?.contains("first of its PID namespace") == true)
        #expect(refusal?.contains("--init") == true)
        #expect(EvdevOutputSource.guardRefusal(processID: 2) == nil)
        #expect(EvdevOutputSource.guardRefusal(processID: 4_000_000) == nil)
    }

    @Test func aTapStartedAsTheLeadSaysAfterAReportIsWrittenWholeInTheNextOne() throws {
        // A report at 30 ms; 1 ms later the next may go out only at 55 ms. Started then, as the engine starts it
        // (`startLead`), a tap of a few milliseconds is in that report; started at once, it was read from where it
        // was at 55 ms: past its end.
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        let stream = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 1, intensity: 0.5, sharpness: 0))
        rig.advance(by: 0.031)
        #expect(abs(stream.startLead - 0.024) < 1e-9)
        rig.play(AHAPFixtures.tap(sharpness: 1), after: stream.startLead)
        rig.advance(by: 0.1)
        stream.close()
        #expect(try Self.highBandTimes(rig, keeper) == [55])
    }

    @Test func aLoopThatComesRoundInsideAnUpdateSendsItsStartThere() throws {
        // A tap looped every 100 ms beside a tone, both from 10 ms (placed ahead, so that the first update has
        // both): the updates at 10, 100, 190 and 310 ms hold the tap (at 10, 110, 210 and 310 ms). An update that
        // crossed the loop's end once read past it, and the loop's start never.
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        let stream = try rig.start { _, _ in keeper }
        rig.play(AHAPFixtures.tone(seconds: 1, intensity: 0.5, sharpness: 0), after: 0.01)
        _ = stream.stream.play(
            HDRumbleStream.Source(
                renderer: BandRenderer(pattern: AHAPFixtures.tap(sharpness: 1), locality: .all), offset: 0,
                loopLength: 0.1),
            atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now + 0.01))
        rig.advance(by: 0.34)
        stream.close()
        #expect(try Self.highBandTimes(rig, keeper) == [10, 100, 190, 310])
    }

    @Test func aTapBetweenTwoUpdatesOfAWriteThatCameLateIsInTheNextOne() throws {
        // Each heartbeat holds the thread 6 ms: the update at 0 ms reads frames up to 30 ms, the next comes at
        // 36 ms. A tap at 31 ms (about 3 ms long), between the two, is read by the second, which reads from 30 ms;
        // read from 36 ms, it was lost.
        let rig = try SteppedStream()
        let stream = try rig.start { clock, _ in StallingKeeper(clock: clock, stall: 0.006) }
        rig.play(Self.tap(at: 0.031, overToneOf: 0.2))
        rig.advance(by: 0.1)
        stream.close()
        #expect(try rig.reports().contains { $0.frame.left.highAmplitudeIndex > 0 })
    }

    @Test func nothingIsWrittenWhileNothingPlays() throws {
        let rig = try SteppedStream()
        let keeper = RecordingKeeper(clock: rig.clock)
        _ = try rig.start { _, _ in keeper }
        rig.play(HapticPattern(events: [], parameters: []))
        rig.advance(by: 0.1)
        rig.stream?.close()
        #expect(try rig.reports().isEmpty)
        #expect(keeper.heartbeats.isEmpty)
    }
}

@Suite struct HDRumbleJoyConTests {
    @Test func aLoneJoyConsOneActuatorPlaysAHandlePatternOnBothSidesBytes() throws {
        let rig = try HDRumbleStreamTests.SteppedStream()
        let stream = try rig.start(
            keeper: { clock, _ in HDRumbleStreamTests.RecordingKeeper(clock: clock) }, locality: .rightHandle,
            mirrorsSides: true)
        rig.play(AHAPFixtures.tone(seconds: 5, sharpness: 0.8))
        rig.advance(by: 0)
        stream.close()
        let first = try #require(try rig.reports().first)
        #expect(!first.frame.right.isAtRest)
        #expect(first.frame.left == first.frame.right)
    }
}

/// Engines of one process on one Switch pad (one per handle, as a Core Haptics app makes one per locality) are
/// members of one HD rumble stream: one writer, one guard process, one counter, each report carrying every
/// member's bands. (Each engine had a stream of its own: their reports interleaved on the pad, each sending the
/// other's actuator at rest, with two counters.)
@Suite struct HDRumbleSharingTests {
    typealias Rig = HDRumbleStreamTests.SteppedStream
    typealias Keeper = HDRumbleStreamTests.RecordingKeeper

    /// The keepers of the streams a test starts, in the order made (one per stream: a member that joins makes
    /// none); with `firstGone`, the first is found gone by its first heartbeat.
    final class Keepers {
        private(set) var made: [Keeper] = []
        private let firstGone: Bool
        init(firstGone: Bool = false) { self.firstGone = firstGone }
        func make(_ clock: SteppedClock, _: HidrawDevice) -> any SilenceKeeper {
            let keeper = Keeper(clock: clock, goneFrom: firstGone && made.isEmpty ? 0 : nil)
            made.append(keeper)
            return keeper
        }
    }

    @Test func twoEnginesOnOnePadShareOneStreamWhoseReportsCarryBothHandlesUnderOneCounter() throws {
        let rig = try Rig()
        let keepers = Keepers()
        let left = try rig.start(keeper: keepers.make, locality: .leftHandle)
        let right = try rig.start(keeper: keepers.make, locality: .rightHandle)
        #expect(left.stream === right.stream)
        #expect(keepers.made.count == 1, "one silence guard per pad")
        // Placed ahead, as the engine places a start (`startLead`): the first update then holds both.
        let start = MonotonicClock.nanoseconds(rig.clock.now + 0.01)
        left.play(AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25), atNanoseconds: start)
        right.play(AHAPFixtures.tone(seconds: 0.1, sharpness: 0.9), atNanoseconds: start)
        rig.advance(by: 1)
        left.close()
        right.close()
        let reports = try rig.reports()
        // One stream: the updates at 10, 40, 70 and 100 ms, then three at rest, the counters one after the other.
        #expect(reports.map(\.counter) == Array(0..<7))
        let playing = reports.prefix(4)
        // Each handle's tone on its own actuator, in its own band (sharpness 0.25 in the low one, 0.9 in the high).
        #expect(playing.allSatisfy { $0.frame.left.lowAmplitude > 0 && $0.frame.left.highAmplitude == 0 })
        #expect(playing.allSatisfy { $0.frame.right.highAmplitude > 0 && $0.frame.right.lowAmplitude == 0 })
        #expect(reports.dropFirst(4).allSatisfy { $0.frame.left.isAtRest && $0.frame.right.isAtRest })
        #expect(keepers.made.first?.isClosed == true)
    }

    /// An engine that leaves stops its own sources at once; the stream plays on for the other, its guard kept, and
    /// a third engine joins it. Once the last member has left, the stream has ended (its guard let go), and the
    /// next engine starts another.
    @Test func anEngineLeavingStopsItsOwnSourcesTheLastEndsTheStream() throws {
        let rig = try Rig()
        let keepers = Keepers()
        let left = try rig.start(keeper: keepers.make, locality: .leftHandle)
        let right = try rig.start(keeper: keepers.make, locality: .rightHandle)
        // Placed ahead, as the engine places a start (`startLead`): the first update then holds both.
        let start = MonotonicClock.nanoseconds(rig.clock.now + 0.01)
        left.play(AHAPFixtures.tone(seconds: 5, sharpness: 0.25), atNanoseconds: start)
        right.play(AHAPFixtures.tone(seconds: 5, sharpness: 0.25), atNanoseconds: start)
        rig.advance(by: 0.1)
        left.close()
        rig.advance(by: 0.1)
        let third = try rig.start(keeper: keepers.make, locality: .all)
        #expect(third.stream === right.stream && right.failure == nil)
        #expect(keepers.made.count == 1 && keepers.made.first?.isClosed == false)
        third.close()
        let reports = try rig.reports()
        let bothUntil = reports.firstIndex { $0.frame.left.isAtRest }
        try #require(bothUntil != nil && bothUntil! >= 3, "\(reports.map(\.frame))")
        #expect(reports[..<bothUntil!].allSatisfy { !$0.frame.right.isAtRest })
        #expect(reports[bothUntil!...].allSatisfy { $0.frame.left.isAtRest && !$0.frame.right.isAtRest })
        #expect(reports.count > bothUntil! + 1, "the right handle's tone went on after the left engine left")
        right.close()
        #expect(keepers.made.first?.isClosed == true)
        #expect(try rig.reports().last.map { $0.frame.left.isAtRest && $0.frame.right.isAtRest } == true)
        let after = try rig.start(keeper: keepers.make, locality: .all)
        #expect(after.stream !== right.stream && keepers.made.count == 2, "a stream without members was joined")
        after.close()
    }

    /// A stream that begins on a pad after the last one there ended (an engine stopped and started again) carries
    /// the counter on from where that one left the pad, so no two reports in a row carry the same one. Until 6
    /// December every stream started at 0: a stream that ended on 0 (its report at rest) was followed by another 0.
    @Test func aStreamBegunAgainOnThePadCarriesTheCounterOn() throws {
        let rig = try Rig()
        let keepers = Keepers()
        let tone = AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25)
        let first = try rig.start(keeper: keepers.make)
        first.play(tone, atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now + 0.01))
        rig.advance(by: 0.05)
        // Closed mid-tone: the stream's report at rest goes out at once.
        first.close()
        #expect(try rig.reports().map(\.counter) == [0, 1, 2], "two updates and the report at rest")
        rig.file.empty()
        let second = try rig.start(keeper: keepers.make)
        #expect(second.stream !== first.stream && keepers.made.count == 2)
        // Placed as the engine places a start: no sooner than the pad's spacing from the report at rest allows.
        second.play(tone, atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now + second.startLead))
        rig.advance(by: 1)
        second.close()
        // Four updates over the tone, then three at rest.
        #expect(try rig.reports().map(\.counter) == Array(3..<10))
    }

    /// A stream begun on the pad right after the last one closed mid-tone (an engine stopped and started again)
    /// keeps the pad's least spacing from that stream's report at rest, as one stream keeps it between its own
    /// reports: its first report waits, and the engine is told to place its start that much ahead.
    @Test func aStreamBegunRightAfterTheLastOneEndedKeepsTheSpacingFromItsLastReport() throws {
        let rig = try Rig()
        let keepers = Keepers()
        let tone = AHAPFixtures.tone(seconds: 0.1, sharpness: 0.25)
        let first = try rig.start(keeper: keepers.make)
        first.play(tone, atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now))
        rig.advance(by: 0.04)
        // Closed mid-tone, 10 ms after its second report: its report at rest goes out at once, at 40 ms.
        first.close()
        let second = try rig.start(keeper: keepers.make)
        #expect(abs(second.startLead - 0.025) < 1e-6, "\(second.startLead)")
        second.play(tone, atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now))
        rig.advance(by: 0.5)
        second.close()
        let rest = try #require(keepers.made[0].heartbeats.last)
        let next = try #require(keepers.made[1].heartbeats.first)
        #expect(HDRumbleStreamTests.milliseconds([rest.at, next.at]) == [40, 65], "25 ms apart, not 0")
    }

    /// A stream that has ended (its guard found gone, or its pad unplugged) is not joined: the next engine starts
    /// another, which its members keep, whatever the ended stream's last member does when it leaves.
    @Test func aStreamThatEndedIsNotJoinedTheNextEngineStartsAnother() throws {
        let rig = try Rig()
        let keepers = Keepers(firstGone: true)
        let ended = try rig.start(keeper: keepers.make)
        ended.play(
            AHAPFixtures.tone(seconds: 1, sharpness: 0.25), atNanoseconds: MonotonicClock.nanoseconds(rig.clock.now))
        rig.advance(by: 0.1)
        try #require(ended.failure != nil)
        let next = try rig.start(keeper: keepers.make)
        #expect(next.stream !== ended.stream && next.failure == nil && keepers.made.count == 2)
        ended.close()
        let joining = try rig.start(keeper: keepers.make)
        #expect(joining.stream === next.stream && keepers.made.count == 2 && keepers.made[1].isClosed == false)
        joining.close()
        next.close()
        #expect(keepers.made[1].isClosed)
    }

    /// Each engine's gain scales its own sources only: a tone at gain 0.5 beside the same tone at gain 1, one per
    /// handle, has half the other's amplitude.
    @Test func eachEnginesGainScalesItsOwnSourcesOnly() throws {
        let rig = try Rig()
        let keepers = Keepers()
        let left = try rig.start(keeper: keepers.make, locality: .leftHandle, gain: 0.5)
        let right = try rig.start(keeper: keepers.make, locality: .rightHandle, gain: 1)
        // Placed ahead, as the engine places a start (`startLead`): the first update then holds both.
        let start = MonotonicClock.nanoseconds(rig.clock.now + 0.01)
        let tone = AHAPFixtures.tone(seconds: 0.1, intensity: 1, sharpness: 0.25)
        left.play(tone, atNanoseconds: start)
        right.play(tone, atNanoseconds: start)
        rig.advance(by: 1)
        left.close()
        right.close()
        let playing = try rig.reports().prefix(4)
        try #require(playing.count == 4)
        for report in playing {
            let ratio = report.frame.left.lowAmplitude / report.frame.right.lowAmplitude
            #expect(
                abs(ratio - 0.5) < 0.05,
                "left \(report.frame.left.lowAmplitude), right \(report.frame.right.lowAmplitude)")
        }
    }
}
