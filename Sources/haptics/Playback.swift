// What the playing commands (`play`, `replay`, `feedback`) share: the options that say where they play and how
// they print, the engine they start, the report they print through, and how they wait on the engine's clock.
import AHAP
import ArgumentParser
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HapticRendering
import LinuxHaptics
import Logging
@_spi(Internals) import LinuxSystem

struct PlaybackOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            DeviceSelector.outputHelp
                + " Default: the first rumble-capable device, else the built-in virtual output.",
            valueName: "device"))
    var device: DeviceSelector?

    @Flag(
        help: ArgumentHelp(
            "When the device is not plugged in, wait for it instead of failing (or, without --device, instead of "
                + "playing on the virtual output). A node or an id is waited for; an index (#) names a device "
                + "listed now. Ctrl-C gives up."))
    var wait = false

    @Flag(help: "Print JSON lines instead of text.")
    var json = false

    @Option(help: ArgumentHelp(HapticActuators.help, valueName: "actuators"))
    var actuators = HapticActuators.rumble

    @Flag(
        help: ArgumentHelp(
            "Also play on a force-feedback wheel or joystick (a device that runs periodic effects itself, such as a "
                + "USB PID device): its force moves the controls in your hands, so it is never chosen without this "
                + "flag. With it, each event plays as a periodic effect the device runs (sharpness as its period)."))
    var allowForceDevices = false

    /// The started engine for `--device`; without one, the first rumble-capable device, or, when none is
    /// usable, the built-in virtual output (with a note saying so, so `make demo` shows something anywhere).
    /// With `--wait`, a device that is not there yet is waited for.
    func startEngine(
        command: String, options: HapticEngineOptions = HapticEngineOptions(), report: PlayReport
    ) async throws -> HapticEngine {
        // The library's warnings (a pattern's sound file that cannot be played...) reach the user as the command's
        // notes: `note` events with --json, `haptics COMMAND: ...` lines otherwise (they were log lines with a
        // timestamp, and no JSON event).
        var logger = Logger(label: "haptics.\(command)") { _ in ReportLogHandler(report: report) }
        logger.logLevel = .warning
        var options = options
        options.actuators = actuators
        options.allowsForceDevices = allowForceDevices
        let selection = try device?.outputSelection(logger: logger) ?? .device(.firstRumbleDevice)
        let engine = HapticEngine(output: selection, options: options, logger: logger)
        do {
            if wait {
                let waited = try await Self.startWaiting(engine, on: device, report: report)
                noteActuators(of: waited, report: report)
                return waited
            }
            try engine.start()
            noteActuators(of: engine, report: report)
            return engine
        } catch let interrupted as ExitCode {
            // The wait given up (Ctrl-C): the command ends with the signal's status, not a failure to start.
            throw interrupted
        } catch {
            // A trigger locality plays on trigger motors or not at all: it never falls back to the virtual output.
            guard device == nil, !wait, !options.locality.isTrigger else {
                throw Self.startFailure(on: device, locality: options.locality, error)
            }
            report.note("no usable rumble device (\(error)): playing on the built-in virtual output")
            let virtual = HapticEngine(output: .virtual(VirtualOutput()), options: options, logger: logger)
            do { try virtual.start() } catch {
                throw Self.startFailure(on: .virtual, locality: options.locality, error)
            }
            noteActuators(of: virtual, report: report)
            return virtual
        }
    }

    /// Says so when `--actuators hd` was asked for and the engine plays on motors, and why.
    private func noteActuators(of engine: HapticEngine, report: PlayReport) {
        guard actuators == .hd, let capabilities = engine.capabilities, capabilities.actuators != .hd else { return }
        let why = capabilities.actuatorFallback ?? "\(capabilities.name) has no HD actuators"
        report.note("playing on the rumble motors, not the HD actuators: \(why)")
    }

    /// Starts `engine`; when its device is not plugged in, waits until the engine has opened one (its reset). Ctrl-C
    /// (SIGTERM, SIGHUP) gives up: an `interrupted` event, and the exit status a shell reports for the signal (the
    /// signal's default action ended the wait before 6 December, and a process started with it ignored, as `cmd &`
    /// in a script is, waited on).
    private static func startWaiting(
        _ engine: HapticEngine, on device: DeviceSelector?, report: PlayReport
    ) async throws -> HapticEngine {
        // nil: the device is there; a number: the signal that gave up.
        let (arrivals, continuation) = AsyncStream.makeStream(of: Int32?.self)
        engine.resetHandler = { continuation.yield(nil) }
        let signals = TerminationSignals.handle { continuation.yield($0) }
        defer {
            signals.cancel()
            engine.resetHandler = nil
            continuation.finish()
        }
        if try startOrWait(engine) {
            let what = device.map { "\($0.defaultValueDescription)" } ?? "a rumble-capable device"
            report.note("waiting for \(what) to be plugged in (Ctrl-C gives up)")
            var iterator = arrivals.makeAsyncIterator()
            if case .some(.some(let signal)) = await iterator.next() {
                report.event("interrupted")
                engine.stop()
                throw ExitCode(TerminationSignals.status(after: signal))
            }
            report.note("\(engine.capabilities?.name ?? "a device") was plugged in")
        }
        return engine
    }

    /// Starts `engine`; true when it found no device and waits for one.
    private static func startOrWait(_ engine: HapticEngine) throws(HapticEngineError) -> Bool {
        do {
            try engine.start()
            return false
        } catch {
            if error.kind == .noDevice { return true }
            throw error
        }
    }

    private static func startFailure(
        on device: DeviceSelector?, locality: HapticLocality, _ error: any Error
    ) -> CommandFailure {
        let name = device?.defaultValueDescription ?? "the first rumble-capable device"
        // A trigger locality plays on an Xbox Wireless Controller's trigger motors or nowhere: neither the virtual
        // output nor any other pad can stand in, so the advice is another locality or that pad.
        if locality.isTrigger {
            return CommandFailure(
                "cannot play on \(name)", why: "\(error)",
                fix: "Play on the body motors (`--locality all`, `left` or `right`), or name an Xbox Wireless "
                    + "Controller over Bluetooth with `--device` (`haptics emulate xbox-one-bt` is one); "
                    + "`haptics devices` lists the devices and whether you may write them.")
        }
        return CommandFailure(
            "cannot play on \(name)", why: "\(error)",
            fix: "`haptics devices` lists the rumble-capable devices and whether you may write them; "
                + "`--device virtual` plays on the built-in virtual output.")
    }
}

