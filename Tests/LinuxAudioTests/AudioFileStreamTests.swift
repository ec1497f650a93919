import AudioRendering
import LinuxAudio
import Testing

@Suite("Audio file streams")
struct AudioFileStreamTests {
    /// Every frame of `stream`, read in blocks of `frames`.
    func readAll(_ stream: AudioFileStream, frames: Int) throws -> [Float] {
        var samples: [Float] = []
        while !stream.isFinished { samples += try stream.read(frames: frames) }
        return samples
    }

    /// libsamplerate converts between rates at most 256 times apart: a file further from the output's rate opened,
    /// and its first read failed, so it played as silence (music that replaced the track playing), until 6 December.
    @Test("a file whose rate cannot be converted to the stream's is refused when the stream opens, saying why")
    func unconvertibleRate() throws {
        let scratch = Scratch()
        defer { scratch.remove(["low.wav"]) }
        let clip = try #require(
            AudioClip(sampleRate: 100, channelCount: 1, samples: [Float](repeating: 0.5, count: 100)))
        try AudioFile.write(clip, to: scratch.file("low.wav"), format: .wavFloat)
        #expect {
            try AudioFileStream(path: scratch.file("low.wav"), sampleRate: 48000)
        } throws: { "\($0)".contains("cannot convert 1 channels at 100 Hz to 48000 Hz: libsamplerate converts") }
        #expect(throws: AudioFileError.self) { try FileSource(path: scratch.file("low.wav"), sampleRate: 48000) }
        // Within 256 times, and at its own rate, it opens.
        _ = try AudioFileStream(path: scratch.file("low.wav"), sampleRate: 25600)
        _ = try AudioFileStream(path: scratch.file("low.wav"), sampleRate: 100)
    }

    @Test(
        "a converted stream gives what the whole file converted at once gives, block by block, and again after rewind")
    func convertedStream() throws {
        let scratch = Scratch()
        defer { scratch.remove(["music.wav"]) }
        let clip = sine(frequency: 440, rate: 44100, seconds: 0.5, channels: 2)
        try AudioFile.write(clip, to: scratch.file("music.wav"), format: .wavFloat)
        let whole = try AudioFile.load(scratch.file("music.wav"), sampleRate: 48000)
        let stream = try AudioFileStream(path: scratch.file("music.wav"), sampleRate: 48000)
        #expect(stream.channelCount == 2 && stream.fileSampleRate == 44100)
        let streamed = try readAll(stream, frames: 1000)
        #expect(abs(streamed.count - whole.samples.count) <= 4, "\(streamed.count) against \(whole.samples.count)")
        let shared = min(streamed.count, whole.samples.count)
        let worst = zip(streamed[..<shared], whole.samples[..<shared]).map { abs($0 - $1) }.max() ?? 1
        #expect(worst < 1e-3, "largest difference \(worst)")
        #expect(try stream.read(frames: 10).isEmpty, "nothing after the end")
        try stream.rewind()
        #expect(try stream.read(frames: 777) == Array(streamed[..<(2 * 777)]))
    }

    @Test("a stream at the file's own rate gives the decoded samples exactly; a bad file is refused with its reason")
    func sameRateAndBadFile() throws {
        let scratch = Scratch()
        defer { scratch.remove(["tone.flac"]) }
        try AudioFile.write(
            sine(frequency: 300, rate: 48000, seconds: 0.3), to: scratch.file("tone.flac"), format: .flac)
        let stream = try AudioFileStream(path: scratch.file("tone.flac"), sampleRate: 48000)
        #expect(try readAll(stream, frames: 4096) == AudioFile.decode(scratch.file("tone.flac")).samples)
        let error = #expect(throws: AudioFileError.self) {
            try AudioFileStream(path: scratch.file("missing.ogg"), sampleRate: 48000)
        }
        #expect(error?.reason == "no such file")
    }
}
