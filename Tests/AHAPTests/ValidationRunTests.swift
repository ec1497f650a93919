import Foundation
import Testing
@testable import AHAP

/// The logic behind `haptics validate`: lines, summary, JSON and exit code.
@Suite struct ValidationRunTests {
    private func temporaryFile(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-test-\(UUID().uuidString).ahap")
        try text.utf8Data.write(to: url)
        return url.path
    }

    @Test func linesNameFileAndPathThenSummarise() throws {
        let good = try Fixtures.file("every-event-and-parameter.ahap").path
        let broken = try temporaryFile(
            #"{"Version":1,"Pattern":[{"Event":{"Time":-1,"EventType":"HapticTransient"}}]}"#)
        defer { try? FileManager.default.removeItem(atPath: broken) }
        let run = AHAPValidationRun(paths: [good, broken], strict: false)
        #expect(run.exitCode == 1)
        #expect(
            run.textLines == [
                "\(broken): Pattern[0].Event.Time: error: Time is negative (-1.0 s) [negative-time, Core Haptics -4822]",
                "2 files checked: 1 passed, 1 failed; 1 error, 0 warnings",
            ])
    }

    @Test func warningsPassUnlessStrict() throws {
        let file = try Fixtures.file("parameter-curves-plural.ahap").path
        let lenient = AHAPValidationRun(paths: [file], strict: false)
        #expect(lenient.exitCode == 0)
        #expect(
            lenient.textLines.first
                == "\(file): Pattern[1].ParameterCurves: warning: \"ParameterCurves\" is not an AHAP key of a Pattern entry; it is ignored [unknown-key]"
        )
        let strict = AHAPValidationRun(paths: [file], strict: true)
        #expect(strict.exitCode == 1)
        #expect(strict.summary.hasSuffix("(strict: warnings fail)"))
    }

    @Test func everyFixturePassesAndMissingFilesFail() throws {
        let paths = try Fixtures.files().map(\.path)
        #expect(AHAPValidationRun(paths: paths, strict: false).exitCode == 0)
        let missing = AHAPValidationRun(paths: paths + ["/nonexistent/x.ahap"], strict: false)
        #expect(missing.exitCode == 1)
        #expect(
            missing.textLines.contains(
                "/nonexistent/x.ahap: error: cannot read the file: no such file [unreadable-file]"))
    }

    /// A scalar a terminal does not show as itself: C0 and C1 controls, DEL, bidirectional and zero-width format
    /// characters, line and paragraph separators (listed here by hand, not through the code under test).
    private static func actsOnTheLine(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F...0x9F, 0x200B...0x200F, 0x2028...0x202E, 0x2066...0x2069, 0xFEFF, 0xE0001: true
        default: false
        }
    }

    @Test func keysValuesAndFileNamesCannotForgeOrHideALineOfTheTextOutput() throws {
        // Escapes in the JSON text (JSON refuses raw controls below U+0020), raw characters from DEL up.
        let text = #"""
            {"Version":1,"\nevil.ahap: error: forged [not-json]\u001b[2K":1,"Meta\u202edata":null,"Pattern":[
              {"Event":{"Time":0,"EventType":"HapticTransient","EventParameters":[
                {"ParameterID":"Intensity\#u{85}\#u{E0001}","ParameterValue":1}]}},
              {"Event":{"Time":1,"EventType":"Haptic\#u{7F}Transient\#u{2028}"}}]}
            """#
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("a\nb.ahap").path
        try text.utf8Data.write(to: URL(fileURLWithPath: file))
        let run = AHAPValidationRun(paths: [file], strict: false)
        let report = try #require(run.results.first?.report)
        #expect(report.diagnostics.count == 4)
        #expect(run.textLines.count == report.diagnostics.count + 1)
        for line in run.textLines {
            #expect(!line.unicodeScalars.contains(where: Self.actsOnTheLine), "\(line.debugDescription)")
        }
        let shownFile = file.replacingOccurrences(of: "\n", with: "\\n")
        #expect(
            run.textLines.contains(
                #""\#(shownFile)": ["\nevil.ahap: error: forged [not-json]\u001b[2K"]: warning: "\nevil.ahap: error: forged [not-json]\u001b[2K" is not an AHAP key of the document; it is ignored [unknown-key]"#
            ))
        #expect(run.textLines.contains { $0.contains(#""Meta\u202edata" is null"#) })
        #expect(run.textLines.contains { $0.contains(#""Haptic\u007fTransient\u2028" is not an event type"#) })
        #expect(run.textLines.contains { $0.contains(#""Intensity\u0085\udb40\udc01" is not an event parameter"#) })
    }

    @Test func theSummaryCountsProblemsPastTheDiagnosticsLimit() throws {
        let unknownKeys = (0..<1_200).map { #""extra\#($0)":1"# }.joined(separator: ",")
        let file = try temporaryFile(
            #"{"Version":1,\#(unknownKeys),"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let run = AHAPValidationRun(paths: [file], strict: false)
        let report = try #require(run.results.first?.report)
        #expect(report.diagnostics.count == AHAPLimits.default.maximumDiagnostics + 1)
        #expect(report.unlistedCount == 200)
        #expect(run.summary == "1 file checked: 1 passed, 0 failed; 0 errors, 1001 warnings, 200 more not listed")
        let object = try #require(try JSONSerialization.jsonObject(with: run.jsonText.utf8Data) as? [String: Any])
        #expect((object["summary"] as? [String: Any])?["unlisted"] as? Int == 200)
    }

    /// A number in `EventWaveformPath` is a resource an engine registered in a running program (as Core Haptics'
    /// pattern dictionaries carry it): read from a file it names no sound, which the validator says.
    @Test func aFileNamingAnAudioResourceByNumberIsWarnedThatAFileCannotNameOne() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("resource.ahap")
        let text = #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":3}}]}"#
        try text.utf8Data.write(to: file)
        let report = try #require(AHAPValidationRun(paths: [file.path], strict: false).results.first?.report)
        #expect(report.pattern?.events.first?.audioResourceID == AudioResourceID(rawValue: 3))
        #expect(report.warnings.map(\.code) == [.soundFileNotFound])
        #expect(report.warnings.first?.path == "Pattern[0].Event.EventWaveformPath")
        #expect(report.warnings.first?.message.hasPrefix("EventWaveformPath is audio resource 3, an ID") == true)
        // Read from text in memory (a program's own), it is the resource, without a word.
        #expect(AHAPValidator.validate(data: text.utf8Data).diagnostics.isEmpty)
    }

    /// A sound file that is there is handed to the run's `soundCheck` (the CLI's: libsndfile's open), and what it
    /// finds is a `sound-file-not-found` warning; a run without one reads no sound.
    @Test func aSoundFileThereIsCheckedByTheRunsSoundCheck() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        for name in ["bad.wav", "good.wav"] { try Data("RIFF".utf8).write(to: folder.appendingPathComponent(name)) }
        let events = ["bad.wav", "good.wav", "gone.wav"].enumerated().map { index, path in
            #"{"Event":{"Time":\#(index),"EventType":"AudioCustom","EventWaveformPath":"\#(path)"}}"#
        }
        let file = folder.appendingPathComponent("sounds.ahap")
        try #"{"Version":1,"Pattern":[\#(events.joined(separator: ","))]}"#.utf8Data.write(to: file)
        var checked: [String] = []
        let run = AHAPValidationRun(paths: [file.path], strict: false) { path in
            checked.append(path)
            return path.hasSuffix("bad.wav") ? "cannot be decoded: Format not recognised" : nil
        }
        let warnings = try #require(run.results.first?.report.warnings)
        #expect(checked == ["bad.wav", "good.wav"].map { folder.appendingPathComponent($0).path })
        #expect(warnings.map(\.path) == [0, 2].map { "Pattern[\($0)].Event.EventWaveformPath" })
        #expect(
            warnings.first?.message.hasPrefix(#"the sound "bad.wav" cannot be decoded: Format not recognised;"#) == true
        )
        let unchecked = AHAPValidationRun(paths: [file.path], strict: false).results.first?.report.warnings
        #expect(unchecked?.count == 1, "only the missing sound")
    }

    @Test func aSoundFileNotBesideThePatternIsAWarningThatStrictFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("RIFF".utf8).write(to: folder.appendingPathComponent("here.wav"))
        func custom(_ path: String, _ time: Int) -> String {
            #"{"Event":{"Time":\#(time),"EventType":"AudioCustom","EventWaveformPath":"\#(path)"}}"#
        }
        let entries = [
            custom("here.wav", 0), custom("gone.wav", 1), custom("/nonexistent/abs.wav", 2), custom("../here.wav", 3),
            custom("", 4), custom(folder.appendingPathComponent("here.wav").path, 5),
        ]
        let text = #"{"Version":1,"Pattern":[\#(entries.joined(separator: ","))]}"#
        let file = folder.appendingPathComponent("sounds.ahap")
        try text.utf8Data.write(to: file)
        let run = AHAPValidationRun(paths: [file.path], strict: false)
        let report = try #require(run.results.first?.report)
        #expect(report.loads)
        #expect(report.warnings.allSatisfy { $0.code == .soundFileNotFound && $0.coreHapticsCode == .badEventEntry })
        #expect(
            report.warnings.map(\.path) == [1, 2, 3, 4].map { "Pattern[\($0)].Event.EventWaveformPath" })
        #expect(
            report.warnings[0].message.hasPrefix(
                #"the sound "gone.wav" is not beside the pattern (at \#(folder.path)/gone.wav)"#))
        #expect(report.warnings[1].message.hasPrefix(#"the sound "/nonexistent/abs.wav" is not there;"#))
        #expect(
            report.warnings[2].message.hasPrefix(
                #"the sound "../here.wav" names no file: its path leaves its folder (a '..' component);"#))
        #expect(report.warnings[3].message.hasPrefix(#"the sound "" names no file: its path is empty;"#))
        #expect(run.exitCode == 0)
        #expect(AHAPValidationRun(paths: [file.path], strict: true).exitCode == 1)
        #expect(AHAPValidator.validate(data: text.utf8Data).warnings.isEmpty, "text alone has no folder to look in")
    }

    /// A sound path holding a NUL names no file: the system reads a path only up to its NUL, so
    /// `here.wav\u0000.mp3` would open `here.wav`, which the pattern does not name (until 7 December it passed
    /// clean beside a `here.wav`, and the engine played that file).
    @Test func aSoundPathHoldingANULIsAWarningNotTheFileBeforeIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("RIFF".utf8).write(to: folder.appendingPathComponent("here.wav"))
        let file = folder.appendingPathComponent("nul.ahap")
        let text =
            #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"here.wav\u0000.mp3"}}]}"#
        try text.utf8Data.write(to: file)
        let report = try #require(AHAPValidationRun(paths: [file.path], strict: false).results.first?.report)
        #expect(report.warnings.map(\.code) == [.soundFileNotFound], "\(report.diagnostics)")
        #expect(
            report.warnings.first?.message.hasPrefix(
                #"the sound "here.wav\u0000.mp3" names no file: its path holds a NUL character, which no file name can;"#
            ) == true, "\(report.warnings)")
    }

    /// A sound path naming a FIFO or a device passes no more: the engine refuses them (until 6 December a FIFO passed
    /// clean, and `render` and `play` waited on it for a writer).
    @Test func aSoundThatIsAFIFOOrADeviceIsAWarning() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try #require(mkfifo(folder.appendingPathComponent("fifo.wav").path, 0o600) == 0)
        let entries = ["fifo.wav", "/dev/zero"].enumerated().map { index, path in
            #"{"Event":{"Time":\#(index),"EventType":"AudioCustom","EventWaveformPath":"\#(path)"}}"#
        }
        let file = folder.appendingPathComponent("sounds.ahap")
        try #"{"Version":1,"Pattern":[\#(entries.joined(separator: ","))]}"#.utf8Data.write(to: file)
        let report = try #require(AHAPValidationRun(paths: [file.path], strict: false).results.first?.report)
        #expect(report.warnings.map(\.path) == [0, 1].map { "Pattern[\($0)].Event.EventWaveformPath" })
        #expect(
            report.warnings[0].message.hasPrefix(
                #"the sound "fifo.wav" cannot be read: it is not a regular file (a pipe or a socket)"#),
            "\(report.warnings[0].message)")
        #expect(
            report.warnings[1].message.hasPrefix(
                #"the sound "/dev/zero" cannot be read: it is a device, not a regular file"#),
            "\(report.warnings[1].message)")
    }

    /// A relative path is read as the system reads it: `here/link/../pattern.ahap`, where `link` leads to
    /// `other/deeper`, is `other/pattern.ahap`, and its sounds are looked for beside that file (until 7 December
    /// the `..` was taken away with `link` as text, and `here/pattern.ahap`, another file or none, was checked).
    @Test func aRelativePathThroughASymbolicLinkAndDotDotIsTheFileTheSystemOpens() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-\(UUID().uuidString)")
        let manager = FileManager.default
        try manager.createDirectory(at: folder.appendingPathComponent("here"), withIntermediateDirectories: true)
        try manager.createDirectory(
            at: folder.appendingPathComponent("other/deeper"), withIntermediateDirectories: true)
        defer { try? manager.removeItem(at: folder) }
        try manager.createSymbolicLink(
            atPath: folder.appendingPathComponent("here/link").path, withDestinationPath: "../other/deeper")
        let pattern =
            #"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"beside.wav"}}]}"#
        try pattern.utf8Data.write(to: folder.appendingPathComponent("other/pattern.ahap"))
        try Data().write(to: folder.appendingPathComponent("other/beside.wav"))
        // The folder named from the current directory, by as many `..` as it is deep.
        let depth = manager.currentDirectoryPath.split(separator: "/").count
        let relative =
            String(repeating: "../", count: depth) + folder.path.drop { $0 == "/" } + "/here/link/../pattern.ahap"
        let report = try #require(AHAPValidationRun(paths: [relative], strict: true).results.first?.report)
        #expect(report.loads && report.diagnostics.isEmpty, "\(report.diagnostics)")
    }

    @Test func jsonOutputIsMachineReadable() throws {
        let file = try Fixtures.file("parameter-curves-plural.ahap").path
        let run = AHAPValidationRun(paths: [file, "/nonexistent/x.ahap"], strict: false)
        let object = try #require(try JSONSerialization.jsonObject(with: run.jsonText.utf8Data) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.count == 2)
        #expect(files[0]["loads"] as? Bool == true)
        #expect(files[1]["passed"] as? Bool == false)
        let diagnostics = try #require(files[0]["diagnostics"] as? [[String: Any]])
        #expect(diagnostics.first?["path"] as? String == "Pattern[1].ParameterCurves")
        #expect(diagnostics.first?["code"] as? String == "unknown-key")
        let summary = try #require(object["summary"] as? [String: Any])
        #expect(summary["failed"] as? Int == 1)
        #expect(run.jsonText.contains("\"failed\": 1,"))
    }
}
