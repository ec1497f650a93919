import Foundation
import Testing

/// The command line's audio end to end (the built binary, `CLI`): the render of a pattern's audio events, the
/// device list, files played one after another with cross-fades, and the errors. Without a sound card (CI),
/// sound goes to the null output, which keeps the same time.
@Suite struct AudioCommandTests {
    /// `<package>/Haptics`, where the feedback sounds are.
    static let assets = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Haptics")

    /// A pattern with a transient, its sound file beside it (`success.wav` from Haptics/, found there), a tone
    /// and a file that is nowhere.
    static let pattern = """
        {"Version":1,"Pattern":[
         {"Event":{"Time":0,"EventType":"HapticTransient","EventParameters":[{"ParameterID":"HapticIntensity","ParameterValue":1}]}},
         {"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"success.wav","EventParameters":[{"ParameterID":"AudioVolume","ParameterValue":0.9}]}},
         {"Event":{"Time":0.3,"EventType":"AudioContinuous","EventDuration":0.5,"EventParameters":[{"ParameterID":"AudioPan","ParameterValue":-0.5}]}},
         {"Event":{"Time":0.9,"EventType":"AudioCustom","EventWaveformPath":"nowhere.wav"}}
        ]}
        """

    @Test func renderListsAndDrawsTheAudioEvents() throws {
        try CLI.withFile(Self.pattern) { file in
            let json = try CLI.run(["render", "--format", "json", file])
            #expect(json.status == 0, "\(json.errors)")
            let root = try #require(JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let audio = try #require(root["audio"] as? [String: Any])
            let voices = try #require(audio["voices"] as? [[String: Any]])
            #expect(voices.map { $0["source"] as? String } == ["success.wav", "tone"])
            #expect((voices.first?["end"] as? Double).map { abs($0 - 0.35) < 1e-6 } == true, "the file's length")
            #expect(voices.last?["pan"] as? Double == -0.5)
            #expect(audio["missingFiles"] as? [String] == ["nowhere.wav"])

            let svg = try CLI.run(["render", "--format", "svg", file])
            #expect(svg.output.contains("audio: each voice's volume envelope"))
            #expect(svg.output.contains(">success.wav</text>") && svg.output.contains(">tone</text>"))
            #expect(svg.output.contains("nowhere.wav: no such file: not in "))
            #expect(svg.output.contains(">0.8 s</text>"), "the time axis reaches the tone's end")

            let text = try CLI.run(["render", file])
            #expect(text.output.contains("audio 0-0.35 s  success.wav  volume 0.9"))
        }
    }

