import Foundation
import Testing

/// `haptics render --actuators hd` end to end (the built binary, `CLI`): the voice coils' waveform as an SVG
/// panel, CSV samples at 3000 Hz and a WAV, and the combinations it refuses.
@Suite struct VoiceCoilRenderTests {
    /// A 0.1 s tone at sharpness 0.5 (a 122 Hz carrier).
    static let pattern = """
        {"Version":1,"Pattern":[
         {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.1,"EventParameters":[
           {"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterID":"HapticSharpness","ParameterValue":0.5}]}}
        ]}
        """

    @Test func svgDrawsTheVoiceCoilPanelInsteadOfTheMotors() throws {
        try CLI.withFile(Self.pattern) { file in
            let svg = try CLI.run(["render", "--actuators", "hd", "--format", "svg", file])
            #expect(svg.status == 0, "\(svg.errors)")
            #expect(svg.output.contains("voice coils, 3000 Hz"))
            #expect(svg.output.contains("voice coils: waveform (grey"))
            #expect(!svg.output.contains("output: strong (red)"))
            #expect(svg.output.contains("<circle"), "the carrier's frequency is drawn")
        }
    }

    @Test func csvHasOneRowPerFrameAt3000Hz() throws {
        try CLI.withFile(Self.pattern) { file in
            let csv = try CLI.run(["render", "--actuators", "hd", "--format", "csv", file])
            #expect(csv.status == 0, "\(csv.errors)")
            let rows = csv.output.split(separator: "\n")
            #expect(rows.first == "time,left,right")
            #expect(rows.count == 1 + 300, "0.1 s at 3000 Hz")
            #expect(rows[2].hasPrefix("0.000333,"))
        }
    }

    @Test func wavIsStereoAt3000HzWith16BitSamples() throws {
        try CLI.withFile(Self.pattern) { file in
            let output = file + ".wav"
            defer { try? FileManager.default.removeItem(atPath: output) }
            let wav = try CLI.run(["render", "--actuators", "hd", "--format", "wav", "--output", output, file])
            #expect(wav.status == 0, "\(wav.errors)")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
            func little(_ offset: Int, _ count: Int) -> Int {
                (0..<count).reduce(0) { $0 | Int(bytes[offset + $1]) << (8 * $1) }
            }
            #expect(bytes.count > 44 && String(decoding: bytes[0..<4], as: UTF8.self) == "RIFF")
            #expect(little(22, 2) == 2, "channels")
            #expect(little(24, 4) == 3000, "sample rate")
            #expect(little(34, 2) == 16, "bits per sample")
        }
    }

    /// Two full-level tones at once: their sum (up to 2) is limited, as the stream limits it.
    static let overlapping = """
        {"Version":1,"Pattern":[
         {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.1,"EventParameters":[
           {"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterID":"HapticSharpness","ParameterValue":0.5}]}},
         {"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":0.1,"EventParameters":[
           {"ParameterID":"HapticIntensity","ParameterValue":1},{"ParameterID":"HapticSharpness","ParameterValue":0.5}]}}
        ]}
        """

    /// csv and wav hold the same samples, those the voice coils get: limited into -1...1 however many events sum.
    @Test func csvAndWavHoldTheSameLimitedSamples() throws {
        try CLI.withFile(Self.overlapping) { file in
            let output = file + ".wav"
            defer { try? FileManager.default.removeItem(atPath: output) }
            let csv = try CLI.run(["render", "--actuators", "hd", "--format", "csv", file])
            let wav = try CLI.run(["render", "--actuators", "hd", "--format", "wav", "--output", output, file])
            #expect(csv.status == 0 && wav.status == 0, "\(csv.errors)\(wav.errors)")
            let rows = csv.output.split(separator: "\n").dropFirst().map {
                $0.split(separator: ",").compactMap { Double($0) }
            }
            let left = rows.map { $0[1] }
            #expect(rows.count == 300 && (left.max() ?? 0) > 0.9 && (left.max() ?? 2) < 1, "peak \(left.max() ?? 0)")
            let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
            let samples = stride(from: 44, to: bytes.count - 1, by: 2).map {
                Double(Int16(bitPattern: UInt16(bytes[$0]) | UInt16(bytes[$0 + 1]) << 8)) / 32768
            }
            #expect(samples.count == 600)
            let worst =
                zip(rows, stride(from: 0, to: samples.count, by: 2)).map { row, index in
                    Swift.max(abs(row[1] - samples[index]), abs(row[2] - samples[index + 1]))
                }.max() ?? 1
            #expect(worst < 1e-4, "csv and wav differ by \(worst)")
        }
    }

    /// Without --format the voice coils (hd) and the HD rumble write their csv, as `--format csv` does: they have
    /// no terminal drawing.
    @Test(arguments: [("hd", "time,left,right\n"), ("hd-rumble", "time,")])
    func withoutAFormatTheHDOutputsWriteTheirCSV(actuators: String, header: String) throws {
        try CLI.withFile(Self.pattern) { file in
            let chosen = try CLI.run(["render", "--actuators", actuators, file])
            let csv = try CLI.run(["render", "--actuators", actuators, "--format", "csv", file])
            #expect(chosen.status == 0, "\(chosen.errors)")
            #expect(chosen.output.hasPrefix(header) && chosen.output == csv.output)
        }
    }

