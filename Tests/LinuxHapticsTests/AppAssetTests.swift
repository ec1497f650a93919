// The reference app's assets: every pattern passes `haptics validate --strict`, the cue sheet parses and names
// only patterns that exist, and broken cue sheets fail with their file and JSON path.
import AHAPFiles
import Foundation
import LinuxHaptics
import AppHaptics
import Testing

@Suite struct AppAssetTests {
    static let patternFiles = ["heartbeat", "capacitor_charge", "thud", "detent", "error"]

    @Test(arguments: patternFiles)
    func patternLoadsWithoutWarnings(_ name: String) throws {
        let report = AHAPValidator.validate(contentsOf: AppAssets.url("\(name).ahap"))
        #expect(report.passesStrict, "\(name).ahap: \(report.diagnostics.map(\.description))")
    }

    @Test func heartbeatIsLubDub() throws {
        let pattern = try HapticPattern(contentsOf: AppAssets.url("heartbeat.ahap"))
        let beats = pattern.events.sorted { $0.relativeTime < $1.relativeTime }
        try #require(beats.count == 2)
        #expect(beats.allSatisfy { $0.type == .hapticTransient })
        #expect(abs(beats[1].relativeTime - beats[0].relativeTime - 0.15) < 1e-9)
        #expect(beats[0].intensity > beats[1].intensity, "the first beat is the strong one")
        #expect(beats.allSatisfy { $0.sharpness <= 0.3 }, "both beats are dull")
    }

    @Test func capacitorChargeRisesOverOneSecond() throws {
        let pattern = try HapticPattern(contentsOf: AppAssets.url("capacitor_charge.ahap"))
        let event = try #require(pattern.events.first { $0.type == .hapticContinuous })
        #expect(event.effectiveDuration == 1.0)
        let intensity = try #require(pattern.parameterCurves.first { $0.parameterID == .hapticIntensityControl })
        let sharpness = try #require(pattern.parameterCurves.first { $0.parameterID == .hapticSharpnessControl })
        // Intensity control multiplies, sharpness control adds (Core Haptics' rules).
        #expect(event.intensity * (intensity.value(atPatternTime: 0) ?? -1) == 0.2)
        #expect(event.intensity * (intensity.value(atPatternTime: 1) ?? -1) == 1.0)
        #expect(abs(event.sharpness + (sharpness.value(atPatternTime: 0) ?? -1) - 0.3) < 1e-9)
        #expect(abs(event.sharpness + (sharpness.value(atPatternTime: 1) ?? -1) - 0.8) < 1e-9)
    }

    @Test func thudIsAHeavyDullHitWithADecayingTail() throws {
        let pattern = try HapticPattern(contentsOf: AppAssets.url("thud.ahap"))
        let hit = try #require(pattern.events.first { $0.type == .hapticTransient })
        let tail = try #require(pattern.events.first { $0.type == .hapticContinuous })
        #expect(hit.relativeTime == 0 && hit.intensity >= 0.9 && hit.sharpness <= 0.2)
        #expect(tail.effectiveDuration > 0 && tail.effectiveDuration <= 0.3, "a short tail")
        let decay = try #require(pattern.parameterCurves.first { $0.parameterID == .hapticIntensityControl })
        #expect(decay.value(atPatternTime: decay.endTime) == 0, "the tail decays to nothing")
    }

    @Test func errorCueIsTheVocabularysErrorNotification() throws {
        let file = try HapticPattern(contentsOf: AppAssets.url("error.ahap"))
        #expect(file.events == HapticFeedback.notification(.error).pattern.events)
    }

