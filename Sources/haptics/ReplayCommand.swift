import AHAPFiles
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinuxHaptics
import AppHaptics
import LinuxSystem

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay the reference app's haptic cues, chapter by chapter, with their timing.",
        discussion: """
            Reads the cue sheet (Haptics/cues.json, or --cues) and plays every cue at its time: the chapters one \
            after another, a one-second pause between them. Every play is scheduled on the engine's clock up front, \
            so timing does not depend on this program waking up. Plays on --device, else on the first rumble-capable \
            device, else on the built-in virtual output; prints each cue as it plays with the motor levels the cues \
            ask for 20 ms into it (the same in every run). --json prints JSON lines: note (what the user should \
            know: the fall-back to the virtual output, waiting for a device, a cue not scheduled), replay (with the \
            start time on CLOCK_MONOTONIC), chapter, cue (with its absolute time "at"), stopped (a stop other than \
            the device going away ends the replay with status 1), reset, finished. A cue sheet is JSON: {"version": \
            1, "app": NAME, "chapters": [{"chapter": N, "title": TITLE, "cues": [{"time": SECONDS, "pattern": NAME, \
            "moment": TEXT, "count": N, "interval": SECONDS}]}]}, where chapter numbers are unique and at least 1, a \
            cue's time is seconds from its chapter's start, and its pattern is NAME.ahap beside the sheet; app, \
            title, moment, count (1) and interval (needed with a count over 1) may be left out.
            """)

    @Option(parsing: .unconditional, help: "Replay only chapter N (not with --all).")
    var chapter: Int?

    @Flag(help: "Replay every chapter (the default).")
    var all = false

    @Option(help: "The cue sheet; patterns are looked up beside it. Default: cues.json in the Haptics/ folder.")
    var cues: String?

    @OptionGroup var output: PlaybackOptions

    func validate() throws {
        if chapter != nil && all { throw ValidationError("--chapter and --all exclude each other") }
        if cues?.isEmpty == true { throw ValidationError("--cues takes the path of a cue sheet; it is empty") }
    }

    func run() async throws {
        let (sheet, sheetFile, resources) = try loadSheet()
        let chapters = try selectedChapters(of: sheet)
        let patterns = try loadPatterns(
            Set(chapters.flatMap { $0.cues.map(\.pattern) }), of: sheet, in: sheetFile, from: resources)
        let plan = ReplayPlan(chapters: chapters, patternDurations: patterns.mapValues(\.duration))
        let report = PlayReport(command: "replay", json: output.json)
        let engine = try await output.startEngine(command: "replay", report: report)
        let stops = EngineStopWatch(engine, command: "replay", report: report)
        // Read before the first write, which may stop the engine (a device that refuses it).
        let outputName = engine.capabilities?.name ?? "?"
        let start = engine.currentTime + PlaybackTiming.leadIn
        let schedule = ReplaySchedule(
            engine: engine, plan: plan, patterns: patterns, start: start, completion: stops.playerCompletion)
        engine.resetHandler = {
            report.event("reset")
            schedule.scheduleRemaining(report: report)
        }
        schedule.scheduleRemaining(report: report)
        let planned = PlannedLevels(
            start: start,
            plays: plan.entries.compactMap { entry in patterns[entry.cue.pattern].map { (entry.offset, $0) } })
        let narration = ReplayNarration(
            app: sheet.app, output: outputName, plan: plan, start: start, engine: engine, planned: planned,
            report: report)
        try await stops.narrate {
            var narration = narration
            await narration.run()
        }
    }

    /// Chapter `--chapter`, or every chapter.
    private func selectedChapters(of sheet: CueSheet) throws -> [CueSheet.Chapter] {
        guard let chapter else { return sheet.chapters }
        guard let found = sheet.chapter(chapter) else {
            throw CommandFailure(
                "no chapter \(chapter) in the cue sheet",
                why: "its chapters are \(sheet.chapters.map { String($0.number) }.joined(separator: ", "))",
                fix: "Name one of them with --chapter, or replay them all with --all.")
        }
        return [found]
    }

    /// The cue sheet, the file it was read from (as given), and its folder, where its patterns are.
    private func loadSheet() throws -> (CueSheet, String, HapticResourceDirectory) {
        let url: URL
        if let cues {
            // As the system reads it: `link/../cues.json` is in the folder above the link's target.
            url = DocumentFile.url(ofPath: cues)
        } else {
            guard let folder = HapticResourceDirectory.locate() else {
                if let override = HapticResourceDirectory.brokenOverride() {
                    throw CommandFailure(
                        "no cue sheet", why: "HAPTICS_DIR is set to \(override), which is not a folder",
                        fix: "Point HAPTICS_DIR at the Haptics/ folder that holds cues.json, unset it, or pass "
                            + "--cues FILE.")
                }
                let searched = HapticResourceDirectory.locateFile(Self.defaultSheetName, withExtension: "json")
                    .searched.map(\.standardizedFileURL.path)
                throw CommandFailure(
                    "no cue sheet", why: "no Haptics/ folder in: " + searched.joined(separator: ", "),
                    fix: "Set HAPTICS_DIR, run from the repository, or pass --cues FILE.")
            }
            url = folder.directory.appendingPathComponent(Self.defaultSheetName)
        }
        do {
            return (
                try CueSheet(contentsOf: url), cues ?? url.relativePath,
                HapticResourceDirectory(directory: url.deletingLastPathComponent())
            )
        } catch {
            throw CommandFailure(
                "cannot read the cue sheet", why: "\(error)", fix: "`haptics replay --help` describes its format.")
        }
    }

    static let defaultSheetName = "cues.json"

    /// The patterns `names` (cues of `sheet`, read from `sheetFile`) from the sheet's folder; a missing one is
    /// named with where the sheet names it.
    private func loadPatterns(
        _ names: Set<String>, of sheet: CueSheet, in sheetFile: String, from resources: HapticResourceDirectory
    ) throws -> [String: HapticPattern] {
        var patterns: [String: HapticPattern] = [:]
        for name in names.sorted() {
            guard let url = resources.url(forResource: name, withExtension: "ahap") else {
                let location = sheet.location(ofFirstCueNaming: name).map { ": \($0)" } ?? ""
                throw CommandFailure(
                    "\(sheetFile)\(location): no pattern '\(name)'",
                    why: "\(resources.directory.path)/\(name).ahap does not exist",
                    fix: "Add the pattern beside the cue sheet, or correct the sheet's pattern name.")
            }
            do {
                patterns[name] = try HapticPattern(contentsOf: url)
            } catch {
                throw CommandFailure(
                    "cannot load \(url.path)", why: "\(error)", fix: PatternArgument.loadFix(for: error, path: url.path)
                )
            }
        }
        return patterns
    }
}

