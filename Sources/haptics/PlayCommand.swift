import AHAP
import ArgumentParser
import Dispatch
import Foundation
import HapticRendering
import LinuxHaptics
import LinuxInput
import Logging
import Synchronization

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an AHAP pattern on a gamepad (or the built-in virtual output) and show the motors live.",
        discussion: """
            FILE is a path to an .ahap file; NAME plays Haptics/NAME.ahap (the installed copy or the repo's; \
            HAPTICS_DIR overrides). Without --device it plays on the first rumble-capable device, or, when there \
            is none, on the built-in virtual output, which shows what the motors would do. When the device is \
            unplugged it says so, waits for it to come back and continues. Ctrl-C stops the motors and releases \
            the device. --json prints engine events as JSON lines: started, stopped (with a reason), reset, \
            finished, interrupted.
            """)

    @Argument(help: "An AHAP file, or the NAME of a pattern in Haptics/.")
    var pattern: String

    @Option(
        help:
            "The device: an event node (/dev/input/event5 or event5), a stable id (haptics devices), 'all' (every gamepad) or 'virtual'."
    )
    var device: String?

    @Option(help: "Play the pattern N times; 0 loops until interrupted.")
    var loop = 1

    @Option(help: "Playback rate (1 = as written, 2 = twice as fast).")
    var rate = 1.0

    @Option(help: "Overall strength, 0...1.")
    var gain = 1.0

    @Option(help: "Which motors play: all, left (strong motor) or right (weak motor).")
    var locality = "all"

    @Option(
        help:
            "The render profile (generic, xpad, dualsense, dualshock4, xbox-bluetooth, dualshock3, virtual); by default chosen from the device's driver."
    )
    var profile: String?

    @Flag(help: "Print engine events as JSON lines instead of the live view.")
    var json = false

    func validate() throws {
        if loop < 0 { throw ValidationError("--loop must be 0 (forever) or more") }
        if !(rate > 0 && rate.isFinite) { throw ValidationError("--rate must be a positive number") }
        if !(0...1).contains(gain) { throw ValidationError("--gain must be within 0...1") }
        if HapticLocality(rawValue: locality) == nil { throw ValidationError("--locality must be all, left or right") }
        if let profile, RenderProfile.named(profile) == nil {
            throw ValidationError(
                "unknown profile '\(profile)'; known: \(RenderProfile.builtIn.map(\.name).joined(separator: ", "))")
        }
    }

    func run() async throws {
        var logger = Logger(label: "haptics.play")
        logger.logLevel = .warning
        let url = try PatternLocator.locate(pattern)
        let loaded: HapticPattern
        do {
            loaded = try HapticPattern(contentsOf: url)
        } catch {
            printError("haptics play: \(url.path): \(error)")
            throw ExitCode.failure
        }
        var options = HapticEngineOptions()
        options.gain = gain
        options.locality = HapticLocality(rawValue: locality) ?? .all
        options.renderProfile = profile.flatMap(RenderProfile.named)
        let report = PlayReport(json: json, live: !json && isatty(STDOUT_FILENO) == 1)
        let engine = try startEngine(options: options, logger: logger, report: report)
        let session = PlaySession(engine: engine, pattern: loaded, loops: loop, rate: rate, report: report)
        try await session.run(name: url.lastPathComponent)
    }

    /// The engine for --device, or the first rumble device, or (with no --device and no usable device) the
    /// built-in virtual output.
    private func startEngine(options: HapticEngineOptions, logger: Logger, report: PlayReport) throws -> HapticEngine {
        try AppOutputOptions.startEngine(
            device: device, options: options, command: "play", report: report, logger: logger)
    }
}

/// Finds `Haptics/NAME.ahap`: `$HAPTICS_DIR`, `./Haptics`, the installed copy beside the binary
/// (`../share/haptics/Haptics`), or the repo's (the binary lives in `.build/<config>/`).
enum PatternLocator {
    static func locate(_ argument: String) throws -> URL {
        let manager = FileManager.default
        if manager.fileExists(atPath: argument) { return URL(fileURLWithPath: argument) }
        let name = argument.hasSuffix(".ahap") ? argument : argument + ".ahap"
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
            .deletingLastPathComponent()
        var folders: [URL] = []
        if let custom = ProcessInfo.processInfo.environment["HAPTICS_DIR"] {
            folders.append(URL(fileURLWithPath: custom))
        }
        folders += [
            URL(fileURLWithPath: manager.currentDirectoryPath).appendingPathComponent("Haptics"),
            executable.appendingPathComponent("../share/haptics/Haptics"),
            executable.appendingPathComponent("../../../Haptics"),
            executable.appendingPathComponent("../../Haptics"),
        ]
        for folder in folders {
            let candidate = folder.appendingPathComponent(name).standardizedFileURL
            if manager.fileExists(atPath: candidate.path) { return candidate }
        }
        printError(
            "haptics play: no file \(argument) and no pattern \(name) in: "
                + folders.map { $0.standardizedFileURL.path }.joined(separator: ", "))
        throw ExitCode.failure
    }
}

/// What the command prints: JSON lines, a live line redrawn on a terminal, or plain event lines.
struct PlayReport: Sendable {
    let json: Bool
    let live: Bool

    func event(_ name: String, _ fields: [String: String] = [:]) {
        if json {
            let body = ([("event", name)] + fields.sorted { $0.key < $1.key }).map {
                "\"\(Self.escape($0))\":\"\(Self.escape($1))\""
            }
            print("{" + body.joined(separator: ",") + "}")
        } else {
            if live { print("\r\u{1b}[K", terminator: "") }
            print(([name] + fields.sorted { $0.key < $1.key }.map { "\($0)=\($1)" }).joined(separator: " "))
        }
        flushOutput()
    }

