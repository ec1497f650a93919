// Core Haptics' CHHapticEngine on Linux: bound to one output, started and stopped, with a stopped handler
// (the output stopped without stop(): unplug, device error, idle timeout, destroyed) and a reset handler (the
// output was rebuilt: players must be recreated, patterns survive).
public import AHAP
public import HapticRendering
import LinuxInput
public import Logging

/// Plays haptic patterns on one output. Usable from any thread or isolation: every method is internally
/// synchronised. Handlers run on an engine thread (the playback thread or the hot-plug monitor's) and may
/// call back into the engine; they should not block.
public final class HapticEngine: Sendable {
    let core: EngineCore

    /// An engine for `output`. Nothing is opened until `start()`. With a `ManualClock` the engine runs no
    /// thread: its work runs when the clock is advanced. Any other clock must count `CLOCK_MONOTONIC`
    /// seconds, like `MonotonicClock`, because the playback thread sleeps on that clock.
    public init(
        output: HapticOutputSelection = .device(.firstRumbleDevice), options: HapticEngineOptions = .init(),
        clock: any HapticClock = MonotonicClock(), logger: Logger
    ) {
        let source: any OutputSource
        switch output {
        case .device(let selection):
            source = EvdevOutputSource(
                selection: selection, adoptCompatibleDevice: options.adoptCompatibleDevice,
                monitorSource: options.monitorSource)
        case .virtual(let model):
            source = VirtualOutputSource(model: model)
        case .recording(let recorder):
            source = RecordingOutputSource(recorder: recorder)
        }
        core = EngineCore(source: source, options: options, clock: clock, logger: logger)
    }

    deinit { core.destroy() }

    /// Now, in seconds on the engine's clock: the time line `start(atTime:)` and friends speak.
    public var currentTime: Double { core.clock.now }

    /// What the output is and can do; nil while no output is open.
    public var capabilities: OutputCapabilities? { core.state.withLock { $0.output?.capabilities } }

    /// The render profile the engine plays with: `HapticEngineOptions.renderProfile` when set, else the one
    /// chosen from the device when the output opened (`RenderProfile.forDevice`), else generic.
    public var renderProfile: RenderProfile { core.renderProfile }

    public var isRunning: Bool { core.state.withLock { $0.phase == .running } }

    /// What the motors do now: the virtual output's model, or the last mix sent to a device.
    public var outputLevels: MotorMagnitudes {
        let (output, written) = core.state.withLock { ($0.output, $0.lastWritten) }
        return output?.currentLevels() ?? written
    }

    public var stoppedHandler: (@Sendable (HapticEngineStoppedReason) -> Void)? {
        get { core.state.withLock { $0.handlers.stopped } }
        set { core.state.withLock { $0.handlers.stopped = newValue } }
    }

    public var resetHandler: (@Sendable () -> Void)? {
        get { core.state.withLock { $0.handlers.reset } }
        set { core.state.withLock { $0.handlers.reset = newValue } }
    }

    /// Opens the output and starts the playback thread. Starting a running engine does nothing.
    public func start() throws(HapticEngineError) { try core.start() }

    /// Motors off, players stopped, device and slots released, thread ended; `start()` may follow.
    public func stop(completion: (@Sendable (HapticEngineError?) -> Void)? = nil) { core.stop(completion: completion) }

    /// Calls `handler` once, when no player is playing or scheduled any more.
    public func notifyWhenPlayersFinished(
        _ handler: @escaping @Sendable (HapticEngineError?) -> HapticEngineFinishedAction
    ) {
        core.state.withLock { $0.handlers.playersFinished = handler }
        core.wake()
    }

    /// A player for `pattern`, rendered by the engine's renderer (its profile and locality).
    public func makePlayer(with pattern: HapticPattern) throws(HapticEngineError) -> any HapticPatternPlayer {
        try makeAdvancedPlayer(with: pattern)
    }

    public func makeAdvancedPlayer(with pattern: HapticPattern) throws(HapticEngineError)
        -> any AdvancedHapticPatternPlayer
    {
        let renderer = PatternRenderer(profile: core.renderProfile, locality: core.options.locality)
        return try add(PlayerState(source: PatternSource(pattern: pattern, renderer: renderer)))
    }

    /// A player for a motor timeline made elsewhere (rendered already, or built by hand). Parameters sent to it
    /// have no pattern to act on and are ignored.
    public func makeAdvancedPlayer(timeline: MotorTimeline) throws(HapticEngineError) -> any AdvancedHapticPatternPlayer
    {
        try add(PlayerState(timeline: timeline))
    }

    private func add(_ player: PlayerState) throws(HapticEngineError) -> any AdvancedHapticPatternPlayer {
        let (id, generation) = try core.state.withLock { (state) throws(HapticEngineError) -> (Int, Int) in
            if state.phase == .destroyed { throw HapticEngineError(.notRunning, "the engine was destroyed") }
            return (state.scheduler.add(player), state.resetGeneration)
        }
        return PatternPlayer(core: core, id: id, generation: generation)
    }
}