/// How the playing commands time their output on the engine's clock.
enum PlaybackTiming {
    /// Scheduling the first haptic this far ahead gives the engine time to upload before it is due, so it
    /// plays on time rather than late.
    static let leadIn = 0.1
    /// How long after a pattern's end the command waits before stopping the engine: the motors' last
    /// self-expiring update has run out by then.
    static let tail = 0.2
    /// The motor levels of a tap are read this long after it starts: the engine applies a change at its
    /// deadline, and ff-memless (or the virtual model) shows it within one 4 ms tick.
    static let sampleDelay = 0.02

    /// A time on the engine's clock as the JSON lines print it.
    static func seconds(_ value: Double) -> String { String(cFormat: "%.6f", value) }
}

/// How an engine's stop ends a playing command. An unplugged pad or sound device is waited for: the engine resets
/// when it is back. Any other stop is for good (the device refused a write, the engine could not start its
/// thread), and the command ends with status 1 and a line that says so.
enum EngineStop {
    static func isRecoverable(_ reason: HapticEngineStoppedReason) -> Bool {
        reason == .gameControllerDisconnect || reason == .audioSessionInterrupt
    }

    /// What the user reads when the engine stopped for good in the middle of the `command` (`play`, `replay`,
    /// `feedback`): the reason, the device's own words when a player ended on them, and what to try.
    static func failure(
        of command: String, reason: HapticEngineStoppedReason, error: HapticEngineError?
    ) -> CommandFailure {
        let why: String
        let fix: String?
        switch reason {
        case .deviceError:
            why = error?.message ?? "the device refused what the engine needs (an effect slot or an upload)"
            fix = "`haptics probe` shows what the device takes; another program may hold its effect slots."
        case .systemError:
            why = error?.message ?? "the engine could not start its playback thread"
            fix = "The system is out of threads or memory: close something and play again."
        default:
            why = error?.message ?? "the engine stopped on its own"
            fix = nil
        }
        return CommandFailure("the engine stopped the \(command) (\(reason.rawValue))", why: why, fix: fix)
    }
}

/// The stops of an engine that a command narrates (`replay`, `feedback`), watched from before the command
/// schedules anything, so that a stop coming before the narration begins is not missed. Each stop is reported as a
/// `stopped` event.
struct EngineStopWatch: Sendable {
    let engine: HapticEngine
    let command: String
    let report: PlayReport
    private let failures = PlayerFailures()
    private let stops:
        (
            stream: AsyncStream<HapticEngineStoppedReason>,
            continuation: AsyncStream<HapticEngineStoppedReason>.Continuation
        )