    @Test func combinationsWithoutAWaveformAreRefused() throws {
        try CLI.withFile(Self.pattern) { file in
            let wavOfMotors = try CLI.run(["render", "--format", "wav", "--output", "/tmp/x.wav", file])
            #expect(wavOfMotors.status != 0 && wavOfMotors.errors.contains("pass --actuators hd"))
            let json = try CLI.run(["render", "--actuators", "hd", "--format", "json", file])
            #expect(json.status != 0 && json.errors.contains("renders as svg, csv or wav"))
            let noOutput = try CLI.run(["render", "--actuators", "hd", "--format", "wav", file])
            #expect(noOutput.status != 0 && noOutput.errors.contains("needs --output"))
            let auto = try CLI.run(["render", "--actuators", "auto", "--format", "svg", file])
            #expect(auto.status != 0 && auto.errors.contains("rumble|hd|hd-rumble"))
        }
    }

    /// `--sample-rate` applies to the motors' text and csv only; wherever it would change nothing it is a usage
    /// error that says so, not an option silently ignored.
    @Test(arguments: [
        (["--actuators", "hd", "--format", "svg"], "leave --sample-rate out"),
        (["--actuators", "hd", "--format", "wav", "--output", "/tmp/never-written.wav"], "leave --sample-rate out"),
        (["--actuators", "hd-rumble", "--format", "svg"], "leave --sample-rate out"),
        (["--format", "svg"], "--format svg does not sample"), (["--format", "json"], "--format json does not sample"),
    ])
    func aSampleRateThatWouldChangeNothingIsAUsageError(options: [String], message: String) throws {
        try CLI.withFile(Self.pattern) { file in
            let run = try CLI.run(["render", "--sample-rate", "10"] + options + [file])
            #expect(run.status == 64)
            #expect(run.output.isEmpty)
            #expect(run.errors.contains(message), "\(run.errors)")
        }
    }

    /// Over a million rows (a pattern over 333 s at the voice coils' 3000 Hz) the csv is refused, as the motors'
    /// csv is, and the WAV, which holds the same samples, is the way out.
    @Test func aVoiceCoilCSVOverAMillionRowsIsRefusedWithWAVAsTheWayOut() throws {
        try CLI.withFile(#"{"Version":1.0,"Pattern":[{"Event":{"Time":400,"EventType":"HapticTransient"}}]}"#) {
            file in
            let refused = try CLI.run(["render", "--actuators", "hd", "--format", "csv", file])
            #expect(refused.status == 1)
            #expect(refused.output.isEmpty)
            #expect(refused.errors.contains("too long to write as csv"), "\(refused.errors)")
            #expect(refused.errors.contains("more than 1000000"), "\(refused.errors)")
            #expect(refused.errors.contains("--format wav --output FILE"), "\(refused.errors)")
        }
    }
}

/// `haptics render --actuators hd-rumble`: a Switch controller's HD rumble as an SVG panel of bands and as CSV
/// rows, one per 30 ms update.
@Suite struct HDRumbleRenderTests {
    @Test func svgDrawsBothBandsOfTheLeftActuatorInsteadOfTheMotors() throws {
        try CLI.withFile(VoiceCoilRenderTests.pattern) { file in
            let svg = try CLI.run(["render", "--actuators", "hd-rumble", "--format", "svg", file])
            #expect(svg.status == 0, "\(svg.errors)")
            #expect(svg.output.contains("HD rumble, an update every 30 ms"))
            #expect(svg.output.contains("low band (red), high band (blue)"))
            #expect(!svg.output.contains("output: strong (red)"))
            #expect(svg.output.contains("<circle"), "the bands are drawn")
        }
    }

    @Test func csvHasOneRowPerUpdateWithTheToneInItsBand() throws {
        try CLI.withFile(VoiceCoilRenderTests.pattern) { file in
            let csv = try CLI.run(["render", "--actuators", "hd-rumble", "--format", "csv", file])
            #expect(csv.status == 0, "\(csv.errors)")
            let rows = csv.output.split(separator: "\n").map { $0.split(separator: ",").map(String.init) }
            #expect(rows.first?.first == "time" && rows.first?.count == 9)
            // 0.1 s in updates of 30 ms, and the update at rest after it.
            #expect(rows.count == 1 + 5)
            // Sharpness 0.5 is the crossover, 226 Hz: the high band's.
            let first = rows[1]
            #expect(first[0] == "0" && abs((Double(first[3]) ?? 0) - 226.27) < 0.01 && Double(first[4]) == 1)
            #expect(Double(first[2]) == 0)
            #expect(rows.last.map { Double($0[4]) == 0 && Double($0[8]) == 0 } == true)
        }
    }

    @Test func formatsWithoutBandsAreRefused() throws {
        try CLI.withFile(VoiceCoilRenderTests.pattern) { file in
            let wav = try CLI.run([
                "render", "--actuators", "hd-rumble", "--format", "wav", "--output", "/tmp/x.wav", file,
            ])
            #expect(wav.status != 0 && wav.errors.contains("renders as svg or csv"))
        }
    }
}
