import Foundation
import Testing
import AHAPFiles

#if canImport(Glibc)
import Glibc
#endif

/// The sound files an `AudioCustom` event names, looked for beside the file read (text in memory has no folder to
/// look in), and the paths of documents read as the system reads them.
@Suite struct SoundFileTests {
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
                #"the sound "fifo.wav" cannot be read: it is a pipe (a FIFO), not a regular file"#),
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
}

extension String {
    var utf8Data: Data { Data(utf8) }
}
