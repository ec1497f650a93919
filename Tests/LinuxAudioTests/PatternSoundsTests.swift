import AHAP
import AudioRendering
import Glibc
import LinuxAudio
import Testing

@Suite("Pattern sounds")
struct PatternSoundsTests {
    func custom(_ path: String) -> HapticEvent { HapticEvent(audioWaveformPath: path, relativeTime: 0) }

    @Test("files are found in the first folder that has them, decoded once and converted to the output's rate")
    func locatesAndDecodes() throws {
        let empty = Scratch()
        let assets = Scratch()
        defer {
            empty.remove([])
            assets.remove(["sub/b.wav", "a.wav"])
        }
        mkdir(assets.file("sub"), 0o755)
        defer { rmdir(assets.file("sub")) }
        try AudioFile.write(sine(frequency: 440, rate: 24000, seconds: 0.1), to: assets.file("a.wav"), format: .wav16)
        try AudioFile.write(
            sine(frequency: 440, rate: 48000, seconds: 0.2), to: assets.file("sub/b.wav"), format: .flac)
        let pattern = HapticPattern(
            events: [custom("a.wav"), custom("sub/b.wav"), custom("a.wav"), custom(assets.file("a.wav"))],
            parameters: [], parameterCurves: [])
        let sounds = PatternSounds(pattern: pattern, directories: [empty.path, assets.path], sampleRate: 48000)
        #expect(sounds.failures.isEmpty, "\(sounds.failures)")
        #expect(Set(sounds.clips.keys) == ["a.wav", "sub/b.wav", .path(assets.file("a.wav"))])
        #expect(sounds.clips.values.allSatisfy { $0.sampleRate == 48000 })
        #expect(abs((sounds.clipDurations["a.wav"] ?? 0) - 0.1) < 0.001)
        #expect(abs((sounds.clipDurations["sub/b.wav"] ?? 0) - 0.2) < 0.001)
    }

    @Test("a missing file, one leaving its folder and one that is not audio are failures with their reasons")
    func failures() throws {
        let assets = Scratch()
        defer { assets.remove(["text.wav"]) }
        let descriptor = creat(assets.file("text.wav"), 0o644)
        _ = "not a sound".withCString { write(descriptor, $0, 11) }
        close(descriptor)
        let pattern = HapticPattern(
            events: [custom("missing.wav"), custom("../text.wav"), custom("text.wav"), custom("")],
            parameters: [], parameterCurves: [])
        let sounds = PatternSounds(pattern: pattern, directories: [assets.path], sampleRate: 48000)
        #expect(sounds.clips.isEmpty)
        #expect(sounds.failures["missing.wav"]?.reason == "no such file: not in \(assets.path)")
        #expect(sounds.failures["../text.wav"]?.reason.contains("leaves its folder") == true)
        #expect(sounds.failures["text.wav"]?.reason.isEmpty == false)
        #expect(sounds.failures["text.wav"]?.path == assets.file("text.wav"), "the decoder names the file it read")
        #expect(sounds.failures[""]?.reason == "the path is empty")
    }

    @Test("a failure's description shows a path from a pattern with a newline or escape quoted, on one line")
    func failureDescriptionsStayOnOneLine() {
        let pattern = HapticPattern(
            events: [custom("x.wav\nplay: ok\u{1B}[2K")], parameters: [], parameterCurves: [])
        let sounds = PatternSounds(pattern: pattern, directories: [], sampleRate: 48000)
        let failure = sounds.failures.values.first
        #expect(failure?.description == #""x.wav\nplay: ok\u001b[2K": no such file: no folder to look in"#)
        #expect(AudioFileError(path: "/sounds/tap é.wav", reason: "short").description == "/sounds/tap é.wav: short")
    }

    @Test(
        "a looping pattern's sound comes round where the clock puts each pass, however many there are",
        arguments: [1.0, 1.3])
    func loopPassesKeepTheClock(rate: Double) {
        // A 5 ms tone looped every 0.1234 s at 8 kHz (987.2 frames at rate 1): until 7 December the loop's length
        // was rounded to whole frames once and repeated, 100 frames off after 500 passes.
        let loop = 0.1234
        let pattern = HapticPattern(
            events: [HapticEvent(type: .audioContinuous, relativeTime: 0, duration: 0.005)], parameters: [],
            parameterCurves: [])
        var source = PatternSoundSource(
            schedule: AudioSchedule(pattern: pattern), clips: [:], sampleRate: 8000, rate: rate, loopLength: loop)
        let passes = 500
        let framesPerPass = loop / rate * 8000
        var buffer = [Float](repeating: 0, count: 2 * Int((Double(passes) + 0.5) * framesPerPass))
        _ = source.renderNext(into: &buffer)
        let left = stride(from: 0, to: buffer.count, by: 2).map { buffer[$0] }
        var onsets: [Int] = []
        var silentSince = -1_000
        for (frame, sample) in left.enumerated() where sample != 0 {
            if frame - silentSince > 100 { onsets.append(frame) }
            silentSince = frame
        }
        #expect(onsets.count == passes + 1)
        let worst = onsets.enumerated().map { abs(Double($1 - onsets[0]) - Double($0) * framesPerPass) }.max()
        #expect((worst ?? .infinity) <= 1, "a pass came round \(worst ?? .infinity) frames off the clock")
    }
}
