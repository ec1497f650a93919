// Core Haptics' CHHapticEngine on Linux: bound to one output, started and stopped, with a stopped handler
// (the output stopped without stop(): unplug, device error, idle timeout, destroyed) and a reset handler (the
// output was rebuilt: players must be recreated, patterns survive).
public import AHAP
internal import AHAPFiles
public import HapticRendering
import LinuxInput
public import Logging
#if canImport(FoundationEssentials)
public import FoundationEssentials
#else
public import Foundation
#endif

/// Plays haptic patterns on one output. Usable from any thread or isolation: every method is internally
/// synchronised. Handlers run on an engine thread (the playback thread or the hot-plug monitor's) and may
/// call back into the engine; they should not block.
public final class HapticEngine: Sendable {
    let core: EngineCore

    /// An engine for `output`. Nothing is opened until `start()`. Its timing comes from `clock`: the monotonic
    /// clock wakes a playback thread at each change point; a manual clock (LinuxHapticsTesting) runs the same
    /// work when it is advanced, without a thread.
    public init(
        output: HapticOutputSelection = .device(.firstRumbleDevice), options: HapticEngineOptions = .init(),
        clock: any HapticClock = MonotonicClock(), logger: Logger
    ) {
        // An audio-only engine needs no gamepad: its haptics play, silently, on a virtual output.
        let source = options.playsAudioOnly ? VirtualOutputSource(model: VirtualOutput()) : output.makeSource(options)
        core = EngineCore(source: source, options: options, clock: clock, logger: logger)
    }

    deinit { core.destroy() }

    /// Now, in seconds on the engine's clock: the time line `start(atTime:)` and friends speak.
    public var currentTime: Double { core.clock.now }

    /// Seconds from a write to the change of the output opened last (0 before any), as the engine schedules for
    /// it: 0 on most pads, 45 ms through hid-nintendo, whose driver sends one frame every 25-30 ms
    /// (`RenderProfile.outputLatency`). Times stay what the hand feels: the engine writes each change this far
    /// ahead, and a start asked for sooner than `currentTime` plus this begins then, the earliest the device can
    /// play it. Players meant to keep their spacing are scheduled at least this far ahead.
    public var outputLatency: Double { core.outputLatency }

    /// What the output is and can do; nil while no output is open.
    public var capabilities: OutputCapabilities? { core.outputCapabilities }

    /// The render profile the engine plays with: `HapticEngineOptions.renderProfile` when set, else the one
    /// chosen from the device when the output opened (`RenderProfile.forDevice`), else generic.
    public var renderProfile: RenderProfile { core.renderProfile }

    /// Whether haptics are silenced: players play on (their sound too), the motors rest. Core Haptics'
    /// `isMutedForHaptics`; always true for an engine made with `playsAudioOnly`.
    public var isMutedForHaptics: Bool {
        get { core.isMutedForHaptics }
        set { core.isMutedForHaptics = newValue }
    }

    /// Whether sound is silenced: players' audio events are not heard; unmuted, a pattern still playing is
    /// heard again from where it is. Core Haptics' `isMutedForAudio`.
    public var isMutedForAudio: Bool {
        get { core.isMutedForAudio }
        set { core.isMutedForAudio = newValue }
    }

    /// Whether the engine leaves audio events out (`HapticEngineOptions.playsHapticsOnly`).
    public var playsHapticsOnly: Bool { core.audio == nil }

    /// Whether the engine drives no motors (`HapticEngineOptions.playsAudioOnly`).
    public var playsAudioOnly: Bool { core.options.playsAudioOnly }

    /// The sound output patterns' audio plays on: an ALSA device name, or "null" when there was no sound device;
    /// nil until the first pattern with sound starts, and for an engine that plays haptics only.
    public var audioOutputName: String? { core.audio?.outputName }

    /// Whether the output is open and the engine plays (not stopped, idle, interrupted or destroyed).
    public var isRunning: Bool { core.isRunning }

    /// The engine's state in one line (phase, players, plan, what the device holds), for this package's tests to
    /// say why a play did not happen.
    package var stateSummary: String { core.stateSummary }

    /// What the motors do now: the virtual output's model, or the last mix sent to a device. On HD actuators a
    /// stream drives (voice coils, HD rumble) the motors do nothing: this is the mix the motors would get, and
    /// `actuatorActivity` what the actuators get.
    public var outputLevels: MotorMagnitudes { core.outputLevels }

    /// What the HD actuators a stream drives (voice coils, HD rumble) play now, while the engine plays on them
    /// (`HapticActuators.hd`): on voice coils what was written a queue's length ago (the pad's own queue, or the sound
    /// card's buffer), on HD rumble the last report (written at its time); nil on motors, trigger motors included
    /// (`outputLevels` is what they get).
    public var actuatorActivity: ActuatorActivity? { core.actuatorActivity }