    init(_ engine: HapticEngine, command: String, report: PlayReport) {
        self.engine = engine
        self.command = command
        self.report = report
        stops = AsyncStream.makeStream(of: HapticEngineStoppedReason.self)
        engine.stoppedHandler = { [continuation = stops.continuation] reason in
            report.event("stopped", ["reason": reason.rawValue])
            continuation.yield(reason)
        }
    }

    /// Runs `narration` (what the command prints while the engine plays) to its end, or until the engine stops
    /// for good (`EngineStop`), which cancels it; then stops the engine, and throws that stop's failure.
    func narrate(_ narration: @escaping @Sendable () async -> Void) async throws {
        let stops = self.stops
        // Ctrl-C (SIGTERM, SIGHUP) ends the narration as `play` ends: the engine stopped, an `interrupted` event, the
        // signal's exit status (the signal's default action ended the process before 6 December).
        let (interrupts, interrupted) = AsyncStream.makeStream(of: Int32.self)
        let signals = TerminationSignals.handle { interrupted.yield($0) }
        defer { signals.cancel() }
        enum End: Sendable {
            case narrated
            case stopped(HapticEngineStoppedReason)
            case interrupted(Int32)
        }
        let end = await withTaskGroup(of: End?.self) { group in
            group.addTask {
                await narration()
                return .narrated
            }
            group.addTask {
                for await reason in stops.stream where !EngineStop.isRecoverable(reason) { return .stopped(reason) }
                return nil
            }
            group.addTask {
                for await signal in interrupts { return .interrupted(signal) }
                return nil
            }
            let first = await group.next() ?? nil
            stops.continuation.finish()
            interrupted.finish()
            group.cancelAll()
            return first
        }
        engine.stoppedHandler = nil
        engine.stop()
        switch end {
        case .stopped(let reason): throw EngineStop.failure(of: command, reason: reason, error: failures.last)
        case .interrupted(let signal):
            report.event("interrupted")
            throw ExitCode(TerminationSignals.status(after: signal))
        case .narrated, nil: return
        }
    }

    /// The completion handler for the command's players: the error a player ended on is what the engine says of
    /// the failure that stopped it (it comes before the stop), and the stop's message says it (the node, the call,
    /// the errno), as `play`'s does.
    var playerCompletion: @Sendable (HapticEngineError?) -> Void {
        { [failures] error in failures.note(error) }
    }
}

/// Log records of a playing command as its notes (`PlayReport.note`): the message, then its details.
struct ReportLogHandler: LogHandler {
    let report: PlayReport
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .warning

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var details = metadata.merging(event.metadata ?? [:]) { $1 }
        // The error, when there is one, says what went wrong in words: it follows the message, the rest after it.
        let error = details.removeValue(forKey: "error").map { ": \($0)" } ?? ""
        let rest = details.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        report.note("\(event.message)\(error)" + (rest.isEmpty ? "" : " (\(rest))"))
    }
}

/// The last error the players of a command ended on.
final class PlayerFailures: Sendable {
    private let error = Lock<HapticEngineError?>(nil)

    func note(_ error: HapticEngineError?) {
        guard let error else { return }
        self.error.withLock { $0 = error }
    }

    var last: HapticEngineError? { error.withLock { $0 } }
}

extension HapticEngine {
    func sleep(until time: Double) async {
        let remaining = time - currentTime
        if remaining > 0 { try? await Task.sleep(for: .seconds(remaining)) }
    }

    /// What the output does just after `offset` seconds from the start of `plays` (`PlaybackTiming.sampleDelay`),
    /// as `MotorMeter.output` prints it once that moment has come: the motor levels the plays ask for then, and
    /// what the HD actuators played then (nil on motors), both of that moment however late the command woke (until
    /// 7 December the actuators were read as they were at the wake-up, and a tap woken for late read as silence).
    func output(atOffset offset: Double, of plays: PlannedLevels) async -> (text: String, json: [String: String]) {
        let moment = plays.start + offset + PlaybackTiming.sampleDelay
        await sleep(until: moment)
        return MotorMeter.output(
            plays.levels(atOffset: offset + PlaybackTiming.sampleDelay, profile: renderProfile),
            actuatorActivity(atTime: moment))
    }
}