    /// A sound that is there but yields none is listed with the reason the engine gives, not as "file not found"
    /// (until 6 December `render` said "file not found" for every sound it had none of).
    @Test func renderSaysWhyASoundThatIsThereIsSilent() throws {
        let pattern =
            #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"/dev/zero"}}]}"#
        try CLI.withFile(pattern) { file in
            let text = try CLI.run(["render", file])
            #expect(
                text.output.contains("audio /dev/zero: it is a device, not a regular file, silent"), "\(text.output)")
            let json = try CLI.run(["render", "--format", "json", file])
            let root = try #require(JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let audio = try #require(root["audio"] as? [String: Any])
            #expect(
                (audio["missingReasons"] as? [String: String])?["/dev/zero"] == "it is a device, not a regular file")
        }
    }

    /// A sound's name comes from the pattern: one holding a line break or a terminal's escape sequence is shown
    /// quoted with them escaped, in the text (where it could forge or erase lines) and in the SVG (where XML
    /// forbids control characters); the JSON keeps it as it is, escaped as JSON escapes it.
    @Test func renderEscapesHiddenCharactersOfSoundNames() throws {
        let pattern = """
            {"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom",\
            "EventWaveformPath":"gone\\u001b[2J\\nfake line.wav"}}]}
            """
        try CLI.withFile(pattern) { file in
            let text = try CLI.run(["render", file])
            #expect(text.status == 0, "\(text.errors)")
            #expect(!text.output.contains("\u{1B}") && !text.output.contains("fake line.wav:"), "\(text.output)")
            #expect(text.output.contains(#"audio "gone\u001b[2J\nfake line.wav": no such file"#), "\(text.output)")
            let svg = try CLI.run(["render", "--format", "svg", file])
            #expect(!svg.output.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" }, "\(svg.output)")
            #expect(svg.output.contains(#">"gone\u001b[2J\nfake line.wav": no such file"#), "\(svg.output)")
            let json = try CLI.run(["render", "--format", "json", file])
            let root = try #require(JSONSerialization.jsonObject(with: Data(json.output.utf8)) as? [String: Any])
            let audio = try #require(root["audio"] as? [String: Any])
            #expect(audio["missingFiles"] as? [String] == ["gone\u{1B}[2J\nfake line.wav"])
        }
    }

    @Test func devicesSayWhereSoundGoes() throws {
        let listed = try CLI.run(["audio", "devices", "--json"])
        #expect(listed.status == 0, "\(listed.errors)")
        let root = try #require(JSONSerialization.jsonObject(with: Data(listed.output.utf8)) as? [String: Any])
        let devices = try #require(root["devices"] as? [[String: Any]])
        #expect(devices.contains { $0["name"] as? String == "null" }, "alsa-lib's own null device is always listed")
        #expect(root["defaultOutput"] is String)
        let text = try CLI.run(["audio", "devices"])
        #expect(text.output.hasPrefix("NAME"))
        #expect(text.output.contains("Sound goes to: ") || text.output.contains("No sound device"))
    }

    @Test func filesPlayOneAfterAnotherWithCrossFades() throws {
        let files = ["success.wav", "pass.wav", "warning.wav"].map { Self.assets.appendingPathComponent($0).path }
        let played = try CLI.run(["audio", "play", "--crossfade", "0.1"] + files)
        #expect(played.status == 0, "\(played.errors)")
        let lines = played.output.split(separator: "\n").filter { $0.hasPrefix("playing ") }
        #expect(lines.count == 3)
        #expect(lines.first?.hasSuffix("success.wav (0.35 s)") == true)
        #expect(lines.last?.hasSuffix("warning.wav (0.25 s, cross-fading in over 0.10 s)") == true)
    }

    /// `--loop` opens each file again at each pass: a file removed while the list loops ends the command with a
    /// failure that says so, not a crash or a silent loop. Each line of the play reaches a pipe as it happens.
    @Test func aFileRemovedWhileTheListLoopsEndsThePlayWithTheReason() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("loop-\(UUID().uuidString).wav")
        try FileManager.default.copyItem(at: Self.assets.appendingPathComponent("pass.wav"), to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = ["audio", "play", "--loop", "--crossfade", "0", file.path]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The first pass has its file open once its line is out; from then on only a later pass opens it.
        let seen = CLI.read(output, until: "playing ")
        try FileManager.default.removeItem(at: file)
        let rest = output.fileHandleForReading.readDataToEndOfFile()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(String(decoding: seen + rest, as: UTF8.self).contains("playing \(file.path)"))
        #expect(process.terminationStatus == 1)
        // After the note of the null output, on a machine without sound.
        let failure = said.split(separator: "\n").drop { $0.contains("no sound device") }.joined(separator: "\n")
        #expect(
            failure.hasPrefix(
                "haptics audio play: cannot play \(file.path) again (--loop opens each file at each pass): "),
            "\(said)")
        #expect(said.contains("Keep the files in place while the list loops."), "\(said)")
    }

    /// Ctrl-C while the list loops ends it with 130 and an `interrupted` line, as the other playing commands say it
    /// (until 6 December it ended silently).
    @Test func ctrlCEndsTheListWithAnInterruptedLineAndStatus130() throws {
        let process = Process()
        process.executableURL = try CLI.binary()
        process.arguments = ["audio", "play", "--loop", Self.assets.appendingPathComponent("pass.wav").path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = Pipe()
        try process.run()
        var seen = CLI.read(output, until: "playing ")
        process.interrupt()
        seen += output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        #expect(
            String(decoding: seen, as: UTF8.self).hasSuffix("\ninterrupted\n"),
            "\(String(decoding: seen, as: UTF8.self))")
    }

    /// A file without a frame is refused before anything plays: with --loop it would go round without ever
    /// waiting (until the process ran out of descriptors).
    @Test func aFileWithoutSoundIsRefusedBeforeAnythingPlays() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString).wav")
        // A 16-bit mono WAV at 48 kHz whose data chunk is empty: the 44-byte header alone.
        var header = Data("RIFF".utf8) + withUnsafeBytes(of: UInt32(36).littleEndian) { Data($0) }
        header += Data("WAVEfmt ".utf8) + withUnsafeBytes(of: UInt32(16).littleEndian) { Data($0) }
        for (value, size) in [(1, 2), (1, 2), (48000, 4), (96000, 4), (2, 2), (16, 2)] {
            header +=
                size == 2
                ? withUnsafeBytes(of: UInt16(value).littleEndian) { Data($0) }
                : withUnsafeBytes(of: UInt32(value).littleEndian) { Data($0) }
        }
        header += Data("data".utf8) + withUnsafeBytes(of: UInt32(0).littleEndian) { Data($0) }
        try header.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let run = try CLI.run(["audio", "play", "--loop", file.path])
        #expect(run.status == 1)
        #expect(!run.output.contains("playing"), "\(run.output)")
        #expect(
            run.errors.hasPrefix("haptics audio play: cannot play \(file.path): it holds no sound (0 frames)"),
            "\(run.errors)")
    }

    @Test func badFilesAndDevicesAreRefusedWithTheReason() throws {
        let missing = try CLI.run(["audio", "play", "/nonexistent/sound.wav"])
        #expect(missing.status == 1)
        #expect(missing.errors.hasPrefix("haptics audio play: cannot play /nonexistent/sound.wav: "))
        #expect(missing.output.isEmpty, "nothing plays when a file cannot")
        let device = try CLI.run(
            ["audio", "play", "--device", "hw:97,0", Self.assets.appendingPathComponent("pass.wav").path])
        #expect(device.status == 1)
        #expect(device.errors.contains("cannot open the sound device hw:97,0"))
        let contradiction = try CLI.run(["play", "--no-audio", "--audio-device", "hw:0", "thud"])
        #expect(contradiction.status == 64, "a usage error")
        let example = Self.assets.deletingLastPathComponent().appendingPathComponent(
            "docs/examples/success-with-sound.ahap"
        ).path
        let named = try CLI.run(["play", "--device", "virtual", "--audio-device", "hw:97,0", example])
        #expect(named.status == 1)
        #expect(named.errors.contains("haptics play: cannot open the sound device hw:97,0"))
    }

    @Test func playNamesTheSoundOutputAndLastsAsLongAsTheSound() throws {
        let example = Self.assets.deletingLastPathComponent().appendingPathComponent(
            "docs/examples/success-with-sound.ahap"
        ).path
        let played = try CLI.run(["play", "--device", "virtual", "--json", example])
        #expect(played.status == 0, "\(played.errors)")
        let started = try #require(played.output.split(separator: "\n").first.map(String.init))
        #expect(started.contains(#""audio":""#), "the started event names the sound output: \(started)")
        #expect(started.contains(#""duration":"0.350""#), "success.wav's 0.35 s, not the taps' 0.1 s")
        let hapticsOnly = try CLI.run(["play", "--device", "virtual", "--json", "--no-audio", example])
        #expect(hapticsOnly.status == 0)
        #expect(!hapticsOnly.output.contains(#""audio""#))
        #expect(hapticsOnly.output.contains(#""duration":"0.140""#), "the taps, the last one 40 ms long")
    }
}
