import AHAPFiles
import ArgumentParser
import Dispatch
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HapticRendering
import LinuxAudio
import LinuxHaptics
import AppHaptics
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

struct PlayCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "play",
        abstract: "Play an AHAP pattern on a gamepad (or the built-in virtual output) and show the motors live.",
        discussion: """
            FILE is a path to an .ahap file; NAME plays NAME.ahap in HAPTICS_DIR when it is set, else in the first \
            Haptics folder found (./Haptics, the installed copy, the repository's: `haptics --help`). Without --device it plays on the first \
            rumble-capable device, or, when none is usable, on the built-in virtual output, which shows what the \
            motors would do (a trigger locality never falls back: it plays on trigger motors or fails). When the \
            device is unplugged it says so, waits for it to come back and continues. Ctrl-C stops the motors and \
            releases the device. --json prints engine events as JSON lines: note (what the user should know: a \
            fall-back to the virtual output, the motors or the silent sound output, waiting for a device), started, \
            stopped (with a reason), reset, finished, interrupted, and late (a level the engine's thread slept \
            through, written when it woke; what follows is planned again from that write). A pattern's audio events \
            (AudioCustom, AudioContinuous) play with its haptics on the default sound device (or --audio-device), \
            starting together; their files are looked for next to the pattern, then in Haptics/. The started event \
            then names the sound output (audio=); without a sound device they play on a silent null output. \
            --no-audio leaves them out.
            """)

    @Argument(help: "An AHAP file, or the NAME of a pattern in Haptics/.")
    var pattern: String

    @Option(parsing: .unconditional, help: "Play the pattern N times; 0 loops until interrupted.")
    var loop = 1

    @Option(parsing: .unconditional, help: "Playback rate (1 = as written, 2 = twice as fast).")
    var rate = 1.0

    @Option(parsing: .unconditional, help: "Overall strength, 0...1.")
    var gain = 1.0

    @Option(help: ArgumentHelp(HapticLocality.help))
    var locality = HapticLocality.all

    @Option(help: "The render profile: how transients and commands are shaped; by default the device driver's.")
    var profile: RenderProfile?

    @Flag(help: "Leave the pattern's audio events out: haptics only, no sound device opened.")
    var noAudio = false

    @Option(
        help: ArgumentHelp(
            "The ALSA device the pattern's audio events play on (`haptics audio devices` lists them; not with "
                + "--no-audio).",
            valueName: "name"))
    var audioDevice = "default"

    @OptionGroup var output: PlaybackOptions

    func validate() throws {
        if noAudio && audioDevice != "default" {
            throw ValidationError("--no-audio and --audio-device contradict each other: pass one of them")
        }
        if loop < 0 { throw ValidationError("--loop must be 0 (forever) or more") }
        if !(rate >= HapticEngine.minimumPlaybackRate && rate.isFinite) {
            throw ValidationError(
                "--rate must be a number of at least \(HapticEngine.minimumPlaybackRate), the engine's slowest rate")
        }
        if !(0...1).contains(gain) { throw ValidationError("--gain must be within 0...1") }
    }

    func run() async throws {
        let url = try PatternArgument.locate(pattern, command: "play")
        let loaded: HapticPattern
        do {
            loaded = try HapticPattern(contentsOf: url)
        } catch {
            throw CommandFailure(
                "cannot load \(url.path)", why: "\(error)", fix: PatternArgument.loadFix(for: error, path: url.path))
        }
        var options = HapticEngineOptions()
        options.gain = gain
        options.locality = locality
        options.renderProfile = profile
        options.playsHapticsOnly = noAudio
        options.audioDevice = audioDevice
        if !noAudio, audioDevice != "default", loaded.events.contains(where: { !$0.isHaptic }) {
            // A device named on purpose must exist: the engine would play on the null output instead.
            var quiet = Logger(label: "haptics.play")
            quiet.logLevel = .error
            try SoundDevice.open(audioDevice, logger: quiet, fix: " --no-audio plays the haptics alone.").close()
        }
        // AudioCustom files: next to the pattern, then in the Haptics/ folder.
        options.audioResourceDirectories =
            [url.deletingLastPathComponent().path]
            + (HapticResourceDirectory.locate().map { [$0.directory.path] } ?? [])
        let report = PlayReport(command: "play", json: output.json, live: Console.outputIsTerminal)
        if audioDevice != "default", !loaded.events.contains(where: { !$0.isHaptic }) {
            report.note("--audio-device \(audioDevice) is not used: the pattern has no audio events")
        }
        // The play's signals, made before the engine: its playback thread tells of a level it slept through whole,
        // written late (the `late` event), for the main task to print in order with the others.
        let signals = AsyncStream.makeStream(of: PlaySession.Signal.self)
        options.playbackObserver = { [continuation = signals.continuation] sample in
            if sample.wokeLate { continuation.yield(.late(sample)) }
        }
        let engine = try await output.startEngine(command: "play", options: options, report: report)
        let session = PlaySession(
            engine: engine, pattern: loaded, loops: loop, rate: rate, report: report, signals: signals)
        try await session.run(name: url.lastPathComponent)
    }
}