    @Test func cueSheetParsesAndNamesExistingPatterns() throws {
        let sheet = try CueSheet(contentsOf: AppAssets.url("cues.json"))
        #expect(sheet.chapters.map(\.number) == [1, 2, 3, 4, 5, 6])
        #expect(sheet.patternNames == ["capacitor_charge", "detent", "error", "heartbeat", "thud"])
        let resolver = HapticResourceDirectory(directory: AppAssets.folder)
        for name in sheet.patternNames {
            #expect(resolver.url(forResource: name, withExtension: "ahap") != nil, "\(name).ahap is missing")
        }
        // Chapter 1: the charge, then the snap one second later.
        let first = try #require(sheet.chapter(1)).timeline
        #expect(first.map(\.pattern) == ["capacitor_charge", "thud"])
        #expect(first.map(\.time) == [0, 1.0])
        // Chapter 3: eight detents, then the thud.
        let third = try #require(sheet.chapter(3)).timeline
        #expect(third.filter { $0.pattern == "detent" }.count == 8)
        #expect(third.last?.pattern == "thud")
    }

    @Test func repeatedCuesExpandInTimeOrder() throws {
        let text = """
            {"version": 1, "chapters": [{"chapter": 1, "cues": [
              {"time": 0.5, "pattern": "thud"},
              {"time": 0, "pattern": "detent", "count": 3, "interval": 0.25}]}]}
            """
        let timeline = try #require(try CueSheet(data: Data(text.utf8)).chapter(1)).timeline
        #expect(timeline.map(\.time) == [0, 0.25, 0.5, 0.5])
        #expect(timeline.map(\.pattern) == ["detent", "detent", "thud", "detent"])
        #expect(timeline.map(\.repetition) == [0, 1, 0, 2])
    }

    /// A cue's place in the document is told by sheet order, not by chapter number or time.
    @Test func theFirstCueNamingAPatternIsLocatedByItsPathInTheDocument() throws {
        let text = """
            {"version": 1, "chapters": [
              {"chapter": 3, "cues": [{"time": 1, "pattern": "thud"}]},
              {"chapter": 1, "cues": [{"time": 2, "pattern": "detent"}, {"time": 0, "pattern": "gone"},
                                      {"time": 3, "pattern": "gone"}]}]}
            """
        let sheet = try CueSheet(data: Data(text.utf8))
        #expect(sheet.location(ofFirstCueNaming: "gone") == "chapters[1].cues[1].pattern")
        #expect(sheet.location(ofFirstCueNaming: "thud") == "chapters[0].cues[0].pattern")
        #expect(sheet.location(ofFirstCueNaming: "absent") == nil)
    }

