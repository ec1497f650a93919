import Foundation
import Testing

/// `haptics replay` end to end (`CLI`): what it says of a cue sheet it cannot play.
@Suite struct ReplayCommandTests {
    /// A cue naming a pattern that is not beside the sheet is named by the sheet's file and the cue's path in it,
    /// and nothing plays.
    @Test func aMissingPatternIsNamedWithTheSheetAndTheCuesPath() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data(#"{"Version":1.0,"Pattern":[{"Event":{"Time":0,"EventType":"HapticTransient"}}]}"#.utf8).write(
            to: folder.appendingPathComponent("tap.ahap"))
        let sheet = folder.appendingPathComponent("cues.json")
        try Data(
            #"""
            {"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "tap"}]},
              {"chapter": 2, "cues": [{"time": 0, "pattern": "tap"}, {"time": 1, "pattern": "gone"}]}]}
            """#.utf8
        ).write(to: sheet)
        let run = try CLI.run(["replay", "--cues", sheet.path, "--device", "virtual"])
        #expect(run.status == 1)
        #expect(run.output.isEmpty, "nothing plays: \(run.output)")
        #expect(
            run.errors.hasPrefix(
                "haptics replay: \(sheet.path): chapters[1].cues[1].pattern: no pattern 'gone': "
                    + "\(folder.path)/gone.ahap does not exist\n"), "\(run.errors)")
    }
}