    /// What those actuators played at `time` (on `currentTime`'s clock), asked once it has passed: a moment of the
    /// last quarter second is answered as it was, whenever the caller woke to ask (what plays now is the next
    /// moment's). Nil on motors.
    public func actuatorActivity(atTime time: Double) -> ActuatorActivity? { core.actuatorActivity(atTime: time) }

    /// The HD actuators' stream so far: reports written, and underruns (on the voice coils, a report that found the
    /// pad's queue empty while the one before carried sound); nil on motors. For this package's benchmarks.
    package var hdStreamCounts: (reports: Int, underruns: Int)? { core.hdStreamCounts }

    /// Called when the engine stops without `stop()`: the controller went away, refused what the engine needs,
    /// idled past `autoShutdownDelay`, was told to by a players-finished handler, or the engine was released.
    /// Players are stopped by then. After `gameControllerDisconnect` the engine watches for the controller; a
    /// play after `idleTimeout` or `deviceError` starts it again. Runs on an engine thread; it may call back
    /// into the engine (`start()`, say) but should not block.
    public var stoppedHandler: (@Sendable (HapticEngineStoppedReason) -> Void)? {
        get { core.stoppedHandler }
        set { core.stoppedHandler = newValue }
    }

    /// Called when the engine rebuilt its output: the controller came back (or, with `adoptCompatibleDevice`,
    /// another one arrived; or, for an engine whose `start()` found no device, the first one was plugged in),
    /// was opened and set to rest, and the engine runs again. Every player made before is
    /// invalid (its calls fail with `playerInvalidated`) and every prepared effect is gone: make new players
    /// from the patterns, which stay valid. Runs on an engine thread; it should not block.
    public var resetHandler: (@Sendable () -> Void)? {
        get { core.resetHandler }
        set { core.resetHandler = newValue }
    }

    /// Opens the output and starts the playback thread. Starting a running engine does nothing. With no device
    /// to open it throws `noDevice` and waits for one, as after an unplug: when a device the selection accepts
    /// is plugged in, the engine opens it, runs, and calls `resetHandler` (where an app makes its players, as it
    /// would on GameController's connect notification). `stop()` ends the wait.
    public func start() throws(HapticEngineError) { try core.start() }

    /// Motors off, players stopped, device and slots released, thread ended; `start()` may follow. No
    /// `stoppedHandler` or `resetHandler` runs once it returns: one that began before it (the device lost or back
    /// at that moment) is waited for, unless this call is made from within such a handler, of any engine.
    /// `completion` runs before it returns, on the caller's thread (the engine has no thread left by then), where
    /// Core Haptics calls it later on its own queue.
    public func stop(completion: (@Sendable (HapticEngineError?) -> Void)? = nil) { core.stop(completion: completion) }

    /// Calls `handler` once, when no player is playing or scheduled any more: on the engine's thread, at once if
    /// none is now. On an engine that is not running (stopped, idle, waiting for its device) it is called at once, on
    /// the caller's thread, as Core Haptics calls it at once on a stopped engine; and a handler still waiting when
    /// `stop()` is called is called then. When the players are cut off (the device lost, or failing) a handler
    /// waiting is called then, with the error (Core Haptics passes one when its players stopped on an error).
    /// Several handlers may wait at once: each is called once. Returning `.stopEngine` stops the engine
    /// (`stoppedHandler` hears `notifyWhenFinished` on a running or idle engine; an interrupted one then waits for no
    /// device and is not reset).
    public func notifyWhenPlayersFinished(
        _ handler: @escaping @Sendable (HapticEngineError?) -> HapticEngineFinishedAction
    ) {
        core.notifyWhenPlayersFinished(handler)
    }

    /// A player for `pattern`, rendered by the engine's renderer (its profile and locality).
    public func makePlayer(with pattern: HapticPattern) throws(HapticEngineError) -> any HapticPatternPlayer {
        try makeAdvancedPlayer(with: pattern)
    }

    /// A player for `pattern`; fails with `invalidArgument` for a pattern the AHAP reader would refuse for its
    /// size or its numbers (more entries than `AHAPLimits.default` allows, a time past
    /// `HapticPattern.maximumTime`, NaN or an infinity), which only a pattern built in code can hold.
    public func makeAdvancedPlayer(with pattern: HapticPattern) throws(HapticEngineError)
        -> any HapticAdvancedPatternPlayer
    {
        try makePatternPlayer(pattern, audioFolder: nil)
    }