/// One play: the player, its looping, and the engine events it reacts to.
struct PlaySession {
    enum Signal: Sendable {
        case finished
        /// The player ended on an error: what the engine says of the failure that stops it (it comes before the
        /// `stopped` signal).
        case failed(HapticEngineError)
        case stopped(HapticEngineStoppedReason)
        case reset
        /// Ctrl-C, SIGTERM or SIGHUP: the signal's number.
        case interrupted(Int32)
        /// A level the playback thread slept through whole, written when it woke (`PlaybackSample.wokeLate`).
        case late(PlaybackSample)
    }

    let engine: HapticEngine
    let pattern: HapticPattern
    let loops: Int
    let rate: Double
    let report: PlayReport
    /// The stream the engine's handlers, the player's completion and the playback observer feed.
    let signals: (stream: AsyncStream<Signal>, continuation: AsyncStream<Signal>.Continuation)

    /// How the output plays the pattern: as periodic effects the device runs itself (a PID device), as a stream to
    /// its HD actuators, or as motor levels the engine sends.
    static func path(_ capabilities: OutputCapabilities?) -> String {
        if capabilities?.playsPeriodicEffects == true { return "periodic-effects" }
        // Trigger motors play motor levels, through the pad's hidraw node: no stream of samples or bands.
        guard capabilities?.actuators == .hd, capabilities?.hdKind != .triggerMotors else { return "motor-levels" }
        return "hd-stream"
    }

    /// How often the live view redraws, in seconds (display only: the engine itself never polls).
    static let redrawInterval = 0.05

