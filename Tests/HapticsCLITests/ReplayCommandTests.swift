import Foundation
import AHAPFiles
import HapticRendering
import Testing

@testable import haptics

/// `haptics replay` end to end (`CLI`): what it says of a cue sheet it cannot play, and the levels it prints.
@Suite struct ReplayCommandTests {
    /// That `run` failed on the sheet `sheet`, read as named, whose one cue names the pattern `missing`, not there.
    static func expectRefused(_ run: (status: Int32, output: String, errors: String), sheet: String, missing: String) {
        #expect(run.status == 1)
        #expect(
            run.errors.hasPrefix("haptics replay: \(sheet): chapters[0].cues[0].pattern: no pattern '\(missing)': "),
            "\(run.errors)")
    }

    /// A cue sheet of one chapter whose one cue, at 0, names `pattern`.
    static func sheet(naming pattern: String) -> Data {
        Data(#"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "\#(pattern)"}]}]}"#.utf8)
    }

    /// Each cue's levels are those its pattern asks for 20 ms in, whenever the command woke: the thud of chapter 1
    /// printed its weak motor at 20% in some runs and 32% in others (read from the output after a late or an early
    /// wake-up), until 6 December.
    @Test func aCuesLevelsAreThoseItsPatternAsksForWheneverTheCommandWoke() throws {
        let run = try CLI.run(["replay", "--chapter", "1", "--device", "virtual", "--json"])
        #expect(run.status == 0, "\(run.errors)")
        let thud = try #require(run.output.split(separator: "\n").first { $0.contains(#""pattern":"thud""#) })
        let haptics = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Haptics/thud.ahap")
        // The virtual output's profile.
        let asked = PatternRenderer(profile: .genericRumble).render(try HapticPattern(contentsOf: haptics))
            .levels(at: 0.02)
        #expect(thud.contains(#""motors":"\#(MotorMeter.text(asked))""#), "\(thud) against \(asked)")
    }

    /// A continuous event at 0.7 for half a second.
    static let hum = HapticPattern(
        events: [
            HapticEvent(
                type: .hapticContinuous,
                parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 0.7)],
                relativeTime: 0, duration: 0.5)
        ], parameters: [])

    /// Plays that overlap are summed and clamped; before a play starts and once it ends it asks for nothing; a
    /// profile other than the one rendered with last renders again.
    @Test func plannedLevelsSumThePlaysSoundingAtATime() throws {
        let planned = PlannedLevels(start: 10, plays: [(0, Self.hum), (0.25, Self.hum)])
        let one = PatternRenderer(profile: .virtualPad).render(Self.hum).levels(at: 0.1)
        #expect(planned.levels(atOffset: -0.1, profile: .virtualPad) == .off)
        #expect(planned.levels(atOffset: 0.1, profile: .virtualPad) == one)
        #expect(planned.levels(atOffset: 0.35, profile: .virtualPad) == MotorMagnitudes.summed([one, one]))
        #expect(planned.levels(atOffset: 10, profile: .virtualPad) == .off)
        let generic = PatternRenderer(profile: .genericRumble).render(Self.hum).levels(at: 0.1)
        #expect(planned.levels(atOffset: 0.1, profile: .genericRumble) == generic)
    }

    /// A pad that comes back as another of the same profile name (a left Joy-Con, a right one, a Pro Controller:
    /// all "switch") has the plays rendered for its own motors: a lone Joy-Con's whole level on its one motor. The
    /// levels were kept by the profile's name, so the first pad's were printed for the next.
    @Test func plannedLevelsAreRenderedAgainForAPadOfTheSameNameWithOtherMotors() {
        let left = RenderProfile.switchPro.withMotors(strong: true, weak: false)
        let right = RenderProfile.switchPro.withMotors(strong: false, weak: true)
        #expect(left.name == right.name && left.name == RenderProfile.switchPro.name)
        let planned = PlannedLevels(start: 10, plays: [(0, Self.hum)])
        for profile in [left, right, .switchPro, left] {
            let own = PatternRenderer(profile: profile).render(Self.hum).levels(at: 0.1)
            #expect(planned.levels(atOffset: 0.1, profile: profile) == own, "\(profile)")
        }
        #expect(planned.levels(atOffset: 0.1, profile: left).weak == 0)
        #expect(planned.levels(atOffset: 0.1, profile: right).strong == 0)
    }

    /// The moment a cue prints (`PlaybackTiming.sampleDelay` into its play) lands on its pattern's own step there
    /// whatever the engine's clock reads: the thud's 20 ms step read as the level before it (weak 20%, not 34%) when
    /// the command's times were engine times near 1,460 s, and `aCuesLevelsAreThoseItsPatternAsksFor...` failed on a
    /// machine up for that long.
    @Test func aCuesMomentLandsOnItsPatternsStepWhateverTheClockReads() throws {
        let haptics = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Haptics")
        let charge = try HapticPattern(contentsOf: haptics.appendingPathComponent("capacitor_charge.ahap"))
        let thud = try HapticPattern(contentsOf: haptics.appendingPathComponent("thud.ahap"))
        let asked = PatternRenderer(profile: .genericRumble).render(thud).levels(at: PlaybackTiming.sampleDelay)
        for start in [1460.818875, 1313.7671, 7.25, 86_400.5] {
            let planned = PlannedLevels(start: start, plays: [(0, charge), (1, thud)])
            #expect(planned.levels(atOffset: 1 + PlaybackTiming.sampleDelay, profile: .genericRumble) == asked)
        }
    }

    /// A sheet named through a link and `..` is the one the system finds there: in the folder above the link's
    /// target, not the folder the link is in. Until 7 December `link/..` was dropped as text, and another sheet read.
    @Test func aSheetNamedThroughALinkAndDotDotIsTheOneTheSystemFinds() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replay-cli-\(UUID().uuidString)")
        let deep = folder.appendingPathComponent("a/b")
        try FileManager.default.createDirectory(at: deep, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("link"), withDestinationURL: deep)
        // The sheet the system finds (a/cues.json) names a pattern that is not there; the one beside the link names
        // none.
        try Self.sheet(naming: "far").write(to: folder.appendingPathComponent("a/cues.json"))
        try Data(#"{"version": 1, "chapters": []}"#.utf8).write(to: folder.appendingPathComponent("cues.json"))
        let named = "link/../cues.json"
        let run = try CLI.run(["replay", "--cues", named, "--device", "virtual"], in: folder)
        Self.expectRefused(run, sheet: named, missing: "far")
    }

    /// A `HAPTICS_DIR` named through a link and `..` is the folder the system finds there: above the link's target.
    /// Until 7 December it was made a URL relative to the current folder, which dropped `link/..` as text, and the
    /// `Haptics/` beside the link was searched.
    @Test func aHapticsDirNamedThroughALinkAndDotDotIsTheOneTheSystemFinds() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replay-cli-\(UUID().uuidString)")
        for sub in ["a/b", "a/Haptics", "Haptics"] {
            try FileManager.default.createDirectory(
                at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        defer { try? FileManager.default.removeItem(at: folder) }
        try FileManager.default.createSymbolicLink(
            at: folder.appendingPathComponent("link"), withDestinationURL: folder.appendingPathComponent("a/b"))
        // Each folder's sheet names a pattern it does not hold: the error names the sheet read.
        try Self.sheet(naming: "far").write(to: folder.appendingPathComponent("a/Haptics/cues.json"))
        try Self.sheet(naming: "near").write(to: folder.appendingPathComponent("Haptics/cues.json"))
        let run = try CLI.run(
            ["replay", "--device", "virtual"], environment: ["HAPTICS_DIR": "link/../Haptics"], in: folder)
        #expect(run.status == 1)
        #expect(run.errors.contains("no pattern 'far'"), "\(run.errors)")
    }

    /// A sheet named relative to a current folder that was removed is read as the system reads it (`..` of a
    /// removed folder is still its parent). Until 7 December the path, made a URL with no scheme where the current
    /// folder is not known, was refused as naming "no local file".
    @Test func aSheetAboveARemovedCurrentFolderIsReadAsTheSystemReadsIt() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("replay-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("gone"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Self.sheet(naming: "far").write(to: folder.appendingPathComponent("cues.json"))
        // The shell leaves its folder removed, then runs the command from it.
        let run = try CLI.run(
            [
                "-c", "cd gone && rmdir ../gone && exec \"$0\" replay --cues ../cues.json --device virtual",
                try CLI.binary().path,
            ], in: folder, through: "/bin/sh")
        Self.expectRefused(run, sheet: "../cues.json", missing: "far")
    }

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
