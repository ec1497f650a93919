// The voice-coil path's pieces without a pad: a player's waveform source (offset, loop, rate), the cues a
// haptic-only player gives, and the report writer's counter and samples.
// The stream to a real driver is the kernel tests' (hd/).
import AHAP
import Foundation
import Glibc
import HapticRendering
import HapticTestDevices
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Testing

@testable import LinuxHaptics

@Suite struct VoiceCoilTests {
    /// One continuous event, 0 to 0.5 s, at sharpness 0.5.
    static let pattern = continuousPattern(intensity: 0.8, seconds: 0.5)

    static func renderer(rate: Double = 1) -> WaveformRenderer {
        WaveformRenderer(pattern: pattern, sampleRate: 3000, playbackRate: rate)
    }

    /// `frames` frames of `source`, in blocks of one report.
    static func frames(of source: inout WaveformSource, count frames: Int) -> (left: [Float], more: Bool) {
        var left: [Float] = []
        var more = true
        while left.count < frames {
            var block = [Float](repeating: 0, count: 64)
            more = source.renderNext(into: &block)
            left += stride(from: 0, to: 64, by: 2).map { block[$0] }
        }
        return (Array(left.prefix(frames)), more)
    }

    @Test func aSourceFromAnOffsetPlaysTheRenderersFramesFromThatOffset() {
        var source = WaveformSource(renderer: Self.renderer(), offset: 0.1, loopLength: nil)
        let played = Self.frames(of: &source, count: 300).left
        let expected = Self.renderer().render(from: 300, count: 300).left.map(Float.init)
        #expect(played == expected)
    }

    @Test func aSourceEndsWithItsPatternUnlessItLoops() {
        var once = WaveformSource(renderer: Self.renderer(), offset: 0.45, loopLength: nil)
        #expect(!Self.frames(of: &once, count: 192).more, "0.05 s were left: the source has ended")
        var looping = WaveformSource(renderer: Self.renderer(), offset: 0.45, loopLength: 0.5)
        #expect(Self.frames(of: &looping, count: 192).more)
    }

    @Test func aLoopingSourceStartsAgainFromTheTopAtTheLoopLength() {
        var source = WaveformSource(renderer: Self.renderer(), offset: 0.4, loopLength: 0.5)
        let played = Self.frames(of: &source, count: 600).left
        let renderer = Self.renderer()
        let expected = (renderer.render(from: 1200, count: 300).left + renderer.render(from: 0, count: 300).left)
            .map(Float.init)
        #expect(played == expected)
    }

    /// A looping player's passes stay on the engine's clock however many there are: pass k of a loop of length L at
    /// rate r begins k·L/r seconds after the first. Until 7 December the loop's length was rounded to whole frames
    /// once and repeated: at rate 1.3 a 0.5 s loop (1153.85 frames at 3 kHz) played as 1154 came round 52 ms late
    /// after 1000 passes, and at rate 1 a 0.1234 s loop (370.2 frames) 66 ms early.
    @Test(arguments: [(rate: 1.3, loop: 0.5), (rate: 1.0, loop: 0.1234)])
    func aLoopingSourceKeepsItsPassesOnTheEnginesClock(rate: Double, loop: Double) {
        let tap = AHAPFixtures.tap(intensity: 1, sharpness: 0.5)
        let renderer = WaveformRenderer(pattern: tap, sampleRate: 3000, playbackRate: rate)
        var source = WaveformSource(renderer: renderer, offset: 0, loopLength: loop)
        let passes = 1000
        let framesPerPass = loop / rate * 3000
        let played = Self.frames(of: &source, count: Int((Double(passes) + 0.5) * framesPerPass)).left
        // Each pass's first sounding frame: the first after 100 silent ones.
        let onsets = played.indices.filter { index in
            played[index] != 0 && played[max(0, index - 100)..<index].allSatisfy { $0 == 0 }
        }
        #expect(onsets.count == passes + 1)
        let worst = onsets.enumerated().map { abs(Double($1 - onsets[0]) - Double($0) * framesPerPass) }.max()
        #expect((worst ?? .infinity) <= 1, "a pass began \(worst ?? .infinity) frames off the engine's clock")
    }