    func run(name: String) async throws {
        let continuation = signals.continuation
        engine.stoppedHandler = { continuation.yield(.stopped($0)) }
        engine.resetHandler = { continuation.yield(.reset) }
        let interrupts = TerminationSignals.handle { continuation.yield(.interrupted($0)) }
        defer { interrupts.cancel() }

        // The pattern's length as the engine plays it: its haptics, or its sound when that lasts longer.
        let first = try engine.makeAdvancedPlayer(with: pattern)
        let loopLength = first.duration
        let total: Double? = loops == 0 ? nil : loopLength * Double(loops)
        let progress = PlayPosition(start: engine.currentTime, rate: rate)
        // Read before the first write, which may stop the engine (a device that refuses it) and take them away.
        let capabilities = engine.capabilities
        var player = try begin(first, from: 0, total: total, loopLength: loopLength, completion: continuation)
        var started = [
            "pattern": name, "output": capabilities?.name ?? "?", "profile": engine.renderProfile.name,
            "duration": String(cFormat: "%.3f", loopLength),
            "actuators": capabilities?.actuators.rawValue ?? HapticActuators.rumble.rawValue,
            "path": Self.path(capabilities),
        ]
        if let node = capabilities?.hdNode, let kind = capabilities?.hdKind {
            started[kind.rawValue] = node
        }
        // The sound output, once a pattern with sound opened one.
        if let audio = engine.audioOutputName { started["audio"] = audio }
        report.event("started", started)
        if engine.audioOutputName == "null" {
            report.note("no sound device: the pattern's audio events play on the silent null output")
        }
        // Only a terminal shows the live line; elsewhere nothing wakes the process while the pattern plays.
        let redraw = Task { [engine, report] in
            while report.live.enabled && !Task.isCancelled {
                let position = progress.position(at: engine.currentTime, running: engine.isRunning)
                report.draw(
                    position: position, length: total, levels: engine.outputLevels,
                    hd: engine.actuatorActivity)
                try? await Task.sleep(for: .seconds(Self.redrawInterval))
            }
        }
        defer { redraw.cancel() }
        var failure: HapticEngineError?
        for await signal in signals.stream {
            switch signal {
            case .late(let sample):
                // Engine time is the monotonic clock's, in seconds; the levels those the engine wrote.
                report.event(
                    "late",
                    [
                        "due": String(cFormat: "%.6f", sample.deadline),
                        "written": String(cFormat: "%.6f", sample.sent),
                        "ms": String(cFormat: "%.1f", (sample.sent - sample.deadline) * 1000),
                        "strong": String(cFormat: "%.3f", sample.mix.strong),
                        "weak": String(cFormat: "%.3f", sample.mix.weak),
                    ])
            case .finished where loops == 0:
                // Only a pattern that lasts 0 s ends while it loops (the engine has nothing to repeat). `--loop 0`
                // still holds until interrupted, as a script that plays for as long as it runs expects.
                report.note("the pattern lasts 0 s: nothing plays; --loop 0 waits until interrupted (Ctrl-C)")
            case .finished:
                report.event("finished")
                engine.stop()
                return
            case .failed(let error):
                failure = error
            case .interrupted(let signal):
                report.event("interrupted")
                engine.stop()
                throw ExitCode(TerminationSignals.status(after: signal))
            case .stopped(let reason):
                progress.pause(at: engine.currentTime)
                report.event("stopped", ["reason": reason.rawValue])
                guard EngineStop.isRecoverable(reason) else {
                    engine.stop()
                    throw EngineStop.failure(of: "play", reason: reason, error: failure)
                }
                failure = nil
                let what = reason == .audioSessionInterrupt ? "the sound device" : "the device"
                report.note("\(what) went away: waiting for it to come back (Ctrl-C to quit)")
            case .reset:
                report.event("reset", ["profile": engine.renderProfile.name])
                progress.resume(at: engine.currentTime)
                player = try begin(
                    engine.makeAdvancedPlayer(with: pattern),
                    from: progress.played, total: total, loopLength: loopLength, completion: continuation)
            }
        }
        _ = player
    }

    /// Starts `player` (new, for the pattern) on what is left from `played` seconds of pattern time on.
    private func begin(
        _ player: any HapticAdvancedPatternPlayer, from played: Double, total: Double?, loopLength: Double,
        completion: AsyncStream<Signal>.Continuation
    ) throws -> any HapticAdvancedPatternPlayer {
        player.playbackRate = rate
        player.completionHandler = { error in completion.yield(error.map(Signal.failed) ?? .finished) }
        if loops != 1 { player.loopEnabled = true }
        if loopLength > 0 { try player.seek(toOffset: played.truncatingRemainder(dividingBy: loopLength)) }
        try player.start(atTime: 0)
        if let total, loops != 1 {
            try player.stop(atTime: engine.currentTime + max(total - played, 0) / rate)
        }
        return player
    }
}

/// Pattern time played so far, across unplugs: what a reset continues from.
final class PlayPosition: Sendable {
    private struct State {
        var played = 0.0
        var startedAt: Double
        var running = true
    }

    private let state: Lock<State>
    private let rate: Double

    init(start: Double, rate: Double) {
        state = Lock(State(startedAt: start))
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
