import AHAP
import ArgumentParser
import Foundation
import LinuxHaptics

struct ReplayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replay",
        abstract: "Replay the reference app's haptic cues, chapter by chapter, with their timing.",
        discussion: """
            Reads the cue sheet (Haptics/cues.json, format in docs/app-haptics.md) and plays every cue at its \
            time: the chapters one after another, a one-second pause between them. Every play is scheduled on \
            the engine's clock up front, so timing does not depend on this program waking up. Plays on \
            --device, else on the first rumble-capable device, else on the built-in virtual output; prints \
            each cue as it plays with the motor levels. --json prints JSON lines: replay (with the start time \
            on CLOCK_MONOTONIC), chapter, cue (with its absolute time "at"), stopped, reset, finished.
            """)

    @Option(help: "Replay only chapter N.")
    var chapter: Int?

    @Flag(help: "Replay every chapter (the default).")
    var all = false

    @Option(help: "The cue sheet; patterns are looked up beside it. Default: cues.json in the Haptics/ folder.")
    var cues: String?

    @OptionGroup var output: AppOutputOptions

    func validate() throws {
        if chapter != nil && all { throw ValidationError("--chapter and --all exclude each other") }
    }

    func run() async throws {
        let (sheet, resources) = try loadSheet()
        let chapters: [CueSheet.Chapter]
        if let chapter {
            guard let found = sheet.chapter(chapter) else {
                printError(
                    "haptics replay: no chapter \(chapter) in the cue sheet (chapters: \(sheet.chapters.map { String($0.number) }.joined(separator: ", ")))"
                )
                throw ExitCode.failure
            }
            chapters = [found]
        } else {
            chapters = sheet.chapters
        }
        let patterns = try loadPatterns(Set(chapters.flatMap { $0.cues.map(\.pattern) }), from: resources)
        let plan = ReplayPlan(chapters: chapters, patternDurations: patterns.mapValues(\.duration))

        let report = PlayReport(json: output.json, live: false)
        let engine = try output.startEngine(command: "replay", report: report)
        let start = engine.currentTime + AppOutputOptions.leadIn
        let schedule = ReplaySchedule(engine: engine, plan: plan, patterns: patterns, start: start)
        engine.stoppedHandler = { reason in report.event("stopped", ["reason": reason.rawValue]) }
        engine.resetHandler = {
            report.event("reset")
            schedule.scheduleRemaining(report: report)
        }
        schedule.scheduleRemaining(report: report)
        let outputName = engine.capabilities?.name ?? "?"
        if output.json {
            report.event(
                "replay",
                [
                    "app": sheet.app, "output": outputName, "chapters": "\(plan.chapters.count)",
                    "cues": "\(plan.entries.count)", "start": AppOutputOptions.seconds(start),
                    "duration": AppOutputOptions.seconds(plan.duration),
                ])
        } else {
            print(
                "\(sheet.app.isEmpty ? "replay" : sheet.app): \(plan.chapters.count) chapter(s), \(plan.entries.count) cues, "
                    + String(format: "%.1f s", plan.duration) + " on \(outputName)")
        }
        var announced: Set<Int> = []
        // A chapter without cues is announced in its place among the others, not ahead of them all.
        let emptyChapters = plan.chapters.filter { span in !plan.entries.contains { $0.cue.chapter == span.number } }
        func announceEmptyChapters(before number: Int?) {
            for span in emptyChapters where number.map({ span.number < $0 }) ?? true {
                guard announced.insert(span.number).inserted else { continue }
                if !output.json { print("chapter \(span.number): \(span.title) (no haptic cues)") }
            }
        }
        for entry in plan.entries {
            announceEmptyChapters(before: entry.cue.chapter)
            if announced.insert(entry.cue.chapter).inserted,
                let span = plan.chapters.first(where: { $0.number == entry.cue.chapter })
            {
                await AppOutputOptions.sleep(until: start + span.start, on: engine)
                if output.json {
                    report.event(
                        "chapter",
                        [
                            "chapter": "\(span.number)", "title": span.title,
                            "at": AppOutputOptions.seconds(start + span.start),
                        ])
                } else {
                    print("chapter \(span.number): \(span.title)")
                }
            }
            let at = start + entry.offset
            let levels = await AppOutputOptions.levels(of: engine, at: at)
            if output.json {
                report.event(
                    "cue",
                    [
                        "chapter": "\(entry.cue.chapter)", "pattern": entry.cue.pattern, "moment": entry.cue.moment,
                        "time": AppOutputOptions.seconds(entry.cue.time),
                        "offset": AppOutputOptions.seconds(entry.offset),
                        "at": AppOutputOptions.seconds(at), "motors": AppOutputOptions.levelsText(levels),
                    ])
            } else {
                let name = entry.cue.pattern.padding(toLength: Self.patternColumn, withPad: " ", startingAt: 0)
                print(
                    String(format: "  %6.3f s  ", entry.cue.time) + name + AppOutputOptions.meters(levels) + "  "
                        + entry.cue.moment)
            }
            flushOutput()
        }
        announceEmptyChapters(before: nil)
        await AppOutputOptions.sleep(until: start + plan.duration + AppOutputOptions.tail, on: engine)
        if output.json { report.event("finished") } else { print("done") }
        engine.stop()
    }

    /// Wide enough for the longest pattern name of our sheet (`capacitor_charge`) and a space.
    static let patternColumn = 18

    private func loadSheet() throws -> (CueSheet, HapticResourceDirectory) {
        let url: URL
        if let cues {
            url = URL(fileURLWithPath: cues)
        } else {
            guard let folder = HapticResourceDirectory.locate() else {
                printError(
                    "haptics replay: no Haptics/ folder found (set HAPTICS_DIR, run from the repository, or pass --cues FILE)"
                )
                throw ExitCode.failure
            }
            url = folder.directory.appendingPathComponent(Self.defaultSheetName)
        }
        do {
            return (try CueSheet(contentsOf: url), HapticResourceDirectory(directory: url.deletingLastPathComponent()))
        } catch {
            printError("haptics replay: \(error)")
            throw ExitCode.failure
        }
    }

    static let defaultSheetName = "cues.json"

    private func loadPatterns(_ names: Set<String>, from resources: HapticResourceDirectory) throws -> [String:
        HapticPattern]
    {
        var patterns: [String: HapticPattern] = [:]
        for name in names.sorted() {
            guard let url = resources.url(forResource: name, withExtension: "ahap") else {
                printError(
                    "haptics replay: the cue sheet names '\(name)', but \(resources.directory.path)/\(name).ahap does not exist"
                )
                throw ExitCode.failure
            }
            do {
                patterns[name] = try HapticPattern(contentsOf: url)
            } catch {
                printError("haptics replay: \(url.path): \(error)")
                throw ExitCode.failure
            }
        }
        return patterns
    }
}

/// The replay's plays on the engine: every one scheduled at its absolute time; after a reset (the device came
/// back) the ones not yet due are scheduled again on new players.
final class ReplaySchedule: Sendable {
    let engine: HapticEngine
    let plan: ReplayPlan
    let patterns: [String: HapticPattern]
    let start: Double

    init(engine: HapticEngine, plan: ReplayPlan, patterns: [String: HapticPattern], start: Double) {
        self.engine = engine
        self.plan = plan
        self.patterns = patterns
        self.start = start
    }

    func scheduleRemaining(report: PlayReport) {
        let now = engine.currentTime
        // Fire-and-forget: the engine keeps a released player until its pending start has played out.
        for entry in plan.entries where start + entry.offset >= now {
            guard let pattern = patterns[entry.cue.pattern] else { continue }
            do {
                try engine.makePlayer(with: pattern).start(atTime: start + entry.offset)
            } catch {
                report.note(
                    "cue \(entry.cue.pattern) at \(AppOutputOptions.seconds(entry.offset)) s not scheduled: \(error)")
            }
        }
    }
}