    /// Broken sheets and the error each must give: the file, the JSON path and the reason.
    static let brokenSheets: [(text: String, expected: String)] = [
        ("{", "broken.json: line 1, column 2: not valid JSON: "),
        // Foundation's decoder said "not valid JSON" for these, with no place: the reader gives the line and column,
        // or the JSON path and what was found.
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "thud", "count": 1.5}]}]}"#,
            "broken.json: chapters[0].cues[0].count: expected a whole number, found 1.5"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1e30, "cues": []}]}"#,
            "broken.json: chapters[0].chapter: expected a whole number, found 1e+30, which is out of range"
        ),
        (
            "{\"version\": 1,\n \"chapters\": [{\"chapter\": 1, \"cues\": [{\"time\": 0, \"pattern\": \"th",
            "broken.json: chapters[0].cues[0].pattern: line 2, column "
        ),
        (
            #"{"version": 1, "chapters": {"chapter": 1}}"#,
            "broken.json: chapters: expected an array, found an object"
        ),
        (#"{"chapters": []}"#, #"broken.json: missing required key "version""#),
        (#"{"version": 2, "chapters": []}"#, "broken.json: version: unsupported version 2"),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": "soon", "pattern": "thud"}]}]}"#,
            "broken.json: chapters[0].cues[0].time: expected a number"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0}]}]}"#,
            #"broken.json: chapters[0].cues[0]: missing required key "pattern""#
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": -1, "pattern": "thud"}]}]}"#,
            "broken.json: chapters[0].cues[0].time: must be a number of seconds from 0 to 86400 (a day)"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "../etc/passwd"}]}]}"#,
            "broken.json: chapters[0].cues[0].pattern: '../etc/passwd' is not a pattern name"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "thud", "count": 3}]}]}"#,
            "broken.json: chapters[0].cues[0].interval: a cue played 3 times needs an interval > 0 seconds"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 2, "cues": []}, {"chapter": 2, "cues": []}]}"#,
            "broken.json: chapters[1].chapter: chapter 2 appears twice"
        ),
        // Found by fuzzing (docs/reliability.md): a count in the millions expanded into a timeline that ran the
        // reader out of time and memory; a count near Int.max would overflow the sum of plays; an interval near
        // the largest Double put the last plays at infinity.
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "thud", "count": 6363118, "interval": 0.6}]}]}"#,
            "broken.json: chapters[0].cues[0].count: the sheet would play more than 100000 patterns in all"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 0, "pattern": "a", "count": 60000, "interval": 1}]}, {"chapter": 2, "cues": [{"time": 0, "pattern": "b", "count": 9223372036854775807, "interval": 1}]}]}"#,
            "broken.json: chapters[1].cues[0].count: the sheet would play more than 100000 patterns in all"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 1, "pattern": "thud", "count": 3, "interval": 1e308}]}]}"#,
            "broken.json: chapters[0].cues[0].interval: the last of 3 plays 1e+308 s apart is later than 86400 s (a day)"
        ),
        // Found by audit: a time every check took as finite trapped the replay's wait (`Task.sleep`), alone or
        // summed over chapters.
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 2e20, "pattern": "thud"}]}]}"#,
            "broken.json: chapters[0].cues[0].time: must be a number of seconds from 0 to 86400 (a day), found 2e+20"
        ),
        (
            #"{"version": 1, "chapters": [{"chapter": 1, "cues": [{"time": 86000, "pattern": "thud", "count": 3, "interval": 300}]}]}"#,
            "broken.json: chapters[0].cues[0].interval: the last of 3 plays 300.0 s apart is later than 86400 s (a day)"
        ),
    ]

    @Test(arguments: brokenSheets.indices)
    func brokenCueSheetNamesFileAndPath(_ index: Int) throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let (text, expected) = Self.brokenSheets[index]
        let file = try scratch.write(text, to: "broken.json")
        let error = try #require(throws: CueSheetError.self) { try CueSheet(contentsOf: file) }
        #expect(error.description.hasPrefix(file.deletingLastPathComponent().path + "/" + expected), "\(error)")
    }

    @Test func aSheetMayHoldTheMostPlays() throws {
        let text = """
            {"version": 1, "chapters": [{"chapter": 1, "cues": [
              {"time": 0, "pattern": "detent", "count": \(CueSheet.maximumPlays - 1), "interval": 0.01},
              {"time": 0, "pattern": "thud"}]}]}
            """
        let timeline = try #require(try CueSheet(data: Data(text.utf8)).chapter(1)).timeline
        #expect(timeline.count == CueSheet.maximumPlays)
    }

    @Test func missingCueSheetSaysSo() throws {
        let error = try #require(throws: CueSheetError.self) {
            try CueSheet(contentsOf: URL(fileURLWithPath: "/nonexistent/cues.json"))
        }
        #expect(error.description == "/nonexistent/cues.json: cannot read the file (no such file)")
    }

    @Test func aFolderOrADeviceAsCueSheetSaysWhatItIs() throws {
        let scratch = try ScratchFolder()
        defer { scratch.remove() }
        let folder = scratch.url
        let expected = [
            folder.path: "cannot read the file (it is a directory, not a file",
            "/dev/zero": "cannot read the file (it is a device, not a regular file)",
        ]
        for (path, reason) in expected {
            let error = try #require(throws: CueSheetError.self) {
                try CueSheet(contentsOf: URL(fileURLWithPath: path))
            }
            #expect(error.description.hasPrefix("\(path): \(reason)"), "\(error)")
        }
    }
}