    /// A player for `pattern`, its audio files looked for in `audioFolder` first when given.
    private func makePatternPlayer(
        _ pattern: HapticPattern, audioFolder: String?
    ) throws(HapticEngineError) -> PatternPlayer {
        if let problem = pattern.boundsDiagnostic() {
            throw HapticEngineError(.invalidArgument, "the pattern cannot be played: \(problem)")
        }
        let (resolved, registered) = try core.audioResources.resolve(pattern)
        let renderer = core.patternRenderer(for: core.renderProfile)
        let audio = core.audio?.audio(for: resolved, nextTo: audioFolder, registered: registered)
        return try core.addPlayer(
            PlayerState(source: PatternSource(pattern: resolved, renderer: renderer, audio: audio)))
    }

    /// Registers the audio file at `url` with the engine and returns its identifier, for `AudioCustom` events
    /// made in code (`HapticEvent(audioResourceID:parameters:relativeTime:duration:)`), as Core Haptics'
    /// `registerAudioResource(_:options:)` does. The file is read and decoded now, once, at the engine's sound
    /// rate: a player made with it afterwards starts without loading anything. `options` say how its events
    /// sound where they do not say themselves. Throws `invalidAudioResource` for a file that cannot be read or
    /// decoded (naming why) and `invalidArgument` for a URL that is not a file's. Registrations last the engine's
    /// life, through stops and resets, until `unregisterAudioResource(_:)`.
    public func registerAudioResource(
        _ url: URL, options: AudioResourceOptions = .init()
    ) throws(HapticEngineError) -> AudioResourceID {
        guard url.isFileURL else {
            throw HapticEngineError(.invalidArgument, "\(url): an audio resource is a file; give a file URL")
        }
        return try core.audioResources.register(
            path: url.path, options: options, sampleRate: core.audio?.configuration.sampleRate)
    }

    /// Forgets the audio resource `resourceID` (its decoded sound is freed once no player holds it), as Core
    /// Haptics' `unregisterAudioResource(_:)` does. Players made with it play it on; a player made afterwards
    /// with a pattern that names it fails with `invalidAudioResource`, as does unregistering it again.
    public func unregisterAudioResource(_ resourceID: AudioResourceID) throws(HapticEngineError) {
        try core.audioResources.unregister(resourceID)
    }

    /// Plays the AHAP file at `url` now, sound and haptics, fire-and-forget (Core Haptics' `playPattern(from:)`):
    /// its audio events' files are looked for next to it first, then in `audioResourceDirectories`. Fails with
    /// `invalidArgument` for a file that does not read as a pattern, naming why. A stopped engine is started
    /// first, as Core Haptics' method starts it (start it ahead for the lowest latency).
    public func playPattern(from url: URL) throws(HapticEngineError) {
        let pattern: HapticPattern
        do {
            pattern = try HapticPattern(contentsOf: url)
        } catch {
            throw HapticEngineError(.invalidArgument, "\(url.path): \(error)")
        }
        if !isRunning { try start() }
        try makePatternPlayer(pattern, audioFolder: url.deletingLastPathComponent().path).start(atTime: 0)
    }

    /// A player for a motor timeline made elsewhere (rendered already, or built by hand). Parameters sent to it
    /// have no pattern to act on and are ignored.
    /// Fails with `invalidArgument` for a timeline longer than `maximumTimelineLength`, and on an engine that plays
    /// on voice coils or HD rumble (`HapticActuators.hd`): a timeline holds two motor levels, not the pattern a
    /// waveform or a band's frequency is made from. The trigger motors play timelines as the rumble motors do.
    public func makeAdvancedPlayer(timeline: MotorTimeline) throws(HapticEngineError) -> any HapticAdvancedPatternPlayer
    {
        guard timeline.endTime <= Self.maximumTimelineLength else {
            throw HapticEngineError(
                .invalidArgument,
                "the timeline ends at \(timeline.endTime) s, later than the \(Self.maximumTimelineLength) s the engine plays"
            )
        }
        if let capabilities, let kind = capabilities.hdKind, kind != .triggerMotors {
            throw HapticEngineError(
                .invalidArgument,
                "the engine plays on \(kind.rawValue) (\(capabilities.hdNode ?? "")): a motor timeline has no "
                    + "frequencies to play there; play a pattern")
        }
        return try core.addPlayer(PlayerState(timeline: timeline))
    }

    /// The longest timeline the engine plays, in seconds: twice `HapticPattern.maximumTime`, beyond what any
    /// pattern within it renders to (its last event's 30 s and release), so that every engine time stays exact.
    public static let maximumTimelineLength = 2 * HapticPattern.maximumTime

    /// The slowest playback rate a player takes (`HapticAdvancedPatternPlayer.playbackRate`): a smaller positive
    /// rate plays at this one.
    public static let minimumPlaybackRate = PlayerState.minimumRate
}