/// What the replay prints while the engine plays what was scheduled: a header, each chapter as it begins, each
/// cue with the motor levels the cues ask for at its time (`PlannedLevels`; a chapter without cues in its place
/// among the others), then the end.
struct ReplayNarration: Sendable {
    let app: String
    /// The device (or virtual output) the replay plays on.
    let output: String
    let plan: ReplayPlan
    let start: Double
    let engine: HapticEngine
    /// The levels the cues ask for, printed beside each.
    let planned: PlannedLevels
    let report: PlayReport
    private var announced: Set<Int> = []

    init(
        app: String, output: String, plan: ReplayPlan, start: Double, engine: HapticEngine, planned: PlannedLevels,
        report: PlayReport
    ) {
        self.app = app
        self.output = output
        self.plan = plan
        self.start = start
        self.engine = engine
        self.planned = planned
        self.report = report
    }

    /// Wide enough for the longest pattern name of our sheet (`capacitor_charge`) and a space.
    static let patternColumn = 18

    mutating func run() async {
        printHeader()
        // Cancelled when the engine stopped for good: from then on nothing is printed (each sleep ends at once).
        for entry in plan.entries {
            announceEmptyChapters(before: entry.cue.chapter)
            await announceChapter(entry.cue.chapter)
            await printCue(entry)
        }
        announceEmptyChapters(before: nil)
        await engine.sleep(until: start + plan.duration + PlaybackTiming.tail)
        if Task.isCancelled { return }
        report.emit("finished", [:], text: "done")
    }

