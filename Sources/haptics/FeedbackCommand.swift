import AHAP
import HapticRendering
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import LinuxHaptics
import AppHaptics

struct FeedbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Play the feedback vocabulary: notifications, the selection tick, impacts.",
        discussion: """
            KIND is success, warning or error (the notifications), selection, or impact followed by a STYLE: \
            light, medium, heavy, soft or rigid. --intensity (0...1) places an impact within its style's \
            intensity range (docs/app-haptics.md has the definitions). Plays on --device, else on the first \
            rumble-capable device, else on the built-in virtual output; prints each tap with the motor levels \
            the pattern asks for 20 ms into it. --json prints JSON lines: note (what the user should know, such \
            as the fall-back to the virtual output), feedback, tap (one per tap), stopped (with a reason: any but \
            the device going away ends the run with status 1), finished.
            """)

    @Argument(
        help: "success | warning | error | selection | impact",
        completion: .list(["success", "warning", "error", "selection", "impact"]))
    var kind: String

    @Argument(
        help: "The impact style: light | medium | heavy | soft | rigid (impact only).",
        completion: .list(ImpactStyle.allCases.map(\.rawValue)))
    var style: String?

    @Option(
        parsing: .unconditional,
        help: "Where an impact sits in its style's intensity range, 0...1 (impact only; default 0.5).")
    var intensity: Double?

    @OptionGroup var output: PlaybackOptions

    func validate() throws {
        _ = try feedback()
    }

    /// The vocabulary call the arguments name.
    func feedback() throws -> HapticFeedback {
        let chosen: HapticFeedback
        switch kind {
        case "impact":
            let styles = ImpactStyle.allCases.map(\.rawValue).joined(separator: ", ")
            guard let style else { throw ValidationError("impact needs a STYLE: \(styles)") }
            guard let impact = ImpactStyle(rawValue: style) else {
                throw ValidationError("no impact style \"\(style)\": the styles are \(styles)")
            }
            if let intensity, !(0...1).contains(intensity) {
                throw ValidationError("--intensity must be within 0...1")
            }
            return .impact(impact, intensity: intensity)
        case "selection": chosen = .selection
        case let name:
            guard let type = NotificationFeedback(rawValue: name) else {
                throw ValidationError("unknown feedback '\(name)': success, warning, error, selection or impact STYLE")
            }
            chosen = .notification(type)
        }
        if style != nil { throw ValidationError("only impact takes a STYLE") }
        if intensity != nil { throw ValidationError("only impact takes --intensity") }
        return chosen
    }

    func run() async throws {
        let feedback = try feedback()
        let report = PlayReport(command: "feedback", json: output.json)
        let engine = try await output.startEngine(command: "feedback", report: report)
        let stops = EngineStopWatch(engine, command: "feedback", report: report)
        let pattern = feedback.pattern
        let start = engine.currentTime + PlaybackTiming.leadIn
        // Read before the first write, which may stop the engine (a device that refuses it).
        let outputName = engine.capabilities?.name ?? "?"
        do {
            let player = try engine.makeAdvancedPlayer(with: pattern)
            player.completionHandler = stops.playerCompletion
            try player.start(atTime: start)
        } catch {
            throw CommandFailure("cannot play \(feedback)", why: "\(error)")
        }
        let taps = pattern.events.sorted { $0.relativeTime < $1.relativeTime }
        report.emit(
            "feedback",
            [
                "feedback": "\(feedback)", "output": outputName, "taps": "\(taps.count)",
                "start": PlaybackTiming.seconds(start),
            ],
            text: "\(feedback) on \(outputName): \(taps.count) tap\(taps.count == 1 ? "" : "s")")
        try await stops.narrate {
            await Self.narrate(
                taps, from: start, until: start + pattern.duration, on: engine,
                planned: PlannedLevels(start: start, plays: [(0, pattern)]), report: report)
        }
    }

    /// Each tap with the motor levels the pattern asks for just after it (`planned`), then `done`; nothing more once
    /// cancelled (the engine stopped for good).
    private static func narrate(
        _ taps: [HapticEvent], from start: Double, until end: Double, on engine: HapticEngine,
        planned: PlannedLevels, report: PlayReport
    ) async {
        for tap in taps {
            let at = start + tap.relativeTime
            let output = await engine.output(atOffset: tap.relativeTime, of: planned)
            if Task.isCancelled { return }
            report.emit(
                "tap",
                [
                    "time": PlaybackTiming.seconds(tap.relativeTime), "at": PlaybackTiming.seconds(at),
                    "intensity": String(cFormat: "%.2f", tap.intensity),
                    "sharpness": String(cFormat: "%.2f", tap.sharpness),
                ].merging(output.json) { first, _ in first },
                text: String(
                    cFormat: "  +%.3f s  intensity %.2f  sharpness %.2f   ", tap.relativeTime, tap.intensity,
                    tap.sharpness)
                    + output.text)
        }
        await engine.sleep(until: end + PlaybackTiming.tail)
        if Task.isCancelled { return }
        report.emit("finished", [:], text: "done")
    }
}