    func note(_ text: String) {
        if json { event("note", ["message": text]) } else { printError("haptics play: \(text)") }
    }

    func draw(position: Double, length: Double?, levels: MotorMagnitudes) {
        guard live else { return }
        let progress =
            length.map { String(format: "%6.2f / %.2f s", position, $0) }
            ?? String(format: "%6.2f s (looping)", position)
        print(
            "\r\u{1b}[K\(progress)  " + Self.meter("strong", levels.strong) + "  " + Self.meter("weak", levels.weak),
            terminator: "")
        flushOutput()
    }

    static let meterWidth = 20

    static func meter(_ label: String, _ level: Double) -> String {
        let filled = Int((level * Double(meterWidth)).rounded())
        return "\(label) [" + String(repeating: "#", count: filled) + String(repeating: ".", count: meterWidth - filled)
            + "] " + String(format: "%3d%%", Int((level * 100).rounded()))
    }

    static func escape(_ text: String) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case _ where scalar.value < 0x20: escaped += String(format: "\\u%04x", scalar.value)
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}

/// One play: the player, its looping, and the engine events it reacts to.
struct PlaySession {
    enum Signal: Sendable {
        case finished
        case stopped(HapticEngineStoppedReason)
        case reset
        case interrupted
    }

    let engine: HapticEngine
    let pattern: HapticPattern
    let loops: Int
    let rate: Double
    let report: PlayReport

    /// How often the live view redraws, in seconds (display only: the engine itself never polls).
    static let redrawInterval = 0.05

    func run(name: String) async throws {
        let (signals, continuation) = AsyncStream.makeStream(of: Signal.self)
        engine.stoppedHandler = { continuation.yield(.stopped($0)) }
        engine.resetHandler = { continuation.yield(.reset) }
        let interrupts = Self.interruptSignals { continuation.yield(.interrupted) }
        defer { interrupts.forEach { $0.cancel() } }

        let loopLength = pattern.duration
        let total: Double? = loops == 0 ? nil : loopLength * Double(loops)
        let progress = Progress(start: engine.currentTime, rate: rate)
        var player = try begin(from: 0, total: total, loopLength: loopLength, completion: continuation)
        report.event(
            "started",
            [
                "pattern": name, "output": engine.capabilities?.name ?? "?", "profile": engine.renderProfile.name,
                "duration": String(format: "%.3f", loopLength),
            ])
        let redraw = Task { [engine, report] in
            while !Task.isCancelled {
                let position = progress.position(at: engine.currentTime, running: engine.isRunning)
                report.draw(position: position, length: total, levels: engine.outputLevels)
                try? await Task.sleep(for: .seconds(Self.redrawInterval))
            }
        }
        defer { redraw.cancel() }
        for await signal in signals {
            switch signal {
            case .finished:
                report.event("finished")
                engine.stop()
                return
            case .interrupted:
                report.event("interrupted")
                engine.stop()
                throw ExitCode(Self.interruptedStatus)
            case .stopped(let reason):
                progress.pause(at: engine.currentTime)
                report.event("stopped", ["reason": reason.rawValue])
                guard reason == .deviceRemoved else {
                    engine.stop()
                    throw ExitCode.failure
                }
                report.note("the device went away: waiting for it to come back (Ctrl-C to quit)")
            case .reset:
                report.event("reset", ["profile": engine.renderProfile.name])
                progress.resume(at: engine.currentTime)
                player = try begin(
                    from: progress.played, total: total, loopLength: loopLength, completion: continuation)
            }
        }
        _ = player
    }

    /// A new player that plays what is left from `played` seconds of pattern time on.
    private func begin(
        from played: Double, total: Double?, loopLength: Double, completion: AsyncStream<Signal>.Continuation
    ) throws -> any HapticAdvancedPatternPlayer {
        let player = try engine.makeAdvancedPlayer(with: pattern)
        player.playbackRate = rate
        player.completionHandler = { error in if error == nil { completion.yield(.finished) } }
        if loops != 1 { player.loopEnabled = true }
        if loopLength > 0 { try player.seek(toOffset: played.truncatingRemainder(dividingBy: loopLength)) }
        try player.start(atTime: 0)
        if let total, loops != 1 {
            try player.stop(atTime: engine.currentTime + max(total - played, 0) / rate)
        }
        return player
    }

    /// 128 + SIGINT, the status a shell reports for Ctrl-C.
    static let interruptedStatus: Int32 = 130

    static func interruptSignals(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler(handler: handler)
            source.resume()
            return source
        }
    }
}

/// Pattern time played so far, across unplugs: what a reset continues from.
final class Progress: Sendable {
    private struct State {
        var played = 0.0
        var startedAt: Double
        var running = true
    }

    private let state: Mutex<State>
    private let rate: Double

    init(start: Double, rate: Double) {
        state = Mutex(State(startedAt: start))
        self.rate = rate
    }

    var played: Double { state.withLock { $0.played } }

    func position(at now: Double, running: Bool) -> Double {
        state.withLock { $0.running && running ? $0.played + (now - $0.startedAt) * rate : $0.played }
    }

    func pause(at now: Double) {
        state.withLock { state in
            guard state.running else { return }
            state.played += (now - state.startedAt) * rate
            state.running = false
        }
    }

    func resume(at now: Double) {
        state.withLock { state in
            state.startedAt = now
            state.running = true
        }
    }
}
