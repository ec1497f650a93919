import AudioRendering
import CSndfile
import Glibc
@testable import LinuxAudio
@_spi(Internals) import LinuxSystem
import Synchronization
import Testing

/// A sine of `frequency` at `rate`, `seconds` long, on one or two channels (the right one at half level).
func sine(frequency: Double, rate: Double, seconds: Double, channels: Int = 1, level: Double = 0.5) -> AudioClip {
    var samples: [Float] = []
    for frame in 0..<Int(rate * seconds) {
        let value = level * sin(2 * .pi * frequency * Double(frame) / rate)
        samples.append(Float(value))
        if channels == 2 { samples.append(Float(value / 2)) }
    }
    return AudioClip(sampleRate: rate, channelCount: channels, samples: samples)!
}

func rms(_ samples: some Collection<Float>) -> Double {
    (samples.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(max(samples.count, 1))).squareRoot()
}

/// A fresh folder under /tmp, removed with its files by `remove`.
struct Scratch {
    let path: String

    init() {
        var template = Array("/tmp/linuxaudio-test-XXXXXX".utf8CString)
        path = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
    }

    func file(_ name: String) -> String { "\(path)/\(name)" }

    func remove(_ names: [String]) {
        for name in names { unlink(file(name)) }
        rmdir(path)
    }
}

@Suite("Audio files")
struct AudioFileTests {
    @Test(
        "lossless formats decode to the samples written",
        arguments: [AudioFileFormat.wav16, .wavFloat, .aiff16, .flac])
    func losslessRoundTrip(format: AudioFileFormat) throws {
        let scratch = Scratch()
        defer { scratch.remove(["clip"]) }
        let clip = sine(frequency: 440, rate: 44100, seconds: 0.1, channels: 2)
        try AudioFile.write(clip, to: scratch.file("clip"), format: format)
        let decoded = try AudioFile.decode(scratch.file("clip"))
        #expect(decoded.sampleRate == 44100 && decoded.channelCount == 2 && decoded.frameCount == clip.frameCount)
        let step: Float = format == .wavFloat ? 0 : 1.0 / 32768
        let worst = zip(clip.samples, decoded.samples).map { abs($0 - $1) }.max() ?? 1
        #expect(worst <= step, "\(format): off by \(worst)")
    }

    /// A FIFO is refused without waiting for a writer (an `open` for reading would block until one came, and
    /// nothing would end it: `haptics play` then ignored Ctrl-C); so are a device and a directory. A decode still
    /// blocked after 5 s is unblocked here by opening the FIFO's write end, and fails the test.
    /// "decoded", or why the sound at `path` was refused, as a clip or as a stream.
    private static func outcome(ofOpening path: String, asStream stream: Bool) -> String {
        do throws(AudioFileError) {
            if stream {
                _ = try AudioFileStream(path: path, sampleRate: 48000)
            } else {
                _ = try AudioFile.decode(path)
            }
            return "decoded"
        } catch {
            return error.reason
        }
    }

    @Test("a FIFO, a device or a directory is refused at once, for a clip and for a stream")
    func notARegularFileIsRefusedWithoutBlocking() async throws {
        let scratch = Scratch()
        defer { scratch.remove(["fifo.wav"]) }
        let fifo = scratch.file("fifo.wav")
        try #require(mkfifo(fifo, 0o600) == 0)
        for (path, reason) in [(fifo, "FIFO"), ("/dev/zero", "device"), (scratch.path, "directory")] {
            for stream in [false, true] {
                let finished = Mutex(false)
                let outcome = Task.detached { () -> String in
                    defer { finished.withLock { $0 = true } }
                    return Self.outcome(ofOpening: path, asStream: stream)
                }
                let deadline = ContinuousClock.now + .seconds(5)
                while !finished.withLock({ $0 }) && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
                if !finished.withLock({ $0 }) {
                    Issue.record("\(path) (stream \(stream)): still blocked after 5 s")
                    let writer = open(fifo, O_WRONLY | O_NONBLOCK)
                    if writer >= 0 { close(writer) }
                }
                let result = await outcome.value
                #expect(result.contains(reason), "\(path) (stream \(stream)): \(result)")
            }
        }
    }