    private func printHeader() {
        report.emit(
            "replay",
            [
                "app": app, "output": output, "chapters": "\(plan.chapters.count)",
                "cues": "\(plan.entries.count)", "start": PlaybackTiming.seconds(start),
                "duration": PlaybackTiming.seconds(plan.duration),
            ],
            text: "\(app.isEmpty ? "replay" : app): \(plan.chapters.count) chapter(s), \(plan.entries.count) cues, "
                + String(cFormat: "%.1f s", plan.duration) + " on \(output)")
    }

    /// Chapters without cues that come before chapter `number` (all that are left when `nil`); text only.
    private mutating func announceEmptyChapters(before number: Int?) {
        let empty = plan.chapters.filter { span in !plan.entries.contains { $0.cue.chapter == span.number } }
        for span in empty where number.map({ span.number < $0 }) ?? true {
            guard announced.insert(span.number).inserted else { continue }
            if !report.json { Console.printLine("chapter \(span.number): \(span.title) (no haptic cues)") }
        }
    }

    /// The chapter's title when its first cue comes up, printed when the chapter begins.
    private mutating func announceChapter(_ number: Int) async {
        guard announced.insert(number).inserted, let span = plan.chapters.first(where: { $0.number == number })
        else { return }
        await engine.sleep(until: start + span.start)
        if Task.isCancelled { return }
        report.emit(
            "chapter",
            ["chapter": "\(span.number)", "title": span.title, "at": PlaybackTiming.seconds(start + span.start)],
            text: "chapter \(span.number): \(span.title)")
    }

    private func printCue(_ entry: ReplayPlan.Entry) async {
        let at = start + entry.offset
        let output = await engine.output(atOffset: entry.offset, of: planned)
        if Task.isCancelled { return }
        let name = entry.cue.pattern.padded(to: Self.patternColumn)
        report.emit(
            "cue",
            [
                "chapter": "\(entry.cue.chapter)", "pattern": entry.cue.pattern, "moment": entry.cue.moment,
                "time": PlaybackTiming.seconds(entry.cue.time), "offset": PlaybackTiming.seconds(entry.offset),
                "at": PlaybackTiming.seconds(at),
            ].merging(output.json) { first, _ in first },
            text: String(cFormat: "  %6.3f s  ", entry.cue.time) + name + output.text + "  " + entry.cue.moment)
    }
}

/// The replay's plays on the engine: every one scheduled at its absolute time; after a reset (the device came
/// back) the ones not yet due are scheduled again on new players.
final class ReplaySchedule: Sendable {
    let engine: HapticEngine
    let plan: ReplayPlan
    let patterns: [String: HapticPattern]
    let start: Double
    /// Called as each play ends, with the error it ended on.
    let completion: @Sendable (HapticEngineError?) -> Void

    init(
        engine: HapticEngine, plan: ReplayPlan, patterns: [String: HapticPattern], start: Double,
        completion: @escaping @Sendable (HapticEngineError?) -> Void
    ) {
        self.engine = engine
        self.plan = plan
        self.patterns = patterns
        self.start = start
        self.completion = completion
    }

    func scheduleRemaining(report: PlayReport) {
        let now = engine.currentTime
        // Fire-and-forget: the engine keeps a released player until its pending start has played out.
        for entry in plan.entries where start + entry.offset >= now {
            guard let pattern = patterns[entry.cue.pattern] else { continue }
            do {
                let player = try engine.makeAdvancedPlayer(with: pattern)
                player.completionHandler = completion
                try player.start(atTime: start + entry.offset)
            } catch {
                report.note(
                    "cue \(entry.cue.pattern) at \(PlaybackTiming.seconds(entry.offset)) s not scheduled: \(error)")
            }
        }
    }
}
