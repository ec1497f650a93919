import Foundation
import HapticTestDevices
import Testing

/// `haptics validate` end to end: the built binary (`CLI`), its output and its exit status.
@Suite struct ValidateCommandTests {
    @Test func warningsPassAndStrictFailsOnThem() throws {
        let misspeltCurve = try AHAPFixtures.file("parameter-curves-plural.ahap").path
        let everyKind = try AHAPFixtures.file("every-event-and-parameter.ahap").path
        let lenient = try CLI.run(["validate", misspeltCurve, everyKind])
        #expect(lenient.status == 0)
        #expect(lenient.output.contains("\(misspeltCurve): Pattern[1].ParameterCurves: warning:"))
        #expect(lenient.output.hasSuffix("2 files checked: 2 passed, 0 failed; 0 errors, 2 warnings\n"))
        let strict = try CLI.run(["validate", "--strict", misspeltCurve, everyKind])
        #expect(strict.status == 1)
        #expect(try CLI.run(["validate", "--strict", everyKind]).status == 0)
    }

    /// A sound beside the pattern that libsndfile cannot decode is a warning (the engine plays it as silence):
    /// `validate --strict` passed it, until 6 December.
    @Test func aSoundThatCannotBeDecodedIsAWarningThatStrictFails() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("validate-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("not a sound".utf8).write(to: folder.appendingPathComponent("bad.wav"))
        let assets = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Haptics")
        try FileManager.default.copyItem(
            at: assets.appendingPathComponent("success.wav"), to: folder.appendingPathComponent("good.wav"))
        let pattern = folder.appendingPathComponent("sounds.ahap")
        try Data(
            #"""
            {"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"AudioCustom","EventWaveformPath":"bad.wav"}},
              {"Event":{"Time":1,"EventType":"AudioCustom","EventWaveformPath":"good.wav"}}]}
            """#.utf8
        ).write(to: pattern)
        let run = try CLI.run(["validate", "--strict", pattern.path])
        #expect(run.status == 1)
        #expect(
            run.output.contains(
                #"Pattern[0].Event.EventWaveformPath: warning: the sound "bad.wav" cannot be decoded: "#),
            "\(run.output)")
        #expect(
            run.output.hasSuffix("1 file checked: 0 passed, 1 failed; 0 errors, 1 warning (strict: warnings fail)\n"))
    }

    @Test func brokenAndMissingFilesFail() throws {
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-cli-\(UUID().uuidString).ahap")
        try Data(#"{"Version":1,"Pattern":[{"Event":{"Time":0,"EventType":"Buzz"}}]}"#.utf8).write(to: broken)
        defer { try? FileManager.default.removeItem(at: broken) }
        let result = try CLI.run(["validate", broken.path, "/nonexistent/x.ahap"])
        #expect(result.status == 1)
        #expect(
            result.output.contains("\(broken.path): Pattern[0].Event.EventType: error: \"Buzz\" is not an event type"))
        #expect(result.output.contains("-4821]"))
        #expect(result.output.contains("/nonexistent/x.ahap: error: cannot read the file"))
    }

    /// A file over the size limit is refused from its size, unread, by the binary itself: the reader took the size
    /// FoundationEssentials gives (a `UInt`) for none, read all 100 MB of a sparse file, and only the parser's limit
    /// refused it ("the document is ... bytes", 120 MB of memory).
    @Test func aFileOverTheLimitIsRefusedFromItsSizeUnread() throws {
        let huge = FileManager.default.temporaryDirectory.appendingPathComponent("ahap-cli-\(UUID().uuidString).ahap")
        #expect(FileManager.default.createFile(atPath: huge.path, contents: nil))
        defer { try? FileManager.default.removeItem(at: huge) }
        let handle = try FileHandle(forWritingTo: huge)
        try handle.truncate(atOffset: 100 * 1024 * 1024)
        try handle.close()
        let result = try CLI.run(["validate", huge.path])
        #expect(result.status == 1)
        #expect(
            result.output.contains(
                "\(huge.path): error: the file is 104857600 bytes, more than the limit of 16777216 [limit-exceeded]"),
            "\(result.output)")
    }

    @Test func jsonOutputParses() throws {
        let file = try AHAPFixtures.file("parameter-curves-plural.ahap").path
        let result = try CLI.run(["validate", "--json", file])
        #expect(result.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let files = try #require(object["files"] as? [[String: Any]])
        #expect(files.first?["file"] as? String == file)
    }

    @Test func directoriesSayWhatTheyAre() throws {
        let folder = FileManager.default.temporaryDirectory.path
        let result = try CLI.run(["validate", folder])
        #expect(result.status == 1)
        #expect(result.output.hasPrefix("\(folder): error: cannot read the file: it is a directory, not a file"))
    }

    /// A folder named as the pattern to play or render is not "invalid AHAP", and `validate` has nothing more to
    /// say of it: the failure says what it is, and nothing else.
    @Test(arguments: ["play", "render"])
    func aFolderNamedAsThePatternIsSaidToBeOneWithoutTheValidateHint(command: String) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("cli-\(UUID().uuidString).ahap")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(at: folder) }
        let run = try CLI.run([command, folder.path] + (command == "play" ? ["--device", "virtual"] : []))
        #expect(run.status == 1)
        #expect(run.errors.contains(": error: cannot read the file: it is a directory, not a file"), "\(run.errors)")
        #expect(!run.errors.contains("invalid AHAP"), "\(run.errors)")
        #expect(!run.errors.contains("haptics validate"), "\(run.errors)")
        #expect(run.errors.split(separator: "\n").count == 1, "\(run.errors)")
    }

    /// A document with errors names the first and counts the others, in the right number.
    @Test func aDocumentWithTwoErrorsSaysOneMoreError() throws {
        let twoErrors =
            #"{"Version":1,"Pattern":[{"Event":{"Time":-1,"EventType":"HapticTransient"}},"#
            + #"{"Event":{"Time":0,"EventType":"Buzz"}}]}"#
        try CLI.withFile(twoErrors) { file in
            let run = try CLI.run(["play", file, "--device", "virtual"])
            #expect(run.status == 1)
            #expect(run.errors.contains(": invalid AHAP: Pattern[0].Event.Time: error: "), "\(run.errors)")
            #expect(run.errors.contains(" (and 1 more error)\n"), "\(run.errors)")
            #expect(run.errors.hasSuffix("`haptics validate \(file)` lists every problem.\n"), "\(run.errors)")
        }
    }

    /// A time no pattern can reach: `validate` fails it, and every command that plays or renders refuses it
    /// with the same diagnostic instead of trapping.
    @Test func aTimePastTheBoundIsRefusedByEveryCommand() throws {
        try CLI.withFile(#"{"Version":1.0,"Pattern":[{"Event":{"Time":1e308,"EventType":"HapticTransient"}}]}"#) {
            file in
            let validation = try CLI.run(["validate", file])
            #expect(validation.status == 1)
            #expect(validation.output.contains("Pattern[0].Event.Time: error: Time 1e+308 s is later than 3600.0 s"))
            for arguments in [
                ["render", "--format", "text"], ["render", "--format", "csv"], ["render", "--format", "json"],
                ["render", "--format", "svg"], ["play", "--device", "virtual", "--json"],
            ] {
                let result = try CLI.run(arguments + [file])
                #expect(result.status == 1, "\(arguments)")
                #expect(result.errors.contains("[time-too-large]"), "\(arguments)")
            }
        }
    }

    /// An hour-long pattern is too long to sample at 1000 Hz (3.6 million rows); a lower rate is suggested and
    /// works.
    @Test func longPatternsAskForALowerSampleRate() throws {
        try CLI.withFile(#"{"Version":1.0,"Pattern":[{"Event":{"Time":3600,"EventType":"HapticTransient"}}]}"#) {
            file in
            let refused = try CLI.run(["render", "--format", "csv", file])
            #expect(refused.status == 1)
            #expect(refused.output.isEmpty)
            #expect(refused.errors.contains("too long to sample at 1000 Hz"))
            #expect(refused.errors.contains("Pass --sample-rate 277 or less"), "\(refused.errors)")
            let sampled = try CLI.run(["render", "--format", "csv", "--sample-rate", "10", file])
            #expect(sampled.status == 0)
            #expect(sampled.output.split(separator: "\n").count > 36_000)
        }
    }

    /// A loop of a pattern lasting 1e-300 s plays its three loops and finishes.
    @Test func aVanishinglyShortLoopFinishes() throws {
        try CLI.withFile(
            #"{"Version":1.0,"Pattern":[{"Event":{"Time":0,"EventType":"HapticContinuous","EventDuration":1e-300}}]}"#
        ) { file in
            let result = try CLI.run(["play", "--device", "virtual", "--json", "--loop", "3", file])
            #expect(result.status == 0)
            #expect(result.output.contains(#""event":"finished""#))
        }
    }

    @Test func noFilesIsAUsageError() throws {
        let result = try CLI.run(["validate"])
        #expect(result.status != 0 && result.status != 1)
    }
}