    /// A device a pattern names as its sound is never opened, for a clip or a stream: opening one may act
    /// (`/dev/watchdog` arms the watchdog). Until 7 December the file was opened first and judged by its descriptor.
    /// The device is named through a link of its own, so that a fault planned for the opens of that path finds
    /// these alone among the tests running beside them.
    @Test("a device named as a sound is refused without being opened, for a clip and for a stream")
    func aDeviceIsNeverOpened() throws {
        let scratch = Scratch()
        let link = scratch.file("device-\(UInt64.random(in: 0...UInt64.max)).wav")
        defer { unlink(link) }
        try #require(symlink("/dev/null", link) == 0)
        for stream in [false, true] {
            let plan = SyscallFaults.Plan(site: "open", errno: .ioError, calls: .from(1), matching: "open(\(link)")
            let (reason, tally) = try SyscallFaults.withPlan(plan) { Self.outcome(ofOpening: link, asStream: stream) }
            #expect(reason == "it is a device, not a regular file", "stream \(stream)")
            #expect(tally.injected == 0, "stream \(stream): the device was opened")
        }
    }

    /// A file the kernel makes up as it is read is refused as one, for a clip and for a stream: libsndfile took
    /// `/proc/self/status` and a sysfs attribute for sounds in a format it did not recognise, after reading them
    /// ("Format not recognised").
    @Test("a /proc or /sys file is refused as made up by the kernel, for a clip and for a stream")
    func aFileTheKernelMakesUpIsRefusedAsOne() throws {
        let files = [
            ("/proc/self/status", "/proc"), ("/sys/devices/system/cpu/online", "/sys"),
        ]
        for (path, name) in files {
            try #require(access(path, R_OK) == 0, "\(path) is not there to read")
            let refusal = "it is made up by the kernel as it is read (a \(name) file), not a regular file"
            #expect(throws: AudioFileError(path: path, reason: refusal)) { try AudioFile.decode(path) }
            #expect(throws: AudioFileError(path: path, reason: refusal)) {
                try AudioFileStream(path: path, sampleRate: 48000)
            }
        }
    }

    /// A file the kernel makes up is not written: what is written to it is an order to the kernel
    /// (`/proc/sys/vm/drop_caches`). Refused before it is opened, which libsndfile did, then failed writing.
    @Test("writing a sound to a /proc file is refused before the file is opened")
    func writingToAFileTheKernelMakesUpIsRefused() throws {
        let path = "/proc/self/status"
        try #require(access(path, F_OK) == 0, "\(path) is not there")
        let clip = try #require(AudioClip(sampleRate: 8000, channelCount: 1, samples: [0, 0.5]))
        #expect(
            throws: AudioFileError(
                path: path, reason: "it is made up by the kernel as it is read (a /proc file), not a regular file")
        ) { try AudioFile.write(clip, to: path, format: .wav16) }
    }

    @Test("samples written block by block decode to the samples of one clip")
    func blocksWriteTheSamplesInOrder() throws {
        let scratch = Scratch()
        defer { scratch.remove(["clip"]) }
        let clip = sine(frequency: 440, rate: 8000, seconds: 0.1, channels: 2)
        // Blocks of 1, 2, 3 ... frames, the last one short, then an empty block before the end.
        var blocks: [[Float]] = []
        var first = 0
        while first < clip.samples.count {
            let end = Swift.min(first + 2 * (blocks.count + 1), clip.samples.count)
            blocks.append(Array(clip.samples[first..<end]))
            first = end
        }
        blocks.append([])
        var next = blocks.makeIterator()
        try AudioFile.write(to: scratch.file("clip"), format: .wavFloat, sampleRate: 8000, channelCount: 2) {
            next.next()
        }
        let decoded = try AudioFile.decode(scratch.file("clip"))
        #expect(decoded.sampleRate == 8000 && decoded.channelCount == 2)
        #expect(decoded.samples == clip.samples)
    }

    @Test("a block of part of a frame, or a rate or channel count that is no file's, fails and says why")
    func badBlocksAndFormatsFail() throws {
        let scratch = Scratch()
        defer { scratch.remove(["clip"]) }
        var blocks = [[Float](repeating: 0, count: 4), [0, 0, 0]].makeIterator()
        #expect {
            try AudioFile.write(to: scratch.file("clip"), format: .wav16, sampleRate: 8000, channelCount: 2) {
                blocks.next()
            }
        } throws: { "\($0)".contains("a block of 3 samples is not a whole number of 2-channel frames") }
        for (rate, channels) in [(Double.nan, 2), (0, 2), (8000, 3), (8000, 0)] {
            #expect {
                try AudioFile.write(
                    to: scratch.file("clip"), format: .wav16, sampleRate: rate, channelCount: channels
                ) { nil }
            } throws: { "\($0)".contains("cannot write \(channels) channels") }
        }
    }

    @Test(
        "lossy formats decode to about the length and level written",
        arguments: [AudioFileFormat.oggVorbis, .opus, .mp3])
    func lossyRoundTrip(format: AudioFileFormat) throws {
        let scratch = Scratch()
        defer { scratch.remove(["clip"]) }
        let clip = sine(frequency: 440, rate: 48000, seconds: 0.5)
        try AudioFile.write(clip, to: scratch.file("clip"), format: format)
        let decoded = try AudioFile.decode(scratch.file("clip"))
        #expect(decoded.sampleRate == 48000 && decoded.channelCount == 1)
        #expect(abs(decoded.duration - 0.5) < 0.06, "\(format): \(decoded.duration) s")
        let level = rms(decoded.samples)
        #expect(abs(level - rms(clip.samples)) < 0.05 * rms(clip.samples), "\(format): rms \(level)")
    }

    /// libvorbis takes a copy of the whole of its first buffer on the stack (`alloca`): a minute of mono at 48 kHz
    /// handed to libsndfile in one call, 11.5 MB, overflowed the stack and killed the process.
    @Test func aMinuteOfOggVorbisWrittenAsOneClipIsWrittenWhole() throws {
        let scratch = Scratch()
        defer { scratch.remove(["minute.ogg"]) }
        let clip = sine(frequency: 440, rate: 48000, seconds: 60)
        try AudioFile.write(clip, to: scratch.file("minute.ogg"), format: .oggVorbis)
        let decoded = try AudioFile.decode(scratch.file("minute.ogg"))
        #expect(abs(decoded.duration - 60) < 0.06, "\(decoded.duration) s")
        #expect(abs(rms(decoded.samples) - rms(clip.samples)) < 0.05 * rms(clip.samples))
    }

    /// Writes `samples` as a float WAV file of `channels` channels at 8 kHz.
    func writeFloatFile(_ path: String, channels: Int, _ samples: [Float]) throws {
        var info = SF_INFO()
        info.samplerate = 8000
        info.channels = Int32(channels)
        info.format = Int32(SF_FORMAT_WAV | SF_FORMAT_FLOAT)
        let file = try #require(sf_open(path, Int32(SFM_WRITE), &info))
        let written = samples.withUnsafeBufferPointer {
            sf_writef_float(file, $0.baseAddress, sf_count_t(samples.count / channels))
        }
        sf_close(file)
        #expect(written == samples.count / channels)
    }

    @Test("a file of more than two channels keeps its first two, across the blocks it is read in")
    func manyChannels() throws {
        let scratch = Scratch()
        defer { scratch.remove(["four.wav"]) }
        let frames = 32768 + 1000  // over one of the blocks of 32,768 four-channel frames the file is read in
        let samples = (0..<frames * 4).map { Float($0 % 1000) / 1000 }
        try writeFloatFile(scratch.file("four.wav"), channels: 4, samples)
        let decoded = try AudioFile.decode(scratch.file("four.wav"))
        let firstTwo: [Float] = (0..<frames).flatMap { frame -> [Float] in [samples[4 * frame], samples[4 * frame + 1]]
        }
        #expect(decoded.channelCount == 2 && decoded.frameCount == frames)
        #expect(decoded.samples == firstTwo)
    }

    /// A conversion libsamplerate refuses (rates more than 256 times apart) is refused before its output is
    /// allocated: a second at 1 Hz made for 48 kHz took 230 MB first, until 6 December.
    @Test("a clip whose rate cannot be converted is refused with why, before anything is allocated")
    func unconvertibleRatio() throws {
        let clip = try #require(
            AudioClip(sampleRate: 1, channelCount: 1, samples: [Float](repeating: 0.5, count: 1000)))
        #expect {
            try AudioFile.resample(clip, to: 48000)
        } throws: { "\($0)".contains("cannot convert 1.0 Hz to 48000 Hz: libsamplerate converts") }
        #expect(try AudioFile.resample(clip, to: 256).frameCount >= 255_000)
    }

    /// The block a file is read in holds at most 131,072 samples, whatever the channels: a 20 KB file of 1,024
    /// channels took a block of 256 MB, until 6 December.
    @Test("a file of 1,024 channels is read in blocks of at most 131,072 samples, and keeps its first two")
    func thousandChannels() throws {
        let scratch = Scratch()
        defer { scratch.remove(["many.wav"]) }
        #expect(AudioFile.blockFrames(channels: 1024) * 1024 <= AudioFile.blockSamples)
        #expect(AudioFile.blockFrames(channels: 2) == 65536 && AudioFile.blockFrames(channels: 200_000) == 1)
        let frames = 300  // over two blocks of 128 frames
        let samples = (0..<frames * 1024).map { Float($0 % 1024) / 1024 }
        try writeFloatFile(scratch.file("many.wav"), channels: 1024, samples)
        let decoded = try AudioFile.decode(scratch.file("many.wav"))
        #expect(decoded.channelCount == 2 && decoded.frameCount == frames)
        #expect(decoded.samples == (0..<frames).flatMap { _ in [Float(0), Float(1) / 1024] })
    }

    @Test("a float file's samples beyond ±1 decode as they are; a NaN decodes as silence, an infinity as full scale")
    func floatFileLevels() throws {
        let scratch = Scratch()
        defer { scratch.remove(["loud.wav"]) }
        try writeFloatFile(scratch.file("loud.wav"), channels: 1, [1.5, -2, .nan, .infinity, -.infinity, 0.25])
        let expected: [Float] = [1.5, -2, 0, 1, -1, 0.25]
        #expect(try AudioFile.decode(scratch.file("loud.wav")).samples == expected)
        let stream = try AudioFileStream(path: scratch.file("loud.wav"), sampleRate: 8000)
        #expect(try stream.read(frames: 6) == expected)
    }

    @Test("a conversion that would make more than the most samples decoded whole is refused before it is made")
    func conversionOverTheLimit() throws {
        let frames = AudioFile.mostSamples / 2 / 256 + 1
        let clip = try #require(
            AudioClip(sampleRate: 1, channelCount: 2, samples: [Float](repeating: 0, count: 2 * frames)))
        // Caught by hand: `#expect(throws:)` would print the whole clip were one made.
        do {
            let made = try AudioFile.resample(clip, to: 256)
            Issue.record("a clip of \(made.samples.count) samples was made")
        } catch {
            #expect(error.reason.contains("the most decoded whole"), "\(error.reason)")
        }
    }

    @Test("a missing file and a file that is not audio are refused with the path and libsndfile's reason")
    func badFiles() throws {
        let scratch = Scratch()
        defer { scratch.remove(["text.wav"]) }
        let missing = scratch.file("missing.wav")
        let error = #expect(throws: AudioFileError.self) { try AudioFile.decode(missing) }
        #expect(
            error?.path == missing && error?.reason == "no such file", "\(String(describing: error))")
        let text = scratch.file("text.wav")
        let descriptor = creat(text, 0o644)
        _ = "not a sound".withCString { write(descriptor, $0, 11) }
        close(descriptor)
        let notAudio = #expect(throws: AudioFileError.self) { try AudioFile.decode(text) }
        #expect(notAudio?.path == text && notAudio?.reason.isEmpty == false)
    }

    @Test("resampling keeps the frequency and level and scales the length by the ratio")
    func resampling() throws {
        let clip = sine(frequency: 1000, rate: 44100, seconds: 0.2)
        let converted = try AudioFile.resample(clip, to: 48000)
        #expect(converted.sampleRate == 48000)
        #expect(abs(converted.frameCount - 9600) <= 2, "\(converted.frameCount) frames")
        // Away from the edges (the converter's filter starts and ends in silence): level and crossings.
        let middle = converted.samples[1000..<8600]
        #expect(abs(rms(middle) - 0.5 / 2.0.squareRoot()) < 0.005, "rms \(rms(middle))")
        let crossings = zip(middle, middle.dropFirst()).filter { $0 < 0 && $1 >= 0 }.count
        #expect(abs(crossings - 7600 * 1000 / 48000) <= 1, "\(crossings) upward crossings")
        #expect(try AudioFile.resample(clip, to: 44100).samples == clip.samples)
        #expect(throws: ResamplingError.self) { try AudioFile.resample(clip, to: 0) }
    }
}