    @Test func twiceTheRateHalvesTheLengthAndKeepsTheCarriersFrequency() {
        let normal = Self.renderer().render(from: 0, count: 1500).left
        let fast = Self.renderer(rate: 2).render(from: 0, count: 1500).left
        #expect(Self.renderer(rate: 2).endFrame == Self.renderer().endFrame / 2)
        // Rising zero crossings over the first 0.2 s: the same count at either rate.
        func crossings(_ samples: [Double]) -> Int {
            (1..<600).filter { samples[$0 - 1] < 0 && samples[$0] >= 0 }.count
        }
        #expect(crossings(normal) > 0)
        #expect(abs(crossings(fast) - crossings(normal)) <= 1)
        #expect(fast[750...].allSatisfy { $0 == 0 }, "at twice the rate the 0.5 s event ends at 0.25 s")
    }

    @Test func aStartIsPlayedWholeFromTheTopAndAChangeWhilePlayingIsPickedUpWhereThePlayerIs() throws {
        let renderer = PatternRenderer(profile: .genericRumble, locality: .all)
        var player = PlayerState(source: PatternSource(pattern: Self.pattern, renderer: renderer))
        player.schedule(.start, at: 5)
        let start = try #require(player.cues().first)
        var whole = WaveformSource(renderer: Self.renderer(), cue: start, from: 5.02)
        #expect(whole.playsWholeWhenLate)
        #expect(
            Self.frames(of: &whole, count: 300).left
                == Self.renderer().render(from: 0, count: 300).left.map(Float.init))
        // New controls 0.1 s in (an intensity control, as `sendParameters` gives): the new cue starts at 0.1 s of
        // the pattern, not again from its beginning.
        _ = player.advance(to: 5)
        try player.send(
            intensityControl(0.5), at: 5.1,
            now: 5.1)
        let changed = try #require(player.cues().first)
        #expect(changed != start)
        var pickedUp = WaveformSource(renderer: Self.renderer(), cue: changed, from: 5.1)
        #expect(!pickedUp.playsWholeWhenLate)
        #expect(
            Self.frames(of: &pickedUp, count: 300).left
                == Self.renderer().render(from: 300, count: 300).left.map(Float.init))
        // So does a loop turned on 0.2 s in.
        player.setLoopEnabled(true, at: 5.2)
        var looped = WaveformSource(renderer: Self.renderer(), cue: try #require(player.cues().first), from: 5.2)
        #expect(!looped.playsWholeWhenLate)
        #expect(
            Self.frames(of: &looped, count: 300).left
                == Self.renderer().render(from: 600, count: 300).left.map(Float.init))
    }

    @Test func aHapticOnlyPlayerGivesCuesButNoSoundCues() throws {
        let renderer = PatternRenderer(profile: .genericRumble, locality: .all)
        var player = PlayerState(source: PatternSource(pattern: Self.pattern, renderer: renderer))
        player.schedule(.start, at: 5)
        let cue = try #require(player.cues().first)
        #expect(cue.anchor.time == 5 && cue.anchor.offset == 0 && cue.end == nil)
        #expect(player.soundCues().isEmpty)
    }

    /// The engine's gain scales every sample of its sources before the mix is limited (it was left out, so
    /// `--gain 0.2` played at full strength); a gain outside 0...1 or not a number is clamped (NaN is 0).
    @Test func theEnginesGainScalesItsSourcesSamples() {
        func played(gain: Double) -> [Float] {
            var source = WaveformSource(renderer: Self.renderer(), offset: 0.1, loopLength: nil, gain: gain)
            return Self.frames(of: &source, count: 300).left
        }
        let full = played(gain: 1)
        #expect(full == Self.renderer().render(from: 300, count: 300).left.map(Float.init))
        #expect(full.contains { abs($0) > 0.1 })
        #expect(zip(played(gain: 0.5), full).allSatisfy { $0 == $1 * 0.5 })
        #expect(played(gain: 0).allSatisfy { $0 == 0 } && played(gain: .nan).allSatisfy { $0 == 0 })
        #expect(played(gain: 2) == full)
    }

    /// Two engines on one pad's voice coils (one per handle, as a Core Haptics app makes them per locality) are
    /// members of one stream: one writer, whose reports carry both handles' waveforms at once, their counters one
    /// after the other. (Each wrote its own reports to the node, the pad playing the two streams interleaved.) The
    /// stream ends with its last member.
    @Test func twoEnginesOnOnePadsVoiceCoilsShareOneStreamAndWriter() throws {
        let file = ReportFile()
        let left = try VoiceCoilStream.bluetooth(try file.device(), locality: .leftHandle, logger: quietLogger())
        let right = try VoiceCoilStream.bluetooth(try file.device(), locality: .rightHandle, logger: quietLogger())
        #expect(left.shared === right.shared)
        let start = MonotonicTime.nanoseconds() + 20_000_000
        left.play(Self.pattern, atNanoseconds: start)
        right.play(Self.pattern, atNanoseconds: start)
        let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
        while try file.bytes().count < 40 * DualSenseHapticsReport.size, MonotonicTime.nanoseconds() < deadline {
            Sys.sleep(nanoseconds: 10_000_000)
        }
        left.close()
        // One member left: a new engine joins its stream; none left: a new engine starts another.
        let joining = try VoiceCoilStream.bluetooth(try file.device(), locality: .all, logger: quietLogger())
        #expect(right.failure == nil && joining.shared === right.shared, "the other engine's stream ended")
        joining.close()
        right.close()
        let after = try VoiceCoilStream.bluetooth(try file.device(), locality: .all, logger: quietLogger())
        #expect(after.shared !== right.shared, "a stream without members was joined")
        after.close()
        let reports = try file.reports(length: DualSenseHapticsReport.size, DualSenseHapticsReport.init(bytes:))
            .compactMap { $0 }
        try #require(reports.count >= 40, "\(reports.count) reports")
        #expect(zip(reports, reports.dropFirst()).allSatisfy { $1.counter == $0.counter &+ 1 }, "one counter")
        let both = reports.filter { report in
            let frames = stride(from: 0, to: report.samples.count, by: 2).map {
                (report.samples[$0], report.samples[$0 + 1])
            }
            return frames.contains { $0.0 != 0 } && frames.contains { $0.1 != 0 }
        }
        #expect(both.count >= 20, "reports carrying both handles: \(both.count) of \(reports.count)")
    }

    @Test func theWriterSendsOneSignedReportPer32FramesWithAGrowingCounter() throws {
        let file = ReportFile()
        // The queue's clock held still: no report can find it run dry, however long this thread is held up.
        let now = MonotonicTime.nanoseconds()
        let writer = DualSenseHapticsWriter(
            device: try file.device(), leadSeconds: 0.5, logger: quietLogger(), clock: { now })
        let samples = (0..<128).map { Float($0) / 128 }
        try writer.write(samples)
        try writer.write([Float](repeating: 0, count: 64))
        writer.close()
        let bytes = try file.bytes()
        #expect(bytes.count == 3 * 142)
        let reports = stride(from: 0, to: bytes.count, by: 142).compactMap {
            DualSenseHapticsReport(bytes: Array(bytes[$0..<($0 + 142)]))
        }
        #expect(reports.map(\.counter) == [0, 1, 2])
        #expect(reports[0].samples == samples[..<64].map(DualSenseHapticsReport.sample))
        #expect(reports[1].samples == samples[64...].map(DualSenseHapticsReport.sample))
        #expect(reports[2].samples.allSatisfy { $0 == 0 })
        #expect(writer.counts.reports == 3 && writer.counts.underruns == 0)
    }

    /// A writer on a node another writer of ours has closed carries its counter on, past the silent report that
    /// closing sent mid-sound: the pad never gets two reports in a row with the same counter. Until 6 December
    /// every stream started at 0 (an engine stopped and started again sent 0, 1, 2, then 0, 1 ...).
    @Test func aWriterOnANodeWhoseLastWriterClosedCarriesItsCounterOn() throws {
        let file = ReportFile()
        let now = MonotonicTime.nanoseconds()
        func writer() throws -> DualSenseHapticsWriter {
            DualSenseHapticsWriter(device: try file.device(), leadSeconds: 0.5, logger: quietLogger(), clock: { now })
        }
        func counters() throws -> [UInt8] {
            defer { file.empty() }
            return try file.reports(length: DualSenseHapticsReport.size, DualSenseHapticsReport.init(bytes:))
                .map { $0?.counter ?? .max }
        }
        let first = try writer()
        try first.write((0..<128).map { Float($0 + 1) / 128 })
        first.close()
        #expect(try counters() == [0, 1, 2], "two reports with sound, and the silent one closing sent")
        let second = try writer()
        try second.write([Float](repeating: 0.5, count: 64))
        second.close()
        #expect(try counters() == [3, 4])
    }

    /// A writer into `file` on `clock`, given three reports (32 ms) of a 200 Hz sine at half amplitude on the left
    /// coil, then six of silence: all written at once, queued in the pad.
    private static func aTapQueuedInThePad(_ file: ReportFile, clock: @escaping @Sendable () -> UInt64) throws
        -> DualSenseHapticsWriter
    {
        let writer = DualSenseHapticsWriter(
            device: try file.device(), leadSeconds: 0.5, logger: quietLogger(), clock: clock)
        let tap = (0..<96).flatMap { frame -> [Float] in
            let phase = 2 * Double.pi * 200 * Double(frame) / 3000
            return [Float(0.5 * sin(phase)), 0]
        }
        try writer.write(tap)
        try writer.write([Float](repeating: 0, count: 6 * 64))
        return writer
    }

    /// What the coils play now is what was written a queue's length ago: a tap written ahead and followed by
    /// silence is heard as the tap while it plays, then as silence. Until 6 December `actuatorActivity` was the last
    /// report written, so `haptics feedback --actuators hd` on a DualSense over Bluetooth printed every tap at 0 %
    /// (the writer was already a lead of silence past it).
    @Test func theActivityIsWhatThePadPlaysNowNotTheLastReportWritten() throws {
        let file = ReportFile()
        let start = MonotonicTime.nanoseconds()
        let now = Lock(start)
        let writer = try Self.aTapQueuedInThePad(file, clock: { now.withLock { $0 } })
        func activity(afterMilliseconds milliseconds: UInt64) -> ActuatorActivity {
            now.withLock { $0 = start + milliseconds * 1_000_000 }
            return writer.activity
        }
        let during = activity(afterMilliseconds: 20)
        #expect(abs(during.left - 0.5) < 0.02 && during.right == 0, "\(during)")
        #expect(during.frequency.map { abs($0 - 200) < 40 } ?? false, "\(during)")
        // The peak is over the 32 ms heard up to now: past the tap's end by that much, silence.
        let after = activity(afterMilliseconds: 70)
        #expect(after.left == 0 && after.right == 0, "\(after)")
        // Everything written was heard long ago: silence, and no frequency.
        let later = activity(afterMilliseconds: 500)
        #expect(later == ActuatorActivity(left: 0, right: 0, frequency: nil), "\(later)")
        writer.close()
    }

    /// A tap's moment asked for once the queue's clock has moved well past it (a command that woke late to print
    /// it) is the tap as the pad played it then, not the silence heard by the time of asking.
    @Test func aMomentAskedForAfterItPassedIsWhatThePadPlayedThen() throws {
        let file = ReportFile()
        let start = MonotonicTime.nanoseconds()
        let now = Lock(start)
        let writer = try Self.aTapQueuedInThePad(file, clock: { now.withLock { $0 } })
        now.withLock { $0 = start + 200_000_000 }
        let then = writer.activity(atNanoseconds: start + 20_000_000)
        #expect(abs(then.left - 0.5) < 0.02 && then.right == 0, "\(then)")
        #expect(then.frequency.map { abs($0 - 200) < 40 } ?? false, "\(then)")
        #expect(writer.activity == .atRest, "by the time of asking, everything written was heard")
        writer.close()
    }

    /// The queue's clock moved on past everything sent (the pad has played it): the next report finds the queue
    /// run dry after a report with sound, and counts one underrun.
    @Test func aReportThatFindsTheQueueRunDryAfterSoundCountsOneUnderrun() throws {
        let file = ReportFile()
        let now = Lock(MonotonicTime.nanoseconds())
        let writer = DualSenseHapticsWriter(
            device: try file.device(), leadSeconds: 0.5, logger: quietLogger(), clock: { now.withLock { $0 } })
        try writer.write((0..<128).map { Float($0 + 1) / 128 })
        #expect(writer.counts.underruns == 0)
        now.withLock { $0 += 1_000_000_000 }
        try writer.write([Float](repeating: 0, count: 64))
        writer.close()
        #expect(writer.counts.reports == 3 && writer.counts.underruns == 1)
    }
}
