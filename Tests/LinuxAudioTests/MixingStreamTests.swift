import AHAP
import AudioRendering
import LinuxAudio
import LinuxHapticsTesting
@_spi(Internals) import LinuxSystem
import Logging
import Testing

@Suite("Mixing stream")
struct MixingStreamTests {
    let logger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

    /// Waits (a hang guard, not a timing check) until `condition` holds.
    func waitUntil(_ what: String, _ condition: () -> Bool) throws {
        let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
        while !condition() {
            try #require(MonotonicTime.nanoseconds() < deadline, "timed out waiting until \(what)")
            Sys.sleep(nanoseconds: 1_000_000)
        }
    }

    /// A stereo clip of `frames` frames at `left` and `right`.
    func constant(left: Float, right: Float, frames: Int) -> AudioClip {
        AudioClip(sampleRate: 8000, channelCount: 2, samples: Array((0..<frames).map { _ in [left, right] }.joined()))!
    }

    /// A stream over a recording whose clock starts 10 s from now: it writes its priming and first period (256
    /// frames), then waits there, far from what `body` places on it, until `body` lifts the hold.
    func withStreamHeldAtFrame256(_ body: (RecordingAudioOutput, MixingStream) throws -> Void) throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds() + 10_000_000_000)
        output.hold(after: 256)
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        defer { output.hold(after: nil) }
        try waitUntil("the stream waits at frame 256") { output.isWaitingAtHold }
        try body(output, stream)
    }

    @Test("a sound scheduled ahead starts at its frame of the stream, plays whole and ends")
    func scheduledStart() throws {
        try withStreamHeldAtFrame256 { output, stream in
            // 1000 frames (125 ms) after the origin of the recording output's clock.
            let id = stream.play(
                ClipSource(constant(left: 0.5, right: 0.25, frames: 100)), at: output.origin + 125_000_000)
            output.hold(after: nil)
            try waitUntil("the sound ends") { !stream.isActive(id) }
            let samples = output.samples
            let firstSound = try #require(stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 }) / 2
            #expect(firstSound == 1000)
            #expect(samples[2000..<2200] == ArraySlice(Array(repeating: [Float(0.5), 0.25], count: 100).joined()))
            #expect(samples[2200...].allSatisfy { $0 == 0 })
        }
    }

    /// A NaN gain made every sound of the stream NaN while it played (silencing them all); an infinity played
    /// full scale. A gain that is not a finite number is silence for its own sound, and the others play on.
    @Test("a gain that is not a finite number silences its own sound and leaves the others as they are")
    func nonFiniteGains() throws {
        try withStreamHeldAtFrame256 { output, stream in
            let at = output.origin + 125_000_000
            let good = stream.play(ClipSource(constant(left: 0.5, right: 0.25, frames: 100)), at: at)
            for gain in [Double.nan, .infinity, -.infinity] {
                stream.play(ClipSource(constant(left: 0.125, right: 0.125, frames: 100)), at: at, gain: gain)
            }
            let faded = stream.play(ClipSource(constant(left: 0.125, right: 0.125, frames: 100)), at: at, gain: 0)
            stream.fade(faded, to: .nan, over: 0)
            output.hold(after: nil)
            try waitUntil("the sound ends") { !stream.isActive(good) }
            let samples = output.samples
            #expect(samples[2000..<2200] == ArraySlice(Array(repeating: [Float(0.5), 0.25], count: 100).joined()))
            #expect(samples.allSatisfy { $0.isFinite })
        }
    }

    @Test(
        "whenEnded calls its handler once as a sound ends, is stopped, or its stream fails or closes; at once for one over"
    )
    func endHandlers() throws {
        let calls = Lock<[String]>([])
        func note(_ what: String) -> @Sendable () -> Void { { calls.withLock { $0.append(what) } } }
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        let short = stream.play(ClipSource(constant(left: 0.1, right: 0.1, frames: 100)))
        let stopped = stream.play(ClipSource(constant(left: 0.1, right: 0.1, frames: 100), loops: true))
        let left = stream.play(ClipSource(constant(left: 0.1, right: 0.1, frames: 100), loops: true))
        stream.whenEnded(short, note("ended"))
        stream.whenEnded(stopped, note("stopped"))
        stream.whenEnded(left, note("closed"))
        try waitUntil("the short sound ends") { !stream.isActive(short) }
        stream.stop(stopped)
        try waitUntil("the stopped sound ends") { !stream.isActive(stopped) }
        try waitUntil("their handlers run") { calls.withLock { $0.count } == 2 }
        stream.whenEnded(short, note("over already"))
        #expect(calls.withLock { $0 } == ["ended", "stopped", "over already"])
        stream.close()
        #expect(calls.withLock { $0 } == ["ended", "stopped", "over already", "closed"])
        stream.close()
        #expect(calls.withLock { $0.count } == 4, "each handler is called once")

        let failing = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let failed = try MixingStream(output: failing, logger: logger)
        defer { failed.close() }
        let playing = failed.play(ClipSource(constant(left: 0.1, right: 0.1, frames: 100), loops: true))
        failed.whenEnded(playing, note("failed"))
        failing.fail(after: failing.frames + 64, with: .ioError)
        try waitUntil("the stream fails and says so to the sound's handler") { calls.withLock { $0.last } == "failed" }
        #expect(failed.failure?.errno == .ioError)
    }

    @Test("a start already passed is kept by skipping into the sound: the stream's frame k carries its frame k")
    func lateStartSkipsIn() throws {
        // The writer held at frame 256, the sound queued at frame 0: 256 frames late, however long the test waited
        // (a free-running writer may be past the whole sound by the time a busy test queues it).
        try withStreamHeldAtFrame256 { output, stream in
            let ramp = (0..<8000).map { Float($0 + 1) / 8000 }
            let id = stream.play(
                ClipSource(AudioClip(sampleRate: 8000, channelCount: 1, samples: ramp)!), at: output.origin)
            output.hold(after: nil)
            try waitUntil("the sound ends") { !stream.isActive(id) }
            let samples = output.samples
            let first = try #require(stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 }) / 2
            #expect(first >= 256, "the start had passed when the sound was queued")
            let misplaced = (first..<8000).filter { (frame: Int) -> Bool in
                samples[2 * frame] != ramp[frame] || samples[2 * frame + 1] != ramp[frame]
            }
            #expect(
                misplaced.isEmpty, "\(misplaced.count) frames not at their place, the first \(misplaced.first ?? 0)")
            #expect(samples[16000...].allSatisfy { $0 == 0 })
        }
    }

    /// A ramp that asks to be played whole when late.
    struct WholeRamp: SoundSource {
        var clip: ClipSource
        var playsWholeWhenLate: Bool { true }
        mutating func renderNext(into buffer: inout [Float]) -> Bool { clip.renderNext(into: &buffer) }
    }

    /// Plays a `WholeRamp` of `frames` frames on a stream over a recording, its start the recording's origin
    /// (passed once the stream has written more than `after` frames), ended at `end` nanoseconds after the origin
    /// when given. Returns the ramp, what was recorded once it ended, and the frame where it was first heard.
    func playLateWholeRamp(frames: Int, after written: Int, endingAfter end: UInt64? = nil) throws -> (
        ramp: [Float], samples: [Float], first: Int
    ) {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        try waitUntil("the stream wrote \(written) frames") { output.frames > written }
        let ramp = (0..<frames).map { Float($0 + 1) / Float(frames) }
        // Played and ended together: sent one after another, the end could reach the writer periods after the
        // start when the test thread is held up between them, and the sound would play on past it.
        let id = stream.together { changes in
            let id = changes.play(
                WholeRamp(clip: ClipSource(AudioClip(sampleRate: 8000, channelCount: 1, samples: ramp)!)),
                at: output.origin)
            if let end { changes.stop(id, atNanoseconds: output.origin + end) }
            return id
        }
        try waitUntil("the sound ends") { !stream.isActive(id) }
        let samples = output.samples
        let first = try #require(stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 }) / 2
        return (ramp, samples, first)
    }

    @Test("a start already passed of a source that plays whole when late plays every frame from its first on")
    func lateStartPlaysWhole() throws {
        let (ramp, samples, first) = try playLateWholeRamp(frames: 800, after: 0)
        #expect(first > 0, "the start had passed when the sound was queued")
        let heard = (0..<800).map { samples[2 * (first + $0)] }
        #expect(heard == ramp, "the ramp is not heard whole from its first frame")
    }

    @Test("a source played whole after a late start keeps the length its end gave it: its end moves as late")
    func lateStartPlaysWholeToItsEnd() throws {
        // Ended 800 frames (100 ms at 8 kHz) after its start, long passed on the recording's clock (200 ms in)
        // when the end is applied.
        let (ramp, samples, first) = try playLateWholeRamp(frames: 1600, after: 1600, endingAfter: 100_000_000)
        #expect(first > 800, "the end had passed when the sound was queued")
        let heard = (0..<800).map { samples[2 * (first + $0)] }
        #expect(heard == Array(ramp[0..<800]), "the ramp's first 800 frames are not heard whole")
        #expect(samples[(2 * (first + 800))...].allSatisfy { $0 == 0 }, "the ramp played on past its end")
    }

    /// Plays a ramp of `frames` frames (a `WholeRamp` when `whole`, else a sound in step with haptics) from frame
    /// 1000 of a stream held at frame 256 (8 kHz), ended at frame `end` on the clock when given, with the writer
    /// falling `gap` frames behind once `after` frames are written. Returns the ramp and the left channel recorded
    /// once the sound ended.
    func playRampFallingBehind(whole: Bool = true, frames: Int, endingAt end: Int?, after: Int, by gap: Int) throws
        -> (ramp: [Float], heard: [Float])
    {
        var result: (ramp: [Float], heard: [Float]) = ([], [])
        try withStreamHeldAtFrame256 { output, stream in
            let ramp = (0..<frames).map { Float($0 + 1) / Float(frames) }
            let clip = ClipSource(AudioClip(sampleRate: 8000, channelCount: 1, samples: ramp)!)
            let start = output.origin + 125_000_000
            let id = whole ? stream.play(WholeRamp(clip: clip), at: start) : stream.play(clip, at: start)
            if let end { stream.stop(id, atNanoseconds: output.origin + UInt64(end) * 125_000) }
            output.fallBehind(after: after, by: gap)
            output.hold(after: nil)
            try waitUntil("the sound ends") { !stream.isActive(id) }
            let samples = output.samples
            result = (ramp, stride(from: 0, to: samples.count, by: 2).map { samples[$0] })
        }
        return result
    }

    @Test("a source played whole keeps its length when the writer falls behind mid-sound: its end moves as late")
    func wholeSourceKeepsItsLengthAfterTheWriterFellBehind() throws {
        // 1600 frames from frame 1000, ended where they end on the clock (frame 2600); the writer falls 200 frames
        // behind once 1400 frames are written, in the middle of the sound.
        let (ramp, frames) = try playRampFallingBehind(frames: 1600, endingAt: 2600, after: 1400, by: 200)
        let heard = frames.filter { $0 != 0 }
        #expect(heard.elementsEqual(ramp), "\(ramp.count - heard.count) frames of the ramp not heard, in order")
        #expect(frames.firstIndex { $0 != 0 } == 1000)
        #expect(frames.lastIndex { $0 != 0 } == 2799, "the end moved by the 200 frames the writer fell behind")
    }

    @Test("a source played whole that falls behind mid-sound by more than the catch-up skips back onto the clock")
    func wholeSourceCatchesUpAfterALongStandstill() throws {
        // 4000 frames from frame 1000, ended at frame 5000 on the clock; the writer falls 2400 frames (0.3 s, past
        // the 0.2 s catch-up) behind once 2400 frames are written, 1400 frames into the sound.
        let (ramp, frames) = try playRampFallingBehind(frames: 4000, endingAt: 5000, after: 2400, by: 2400)
        // Frame k of the ramp is heard at 1000 + k before the standstill. The period mixed before the writer
        // learned of it plays on from where the sound was; from the next on, the frames the standstill took are
        // skipped, frame k is heard at 1000 + k again, and the sound ends where the clock ended it.
        #expect(Array(frames[1000..<2400]) == Array(ramp[0..<1400]))
        let stood = try #require((1000..<frames.count).first { frames[$0] == 0 })
        let resumed = try #require((stood..<frames.count).first { frames[$0] != 0 })
        #expect(resumed - stood == 2400, "the standstill left \(resumed - stood) frames of silence")
        try #require(frames.count >= 5000, "the recording ends at frame \(frames.count)")
        #expect(Array(frames[4900..<5000]) == Array(ramp[3900..<4000]))
        #expect(frames[5000...].allSatisfy { $0 == 0 }, "the ramp played on past the end the clock gave it")
    }

    @Test("a sound in step with haptics that falls behind mid-sound by more than the drift skips back onto the clock")
    func timeKeepingSoundCatchesUpAfterTheDeviceRanDry() throws {
        // 2400 frames from frame 1000; the writer falls 400 frames (50 ms, past the 20 ms drift) behind once 1400
        // frames are written, 400 frames into the sound: a device that ran dry and started again.
        let (ramp, frames) = try playRampFallingBehind(whole: false, frames: 2400, endingAt: nil, after: 1400, by: 400)
        #expect(Array(frames[1000..<1400]) == Array(ramp[0..<400]))
        // The period mixed before the writer learned of it is heard 400 frames late, as it was mixed; from the
        // next on, frame k of the ramp is heard at 1000 + k again, to its last frame.
        let stood = try #require((1000..<frames.count).first { frames[$0] == 0 })
        let resumed = try #require((stood..<frames.count).first { frames[$0] != 0 })
        #expect(resumed - stood == 400, "the device ran dry for \(resumed - stood) frames")
        let period = 64
        try #require(frames.count >= 3400, "the recording ends at frame \(frames.count)")
        #expect(Array(frames[(resumed + period)..<3400]) == Array(ramp[(resumed + period - 1000)..<2400]))
        #expect(frames[3400...].allSatisfy { $0 == 0 }, "the ramp played on past where the clock put its end")
    }

    @Test("a sound in step with haptics that falls behind by less than the drift plays on whole")
    func timeKeepingSoundPlaysThroughAShortStall() throws {
        // 80 frames (10 ms) behind, within the 20 ms drift: every frame of the ramp is heard, in order, 80 late.
        let (ramp, frames) = try playRampFallingBehind(whole: false, frames: 2400, endingAt: nil, after: 1400, by: 80)
        let heard = frames.filter { $0 != 0 }
        #expect(heard.elementsEqual(ramp), "\(ramp.count - heard.count) frames of the ramp not heard, in order")
        #expect(frames.lastIndex { $0 != 0 } == 3479)
    }

    @Test("an end far past anything a clock reaches, on a sound played whole that ran late, leaves it playing")
    func anEndAtTheLastNanosecondDoesNotOverflow() throws {
        // A late start makes the sound run late (its end moves as late): an end at `UInt64.max` stays there.
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        try waitUntil("the stream wrote 800 frames") { output.frames > 800 }
        let ramp = (0..<400).map { Float($0 + 1) / 400 }
        let id = stream.together { changes in
            let id = changes.play(
                WholeRamp(clip: ClipSource(AudioClip(sampleRate: 8000, channelCount: 1, samples: ramp)!)),
                at: output.origin)
            changes.stop(id, atNanoseconds: .max)
            return id
        }
        try waitUntil("the sound ends") { !stream.isActive(id) }
        #expect(output.samples.filter { $0 != 0 }.count == 2 * 400)
    }

    @Test("a pattern's mixer plays on the stream as a source and ends with the pattern")
    func patternSource() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        let pattern = HapticPattern(
            events: [HapticEvent(type: .audioContinuous, relativeTime: 0, duration: 0.05)], parameters: [],
            parameterCurves: [])
        let mixer = AudioMixer(schedule: AudioSchedule(pattern: pattern), clips: [:], sampleRate: 8000)
        let id = stream.play(mixer)
        try waitUntil("the pattern ends") { !stream.isActive(id) }
        let samples = output.samples
        let sounding = stride(from: 0, to: samples.count, by: 2).filter { samples[$0] != 0 }.count
        #expect(abs(sounding - 400) <= 2, "\(sounding) frames of sound for 0.05 s at 8 kHz")
    }

    @Test("a file plays as it is read, mono on both sides, once or looping")
    func fileSource() throws {
        let scratch = Scratch()
        defer { scratch.remove(["ramp.wav"]) }
        let ramp = (0..<500).map { Float($0 + 1) / 500 }
        try AudioFile.write(
            AudioClip(sampleRate: 8000, channelCount: 1, samples: ramp)!, to: scratch.file("ramp.wav"),
            format: .wavFloat)
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        let once = stream.play(try FileSource(path: scratch.file("ramp.wav"), sampleRate: 8000))
        try waitUntil("the file ends") { !stream.isActive(once) }
        let looped = stream.play(try FileSource(path: scratch.file("ramp.wav"), sampleRate: 8000, loops: true))
        try waitUntil("the loop comes round three times") { output.samples.filter { $0 == 1 }.count >= 8 }
        stream.stop(looped)
        try waitUntil("the loop stops") { !stream.isActive(looped) }
        let lefts = stride(from: 0, to: output.samples.count, by: 2).map { output.samples[$0] }
        let first = try #require(lefts.firstIndex { $0 != 0 })
        #expect(Array(lefts[first..<(first + 500)]) == ramp, "the file once")
        let second = try #require(lefts[(first + 500)...].firstIndex { $0 != 0 })
        #expect(Array(lefts[second..<(second + 1500)]) == ramp + ramp + ramp, "the loop, without a gap")
        #expect(
            zip(lefts, stride(from: 1, to: output.samples.count, by: 2).map { output.samples[$0] }).allSatisfy {
                $0 == $1
            })
        #expect(throws: AudioFileError.self) { try FileSource(path: scratch.file("none.wav"), sampleRate: 8000) }
    }

    /// A read that ends exactly at the file's end (here a file of 4096 frames read 512 at a time, no rate
    /// conversion) leaves the next one empty: that is the end of a pass, and the loop goes on.
    @Test func aLoopingFileWhoseLengthIsAMultipleOfTheReadKeepsLooping() throws {
        let scratch = Scratch()
        defer { scratch.remove(["block.wav"]) }
        let samples = (0..<4096).map { Float($0 % 64 + 1) / 64 }
        try AudioFile.write(
            AudioClip(sampleRate: 8000, channelCount: 1, samples: samples)!, to: scratch.file("block.wav"),
            format: .wavFloat)
        let source = try FileSource(path: scratch.file("block.wav"), sampleRate: 8000, loops: true)
        var buffer = [Float](repeating: 0, count: 2 * 512)
        for read in 0..<(8 * 20) {
            #expect(source.renderNext(into: &buffer), "read \(read) ended the loop")
            #expect(buffer.allSatisfy { $0 > 0 }, "read \(read) holds silence")
        }
    }

    @Test("a device that goes away interrupts the stream, which plays on when it can be opened again")
    func interruption() throws {
        let first = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let second = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let attempts = Lock(0)
        let changes = Lock<[Bool]>([])
        let stream = try MixingStream(
            output: first,
            reopen: { () throws(AudioDeviceError) -> any AudioOutput in
                // The device is back at the third attempt.
                let attempt = attempts.withLock { count -> Int in
                    count += 1
                    return count
                }
                guard attempt >= 3 else {
                    throw AudioDeviceError(device: "recording", call: "open", errno: .noDevice, message: "gone")
                }
                return second
            }, logger: logger, onInterruption: { interrupted in changes.withLock { $0.append(interrupted) } })
        defer { stream.close() }
        let id = stream.play(ClipSource(constant(left: 0.1, right: 0.2, frames: 8), loops: true))
        try waitUntil("it plays") { first.samples.contains(0.2) }
        first.fail(after: first.frames + 64)
        // Its report, which a test thread held up past the interruption's 0.7 s cannot miss, as it could the state.
        try waitUntil("the stream is interrupted") { changes.withLock { $0.first == true } }
        #expect(stream.isActive(id), "a sound waits through an interruption")
        try waitUntil("it plays on the device come back") { second.samples.contains(0.2) }
        #expect(!stream.isInterrupted && stream.failure == nil)
        #expect(changes.withLock { $0 } == [true, false])
        #expect(attempts.withLock { $0 } == 3)
    }

    /// Two sounds at 0.75 of full scale each, played together, sum past it: the stream scales the sum (both sides
    /// alike) instead of clipping it, so the louder side lands on full scale and the other keeps its share. Until
    /// 6 December the sum was clipped: 1, 0.75 where the sounds asked for 1.5, 0.75 (the left side cut, the balance
    /// between the sides lost).
    @Test("two sounds summing past full scale are scaled together, not clipped")
    func loudSoundsAreLimited() throws {
        try withStreamHeldAtFrame256 { output, stream in
            let at = output.origin + 125_000_000
            let first = stream.play(ClipSource(constant(left: 0.75, right: 0.5, frames: 100)), at: at)
            let second = stream.play(ClipSource(constant(left: 0.75, right: 0.25, frames: 100)), at: at)
            output.hold(after: nil)
            try waitUntil("both sounds end") { !stream.isActive(first) && !stream.isActive(second) }
            let samples = output.samples
            #expect(samples[2000..<2200] == ArraySlice(Array(repeating: [Float(1), 0.5], count: 100).joined()))
            #expect(samples.allSatisfy { abs($0) <= 1 })
        }
    }

    @Test("two sounds fading out and in together keep their summed power constant, with no gap")
    func crossFadePower() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        defer { output.hold(after: nil) }
        let left = stream.play(ClipSource(constant(left: 0.5, right: 0, frames: 8), loops: true))
        try waitUntil("the first sound plays") { output.samples.contains(0.5) }
        // The second sound and both fades reach the stream together, while its writer waits: both fades start
        // at the same frame.
        output.hold(after: output.frames)
        try waitUntil("the stream waits") { output.isWaitingAtHold }
        let right = stream.play(ClipSource(constant(left: 0, right: 0.5, frames: 8), loops: true), gain: 0)
        stream.fade(left, to: 0, over: 0.1, thenStop: true)
        stream.fade(right, to: 1, over: 0.1)
        output.hold(after: nil)
        try waitUntil("the fade ends") { !stream.isActive(left) }
        try waitUntil("the second plays on after it") { output.frames > 0 && output.samples.last == 0.5 }
        try expectConstantPower(output.samples)
        #expect(stream.isActive(right))
    }

    @Test("changes made together reach the stream as one: a cross-fade made while the stream writes on keeps its power")
    func changesTogether() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let stream = try MixingStream(output: output, logger: logger)
        defer { stream.close() }
        let left = stream.play(ClipSource(constant(left: 0.5, right: 0, frames: 8), loops: true))
        try waitUntil("the first sound plays") { output.samples.contains(0.5) }
        // The stream writes two periods and more while the changes are made: made one by one, the fade-out would
        // begin periods before the fade-in, and the power would dip.
        let right = try stream.together { changes in
            changes.fade(left, to: 0, over: 0.1, thenStop: true)
            let written = output.frames
            try waitUntil("the stream writes on") { output.frames > written + 2 * output.latency.periodFrames }
            let right = changes.play(ClipSource(constant(left: 0, right: 0.5, frames: 8), loops: true), gain: 0)
            changes.fade(right, to: 1, over: 0.1)
            return right
        }
        try waitUntil("the fade ends") { !stream.isActive(left) }
        try waitUntil("the second plays on after it") { output.frames > 0 && output.samples.last == 0.5 }
        try expectConstantPower(output.samples)
        #expect(stream.isActive(right))
    }

    /// From the first sound on, left² + right² stays at 0.25 in every frame of `samples`, through a fade.
    func expectConstantPower(_ samples: [Float]) throws {
        let firstFrame = try #require(stride(from: 0, to: samples.count, by: 2).first { samples[$0] != 0 }) / 2
        var powers: [Float] = []
        for frame in firstFrame..<samples.count / 2 {
            powers.append(samples[2 * frame] * samples[2 * frame] + samples[2 * frame + 1] * samples[2 * frame + 1])
        }
        #expect(powers.allSatisfy { abs($0 - 0.25) < 1e-5 }, "power from \(powers.min() ?? 0) to \(powers.max() ?? 0)")
        #expect(samples.contains { $0 > 0.1 && $0 < 0.4 }, "the fade passes through intermediate gains")
    }

    @Test(
        "a stream its owner lets go of without close() is closed: it is freed, and its thread ends and writes no more")
    func aStreamLetGoOfIsClosed() throws {
        let recording = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        weak var released: MixingStream?
        weak var fed: ForwardingOutput?
        do {
            let output = ForwardingOutput(recording)
            fed = output
            let stream = try MixingStream(output: output, logger: logger)
            released = stream
            try withExtendedLifetime(stream) { try waitUntil("the stream writes") { recording.frames > 0 } }
        }
        #expect(released == nil, "the stream's thread keeps it")
        // Only the stream's thread held the output it writes to: let go of, it has ended, and no write can follow.
        #expect(fed == nil, "the stream's thread runs on, holding its output")
    }

    /// An output that writes to `recording`: the test keeps the recording, and only the stream this is given
    /// keeps this.
    final class ForwardingOutput: AudioOutput {
        let recording: RecordingAudioOutput

        init(_ recording: RecordingAudioOutput) { self.recording = recording }

        var deviceName: String { recording.deviceName }
        var sampleRate: Int { recording.sampleRate }
        var latency: AudioLatency { recording.latency }

        func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 { try recording.write(samples) }
        func delay() throws(AudioDeviceError) -> Double { try recording.delay() }
        func drain() throws(AudioDeviceError) { try recording.drain() }
        func close() { recording.close() }
    }

    @Test("stop ends a sound; a failed write ends the stream and is reported once")
    func stopAndFailure() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let failures = Lock<[AudioDeviceError]>([])
        let stream = try MixingStream(output: output, logger: logger) { error in failures.withLock { $0.append(error) }
        }
        defer { stream.close() }
        let id = stream.play(ClipSource(constant(left: 0.1, right: 0.1, frames: 8), loops: true))
        try waitUntil("it plays") { output.samples.contains(0.1) }
        stream.stop(id)
        try waitUntil("it ends") { !stream.isActive(id) }
        output.fail(after: output.frames + 64)
        try waitUntil("the stream fails") { stream.failure != nil }
        #expect(stream.failure?.errno == .noDevice)
        #expect(failures.withLock { $0.count } == 1)
        #expect(!stream.isActive(stream.play(ClipSource(constant(left: 0.1, right: 0.1, frames: 8)))))
    }

    /// The voice-coil shape: one-report periods, a limiter, no priming, idle when silent.
    static let controllerShape = MixingStream.Shape(
        minimumPeriodFrames: 32, limiter: { $0 > 0.5 ? 0.5 : $0 }, primesWithSilence: false, idlesWhenSilent: true)

    @Test("a stream that idles when silent writes nothing before its first sound")
    func idleStreamWritesNothingUntilASound() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds(), sampleRate: 3000)
        let stream = try MixingStream(output: output, shape: Self.controllerShape, logger: logger)
        defer { stream.close() }
        // Idle, it writes nothing until a change is posted: what it wrote before is all there is.
        try waitUntil("the stream idles") { stream.isIdle }
        #expect(output.frames == 0)
    }

    @Test("unprimed, a sound played at once starts in the first period written, and the stream idles after it")
    func unprimedSoundStartsAtOnceAndTheStreamIdlesAfterIt() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds(), sampleRate: 3000)
        let stream = try MixingStream(output: output, shape: Self.controllerShape, logger: logger)
        defer { stream.close() }
        let clip = AudioClip(sampleRate: 3000, channelCount: 1, samples: [Float](repeating: 0.25, count: 100))!
        let id = stream.play(ClipSource(clip))
        try waitUntil("the sound ends") { !stream.isActive(id) }
        try waitUntil("a silent period follows") { output.frames >= 160 }
        let written = output.frames
        // Idle, it writes nothing until a change is posted: nothing came after the frames counted above.
        try waitUntil("the stream idles") { stream.isIdle }
        #expect(output.frames == written)
        #expect(written % 32 == 0, "whole periods of 32 frames")
        let samples = output.samples
        #expect(samples[0] == 0.25, "the first frame written is the sound's")
        #expect(samples[0..<200].allSatisfy { $0 == 0.25 })
        #expect(samples[200...].allSatisfy { $0 == 0 })
        #expect(written <= 128 + 32, "the sound's four periods and one silent one")
    }

    @Test("an idle stream wakes for the next sound and starts it at once")
    func idleStreamWakesForTheNextSound() throws {
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds(), sampleRate: 3000)
        let stream = try MixingStream(output: output, shape: Self.controllerShape, logger: logger)
        defer { stream.close() }
        let clip = AudioClip(sampleRate: 3000, channelCount: 1, samples: [Float](repeating: 0.25, count: 32))!
        let first = stream.play(ClipSource(clip))
        try waitUntil("the first sound ends") { !stream.isActive(first) }
        // Its period and the one silent period after it (the stream then idles), however late the writer runs.
        try waitUntil("the stream wrote its silent period") { output.frames >= 64 }
        let before = output.frames
        let second = stream.play(ClipSource(clip))
        try waitUntil("the second sound ends") { !stream.isActive(second) }
        let samples = output.samples
        #expect(samples[(2 * before)..<(2 * before + 64)].allSatisfy { $0 == 0.25 })
    }

    @Test("the shape's limiter acts on the mix of every sound, before the clip")
    func limiterActsOnTheMix() throws {
        // The recording's clock starts 10 s from now: the stream's first period, placed by the real clock, falls
        // long before the start however slowly its thread comes up, and every later period is counted in frames.
        // The stream does not idle (one that does would sleep until 10 s from now, the sounds' start).
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds() + 10_000_000_000, sampleRate: 3000)
        // The stream writes a period and waits before the next: the second sound is posted meanwhile. Both start
        // at frame 300, well after the hold.
        output.hold(after: 32)
        var shape = Self.controllerShape
        shape.idlesWhenSilent = false
        let stream = try MixingStream(output: output, shape: shape, logger: logger)
        defer { stream.close() }
        defer { output.hold(after: nil) }
        let clip = AudioClip(sampleRate: 3000, channelCount: 1, samples: [Float](repeating: 0.3, count: 32))!
        let start = output.origin + 100_000_000
        let first = stream.play(ClipSource(clip), at: start)
        try waitUntil("the stream holds its second period") { output.isWaitingAtHold }
        let second = stream.play(ClipSource(clip), at: start)
        output.hold(after: nil)
        try waitUntil("both end") { !stream.isActive(first) && !stream.isActive(second) }
        let samples = output.samples
        #expect(samples[600..<664].allSatisfy { $0 == 0.5 }, "0.3 + 0.3 limited to 0.5")
        #expect(samples[..<600].allSatisfy { $0 == 0 })
    }

    /// A queue that plays in real time, as a controller's does (`NullAudioOutput`: a write waits while more than
    /// its buffer is queued), recording every write: its samples and when its first frame is heard.
    final class PacedRecording: AudioOutput {
        private let queue: NullAudioOutput
        private let written = Lock<[(heard: UInt64, samples: [Float])]>([])

        init(bufferSeconds: Double) { queue = NullAudioOutput(sampleRate: 3000, bufferSeconds: bufferSeconds) }

        var deviceName: String { "paced recording" }
        var sampleRate: Int { queue.sampleRate }
        var latency: AudioLatency { queue.latency }
        var writes: [(heard: UInt64, samples: [Float])] { written.withLock { $0 } }
        /// When the last frame written will have been heard, as the stream counts it.
        var queueEnd: UInt64? {
            writes.last.map { $0.heard + UInt64($0.samples.count / 2) * 1_000_000_000 / UInt64(sampleRate) }
        }

        func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
            let heard = try queue.write(samples)
            written.withLock { $0.append((heard, samples)) }
            return heard
        }

        func delay() throws(AudioDeviceError) -> Double { try queue.delay() }
        func drain() throws(AudioDeviceError) { try queue.drain() }
        func close() { queue.close() }
    }

    /// A mono clip at 3 kHz of `frames` frames at 0.25.
    static func quarterLevel(frames: Int) -> AudioClip {
        AudioClip(sampleRate: 3000, channelCount: 1, samples: [Float](repeating: 0.25, count: frames))!
    }

    @Test("an idle stream writes no silence for a sound placed seconds ahead until it is a buffer and a period away")
    func idleStreamSleepsUntilASoundPlacedAheadIsNear() throws {
        // Periods of 32 frames, a buffer of 96: the stream wakes 128 frames (42.7 ms) before the sound, as far
        // ahead as a running stream keeps it, so at most four silent periods come before it (fewer if it woke
        // late), not one every 10.7 ms from the moment it was placed (about 47 in the half second).
        let output = PacedRecording(bufferSeconds: 0.032)
        let stream = try MixingStream(output: output, shape: Self.controllerShape, logger: logger)
        defer { stream.close() }
        let id = stream.play(
            ClipSource(Self.quarterLevel(frames: 300)), at: MonotonicTime.nanoseconds() + 500_000_000)
        try waitUntil("the sound ends") { !stream.isActive(id) }
        let writes = output.writes
        let firstSound = try #require(writes.firstIndex { $0.samples.contains { $0 != 0 } })
        #expect(firstSound <= 4, "\(firstSound) silent periods before the sound")
    }

    @Test("a stop at a time that falls on a period's first frame leaves one silent period after the sound, not two")
    func aStopOnAPeriodsFirstFrameLeavesOneSilentPeriod() throws {
        // The recording's clock starts 10 s from now; the sound, played at once, is mixed into the stream's first
        // period (frames 0-31), and the writer waits before its second. The stop, at frame 96, ends the sound
        // with its third period: the fourth is silent, and the stream idles.
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds() + 10_000_000_000, sampleRate: 3000)
        output.hold(after: 32)
        let stream = try MixingStream(output: output, shape: Self.controllerShape, logger: logger)
        defer { stream.close() }
        defer { output.hold(after: nil) }
        let id = stream.play(ClipSource(Self.quarterLevel(frames: 3000)))
        try waitUntil("the stream holds its second period") { output.isWaitingAtHold }
        stream.stop(id, atNanoseconds: output.origin + 32_000_000)
        output.hold(after: nil)
        try waitUntil("the sound ends") { !stream.isActive(id) }
        try waitUntil("a silent period follows") { output.frames >= 128 }
        // Idle, it writes nothing until a change is posted: what it wrote before is all there is.
        try waitUntil("the stream idles") { stream.isIdle }
        #expect(output.frames == 128, "three periods of sound and one silent one")
        let samples = output.samples
        #expect(samples[..<192].allSatisfy { $0 == 0.25 } && samples[192...].allSatisfy { $0 == 0 })
    }

    @Test("an idle stream whose last periods still play places the next sound right after them, to the frame")
    func idleStreamPlacesTheNextSoundAfterWhatStillPlays() throws {
        // A buffer of two seconds: a 1 s sound is queued at once, and the stream idles with it still playing. The
        // next sound can start no sooner than where that ends; placed there, it is written as the period that
        // follows, heard at its start (before, the idle stream forgot its queue: it said a sound could start at
        // once, and placed a sound's frames as if its next period were heard when written).
        let output = PacedRecording(bufferSeconds: 2)
        let stream = try MixingStream(output: output, shape: Self.controllerShape, logger: logger)
        defer { stream.close() }
        let clip = Self.quarterLevel(frames: 3000)
        let first = stream.play(ClipSource(clip))
        try waitUntil("the sound ends") { !stream.isActive(first) }
        try waitUntil("the stream idles, its queue's end the earliest start") {
            stream.earliestStart != nil && stream.earliestStart == output.queueEnd
        }
        let start = try #require(stream.earliestStart)
        let before = output.writes.count
        let second = stream.play(ClipSource(clip), at: start)
        try waitUntil("the second sound ends") { !stream.isActive(second) }
        let next = try #require(output.writes.dropFirst(before).first)
        #expect(next.heard == start && next.samples.prefix(64).allSatisfy { $0 == 0.25 })
    }
}
