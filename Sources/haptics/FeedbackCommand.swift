import AHAP
import HapticRendering
import ArgumentParser
import Foundation
import LinuxHaptics
import LinuxInput
import Logging

struct FeedbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "feedback",
        abstract: "Play the feedback vocabulary: notifications, the selection tick, impacts.",
        discussion: """
            KIND is success, warning or error (the notifications), selection, or impact followed by a STYLE: \
            light, medium, heavy, soft or rigid. --intensity (0...1) places an impact within its style's \
            intensity range (docs/app-haptics.md has the definitions). Plays on --device, else on the first \
            rumble-capable device, else on the built-in virtual output; prints each tap with the motor levels \
            at its time. --json prints JSON lines: feedback, tap (one per tap), finished.
            """)

    @Argument(help: "success | warning | error | selection | impact")
    var kind: String

    @Argument(help: "The impact style: light | medium | heavy | soft | rigid (impact only).")
    var style: String?

    @Option(help: "Where an impact sits in its style's intensity range, 0...1 (impact only; default 0.5).")
    var intensity: Double?

    @OptionGroup var output: AppOutputOptions

    func validate() throws {
        _ = try feedback()
    }

    /// The vocabulary call the arguments name.
    func feedback() throws -> HapticFeedback {
        let chosen: HapticFeedback
        switch kind {
        case "impact":
            guard let style, let impact = ImpactStyle(rawValue: style) else {
                let styles = ImpactStyle.allCases.map(\.rawValue).joined(separator: ", ")
                throw ValidationError("impact needs a STYLE: \(styles)")
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
        let report = PlayReport(json: output.json, live: false)
        let engine = try output.startEngine(command: "feedback", report: report)
        let pattern = feedback.pattern
        let start = engine.currentTime + AppOutputOptions.leadIn
        do {
            try engine.makePlayer(with: pattern).start(atTime: start)
        } catch {
            printError("haptics feedback: \(error)")
            throw ExitCode.failure
        }
        let taps = pattern.events.sorted { $0.relativeTime < $1.relativeTime }
        let outputName = engine.capabilities?.name ?? "?"
        if output.json {
            report.event(
                "feedback",
                [
                    "feedback": "\(feedback)", "output": outputName, "taps": "\(taps.count)",
                    "start": AppOutputOptions.seconds(start),
                ])
        } else {
            print("\(feedback) on \(outputName): \(taps.count) tap\(taps.count == 1 ? "" : "s")")
        }
        for tap in taps {
            let at = start + tap.relativeTime
            let levels = await AppOutputOptions.levels(of: engine, at: at)
            if output.json {
                report.event(
                    "tap",
                    [
                        "time": AppOutputOptions.seconds(tap.relativeTime), "at": AppOutputOptions.seconds(at),
                        "intensity": String(format: "%.2f", tap.intensity),
                        "sharpness": String(format: "%.2f", tap.sharpness),
                        "motors": AppOutputOptions.levelsText(levels),
                    ])
            } else {
                print(
                    String(
                        format: "  +%.3f s  intensity %.2f  sharpness %.2f   ", tap.relativeTime, tap.intensity,
                        tap.sharpness)
                        + AppOutputOptions.meters(levels))
            }
            flushOutput()
        }
        await AppOutputOptions.sleep(until: start + pattern.duration + AppOutputOptions.tail, on: engine)
        if output.json { report.event("finished") } else { print("done") }
        engine.stop()
    }
}

/// What the playing commands share: where they play (`play` too), how they print, how they wait.
struct AppOutputOptions: ParsableArguments {
    @Option(
        help:
            "The device: an event node (/dev/input/event5 or event5), a stable id (haptics devices), 'all' (every gamepad) or 'virtual'."
    )
    var device: String?

    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    /// Scheduling the first haptic this far ahead gives the engine time to upload before it is due, so it
    /// plays on time rather than late.
    static let leadIn = 0.1
    /// How long after a pattern's end the command waits before stopping the engine: the motors' last
    /// self-expiring update has run out by then.
    static let tail = 0.2
    /// The motor levels of a tap are read this long after it starts: the engine applies a change at its
    /// deadline, and ff-memless (or the virtual model) shows it within one 4 ms tick.
    static let sampleDelay = 0.02

    /// The engine for --device; without one, the first rumble device or else the built-in virtual output.
    func startEngine(command: String, report: PlayReport) throws -> HapticEngine {
        var logger = Logger(label: "haptics.\(command)")
        logger.logLevel = .warning
        return try Self.startEngine(
            device: device, options: HapticEngineOptions(), command: command, report: report, logger: logger)
    }

    /// The engine every playing command uses (`play`, `replay`, `feedback`): `device` names an event node
    /// (`/dev/input/event5`, `event5`), a stable id, `all` (every gamepad) or `virtual`; without one, the first
    /// rumble-capable device, or, when none is usable, the built-in virtual output (with a note saying so).
    static func startEngine(
        device: String?, options: HapticEngineOptions, command: String, report: PlayReport, logger: Logger
    ) throws -> HapticEngine {
        let selection: HapticOutputSelection
        switch device {
        case nil: selection = .device(.firstRumbleDevice)
        case "virtual": selection = .virtual(VirtualOutput())
        case "all": selection = .device(.allGamepads)
        case let text? where text.hasPrefix("/"): selection = .device(.node(text))
        case let text? where text.hasPrefix("event"): selection = .device(.node("/dev/input/\(text)"))
        case let text?: selection = .device(.id(StableDeviceID(rawValue: text)))
        }
        let engine = HapticEngine(output: selection, options: options, logger: logger)
        do {
            try engine.start()
            return engine
        } catch {
            guard device == nil else {
                printError("haptics \(command): \(error)")
                throw ExitCode.failure
            }
            let message = "no usable rumble device (\(error)): playing on the built-in virtual output"
            if report.json {
                report.event("note", ["message": message])
            } else {
                printError("haptics \(command): \(message)")
            }
            let virtual = HapticEngine(output: .virtual(VirtualOutput()), options: options, logger: logger)
            do { try virtual.start() } catch {
                printError("haptics \(command): \(error)")
                throw ExitCode.failure
            }
            return virtual
        }
    }

    static func sleep(until time: Double, on engine: HapticEngine) async {
        let remaining = time - engine.currentTime
        if remaining > 0 { try? await Task.sleep(for: .seconds(remaining)) }
    }

    static func levels(of engine: HapticEngine, at time: Double) async -> MotorMagnitudes {
        await sleep(until: time + sampleDelay, on: engine)
        return engine.outputLevels
    }

    static func seconds(_ value: Double) -> String { String(format: "%.6f", value) }

    static func levelsText(_ levels: MotorMagnitudes) -> String {
        String(format: "strong %.3f weak %.3f", levels.strong, levels.weak)
    }

    static func meters(_ levels: MotorMagnitudes) -> String {
        PlayReport.meter("strong", levels.strong) + "  " + PlayReport.meter("weak", levels.weak)
    }
}