/// The motor levels patterns started at known times ask for, as the engine renders them for its device (its
/// profile) and mixes them (summed, clamped to full): what `replay` and `feedback` print for a moment, the same in
/// every run. (The output read once the command woke depended on how late it woke: a thud's weak motor read 20% in
/// some runs and 32% in others, until 6 December.) Kept and asked in seconds from `start`, never in engine time: a
/// moment 20 ms into a play lands on the pattern's own 20 ms step only when both are added up alike, and engine
/// times of a thousand seconds and more rounded the moment below it on some clock values (the thud read 20% again).
final class PlannedLevels: Sendable {
    /// The engine time the plays' offsets count from.
    let start: Double
    private let plays: [(offset: Double, pattern: HapticPattern)]
    /// The plays rendered by the renderer kept with them, mixed as the engine mixes players (`MotorTimeline.mixed`).
    /// Kept by the whole renderer, its profile with it, not by the profile's name: a left Joy-Con, a right one and
    /// a Pro Controller are all "switch", and render a pattern on different motors.
    private let mix = Lock<(renderer: PatternRenderer, timeline: MotorTimeline)?>(nil)

    /// `plays`: each pattern with the seconds after `start` it starts at (none before it).
    init(start: Double, plays: [(offset: Double, pattern: HapticPattern)]) {
        self.start = start
        self.plays = plays
    }

    /// What the plays ask for `offset` seconds after `start`, rendered with `profile` (again when it is not the one
    /// rendered with last: a device of another kind came back, or a pad of the same name with other motors).
    func levels(atOffset offset: Double, profile: RenderProfile) -> MotorMagnitudes {
        let renderer = PatternRenderer(profile: profile)
        let timeline = mix.withLock { mix in
            if let mix, mix.renderer == renderer { return mix.timeline }
            var rendered: [HapticPattern: MotorTimeline] = [:]
            let timeline = MotorTimeline.mixed(
                plays.map { play in
                    let timeline = rendered[play.pattern] ?? renderer.render(play.pattern)
                    rendered[play.pattern] = timeline
                    return timeline.shifted(by: play.offset)
                })
            mix = (renderer, timeline)
            return timeline
        }
        return timeline.levels(at: offset)
    }
}

/// What a playing command prints: JSON lines, or plain lines with a live line redrawn under them on a terminal.
struct PlayReport: Sendable {
    let command: String
    let json: Bool
    let live: LiveLine

    init(command: String, json: Bool, live: Bool = false) {
        self.command = command
        self.json = json
        self.live = LiveLine(enabled: live && !json)
    }

    /// An event: a JSON line, or `NAME key=value ...`.
    func event(_ name: String, _ fields: [String: String] = [:]) {
        if json {
            Console.printLine(JSONLines.event(name, fields))
        } else {
            live.clear()
            // A value with a hidden character (a line break, an escape sequence: a file's name) is quoted with it
            // escaped, so that an event stays one line and the terminal as it was.
            Console.printLine(
                ([name] + fields.sorted { $0.key < $1.key }.map { "\($0)=\($1.shownInMessage)" }).joined(separator: " ")
            )
        }
    }

    /// Text for the user: in the JSON lines as a `note`, otherwise on standard error.
    func note(_ text: String) {
        if json { event("note", ["message": text]) } else { Console.printError("haptics \(command): \(text)") }
    }

    /// Either a JSON event or a text line, whichever this report prints.
    func emit(_ name: String, _ fields: [String: String], text: @autoclosure () -> String) {
        if json { event(name, fields) } else { Console.printLine(text().escapingHiddenButLineBreaks) }
    }

    func draw(position: Double, length: Double?, levels: MotorMagnitudes, hd: ActuatorActivity? = nil) {
        live.redraw(bars: MotorMeter.widths) {
            Self.line(position: position, length: length, levels: levels, hd: hd, barWidth: $0)
        }
    }

    /// The live line: where the play is, then the motors' (or HD actuators') bars `barWidth` characters wide.
    static func line(
        position: Double, length: Double?, levels: MotorMagnitudes, hd: ActuatorActivity?, barWidth: Int
    ) -> String {
        let progress =
            length.map { String(cFormat: "%6.2f / %.2f s", position, $0) }
            ?? String(cFormat: "%6.2f s (looping)", position)
        let meters =
            hd.map { MotorMeter.hdActuators($0, width: barWidth) } ?? MotorMeter.levels(levels, width: barWidth)
        return "\(progress)  " + meters
    }
}
