// The engine's core: everything an engine knows lives in one `EngineState` value behind one lock, and every
// engine and player call is a method of this type, in the files named EngineCore+Lifecycle, +Recovery, +Players,
// +Pass and +Sound (one file a responsibility). Nothing else touches the state.
//
// Locks, in the only order they are ever taken (an outer one may be held while an inner one is taken, never the
// reverse):
// 1. `pass` serialises playback passes (the timer's, one a start due now runs on the caller's thread, one a
//    manual clock runs inline). It holds no data. Held across one pass: the state lock, planning and the
//    device write; never a handler, never a sleep.
// 2. `soundSync` serialises the sound stream's updates and holds the scheduler revision they were made for. Held
//    across reading the players' sound cues and handing them to `EngineAudio`, which renders a new sound's source
//    under it (but outside its own lock, a leaf that guards its list of sounds); never a device write.
// 3. `state` guards `EngineState`. Held only for reads and small changes of it: never a device or sound call,
//    never a handler, never rendering or planning a whole pattern (those run outside it, on values copied out,
//    and their result is kept only when the state did not change meanwhile), never another of these locks.
// Handlers (completion, stopped, reset, players-finished) run with no lock held, so they may call the engine. A
// stopped or reset handler of a lost or returned device is counted by the state change that decided on it, and
// `stop()` waits for those counted (`deliver`, `waitForHandlers`): none runs once it returns.
import HapticRendering
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging
import Synchronization

final class EngineCore: Sendable {
    let clock: any HapticClock
    let options: HapticEngineOptions
    let source: any OutputSource
    let logger: Logger
    let state: Lock<EngineState>
    /// The state's start gate, read by armed starts without the lock.
    let startGate: StartGate
    /// The state's staged start, fired without the state lock.
    let stagedStart: StagedStart
    /// Serialises playback passes: the timer's, those `wake()` runs inline under a manual clock, and the one a
    /// start due now runs on the caller's thread (`passOnCallersThread`).
    let pass = Lock(())
    /// The patterns' sound, on the monotonic clock's timeline; nil when the engine plays haptics only, or runs
    /// on another clock with no sound output given (a manual clock's time is not the sound device's).
    let audio: EngineAudio?
    /// The audio files registered with the engine (`HapticEngine.registerAudioResource`).
    let audioResources = AudioResources()
    /// Serialises the sound's updates, so that the stream hears a player's changes in the order they happened;
    /// holds the scheduler revision they were last made for (nil: make them whatever the revision).
    let soundSync = Lock<MixRevision?>(nil)
    /// Signalled each time a stopped or reset handler counted in `EngineState.handlerCallsInFlight` returns.
    let handlerReturned = DeadlineWaiter()
    /// Signalled when an idle pass has let the device go (`EngineState.releasingIdleOutput`).
    let idleOutputReleased = DeadlineWaiter()
    /// The latency of the output opened last (`RenderProfile.outputLatency`, of the device's own profile), as a
    /// `Double`'s bits: read without the lock wherever the engine asks what time it is for its motors. Kept while
    /// the output is away (nothing is written then); the next open sets it.
    private let latencyBits = Atomic<UInt64>(0)
    /// Whether the output opened last is planned on its device's frames (`RenderProfile.followsDeviceFrames`):
    /// read without the state's lock on a start's way, where every other output has nothing to do for it.
    private let framesFollowed = Atomic<Bool>(false)

    init(source: any OutputSource, options: HapticEngineOptions, clock: any HapticClock, logger: Logger) {
        self.source = source
        self.options = options
        self.clock = clock
        self.logger = logger
        let playsSound = !options.playsHapticsOnly && (clock is MonotonicClock || options.audioOutputFactory != nil)
        var initial = EngineState(profile: options.renderProfile ?? .genericRumble)
        initial.hapticsMuted = options.playsAudioOnly
        initial.playsSound = playsSound
        startGate = initial.startGate
        stagedStart = initial.stagedStart
        state = Lock(initial)
        if !playsSound {
            audio = nil
        } else {
            audio = EngineAudio(
                configuration: EngineAudioConfiguration(
                    device: options.audioDevice, sampleRate: AudioOutputs.defaultSampleRate,
                    bufferSeconds: options.audioBufferSeconds, resourceDirectories: options.audioResourceDirectories,
                    openOutput: options.audioOutputFactory, onSoundScheduled: options.soundScheduleObserver),
                logger: logger)
        }
        audio?.listen(
            EngineAudio.Listener(
                interrupted: { [weak self] interrupted in self?.audioInterrupted(interrupted) },
                failed: { [weak self] error in self?.audioFailed(error) }))
    }

    // MARK: The motors' time

    /// How long a write on the open output takes to reach its motors; 0 but on a device whose driver holds
    /// changes back (hid-nintendo), and on every stream (HD actuators, a force device's effects), which keeps its
    /// own time.
    var outputLatency: Double { Double(bitPattern: latencyBits.load(ordering: .relaxed)) }

    /// Engine time as the motors see it: the earliest time a write made now is felt at. Starts due now start
    /// then, commands are written when their time is this near, and the timer wakes `outputLatency` before the
    /// times a pass gives. Engine times stay the clock's (a player's sound plays at its start), so where the
    /// latency is 0 this is the clock's now.
    var motorNow: Double { clock.now + outputLatency }

    /// Takes `output`'s latency as the engine's, before the output is installed.
    func adoptLatency(of output: any MotorOutput) {
        let latency = output is any PatternStreamOutput ? 0 : output.capabilities.renderProfile.outputLatency
        latencyBits.store(latency.bitPattern, ordering: .relaxed)
        framesFollowed.store(output.capabilities.renderProfile.followsDeviceFrames, ordering: .relaxed)
    }

    /// Whether the output opened last is planned on its device's frames.
    var followsFrames: Bool { framesFollowed.load(ordering: .relaxed) }

    // MARK: What the engine reports

    /// The profile players are rendered with and the device is planned for: the engine option when set, else
    /// the one chosen from the open output's device, else (no output yet) the generic profile.
    var renderProfile: RenderProfile { state.withLock { $0.profile } }

    var outputCapabilities: OutputCapabilities? { state.withLock { $0.output?.capabilities } }

    var isRunning: Bool { state.withLock { $0.phase == .running } }

    /// `EngineState.summary`, and whether a playback pass is running now (one that stays running is stuck).
    var stateSummary: String {
        let passFree = pass.withLockIfAvailable { _ in true } ?? false
        return state.withLock { $0.summary } + (passFree ? "" : ", a pass running")
    }

    /// What the motors do now: the output's own model when it has one, or the last mix sent.
    var outputLevels: MotorMagnitudes {
        let (output, written) = state.withLock { ($0.output, $0.lastWritten) }
        return output?.currentLevels() ?? written
    }

    /// What the HD actuators a stream drives were last sent, while the engine plays on them.
    var actuatorActivity: ActuatorActivity? { patternStream?.activity }

    /// What they played at `time`, a moment just past or now.
    func actuatorActivity(atTime time: Double) -> ActuatorActivity? { patternStream?.activity(at: time) }

    /// Reports written and underruns on that stream, while the engine plays on it.
    var hdStreamCounts: (reports: Int, underruns: Int)? { patternStream?.streamCounts }

    private var patternStream: (any PatternStreamOutput)? {
        state.withLock { $0.output } as? any PatternStreamOutput
    }

    // MARK: Handlers on their way

    /// Calls a stopped or reset handler that the state change deciding on it counted in
    /// `EngineState.handlerCallsInFlight` (under the same lock, so a stop either came first and the handler is not
    /// called, or waits for it), and counts it out when it returns.
    func deliver(_ handler: () -> Void) {
        HandlerThreads.run(handler)
        state.withLock { $0.handlerCallsInFlight -= 1 }
        handlerReturned.signal()
    }

    /// For a stop: waits until the stopped and reset handlers that began before it have returned, so that none
    /// runs once the stop returns. A stop made from within a callback (a handler or a completion, of any engine)
    /// waits for none.
    func waitForHandlers() {
        guard !HandlerThreads.currentIsInside else { return }
        while state.withLock({ $0.handlerCallsInFlight > 0 }) {
            handlerReturned.wait(untilNanoseconds: MonotonicTime.nanoseconds() + Self.handlerRecheckNanoseconds)
        }
        // Several stops may wait at once, and a signal wakes one: pass it on.
        handlerReturned.signal()
    }

    /// How long a stop waits for a handler's return before it looks again.
    static let handlerRecheckNanoseconds: UInt64 = 10_000_000

    // A handler replaced is let go after the lock (`setCompletionHandler`).
    var stoppedHandler: (@Sendable (HapticEngineStoppedReason) -> Void)? {
        get { state.withLock { $0.handlers.stopped } }
        set {
            let replaced = state.withLock { state in
                defer { state.handlers.stopped = newValue }
                return state.handlers.stopped
            }
            withExtendedLifetime(replaced) {}
        }
    }

    var resetHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.handlers.reset } }
        set {
            let replaced = state.withLock { state in
                defer { state.handlers.reset = newValue }
                return state.handlers.reset
            }
            withExtendedLifetime(replaced) {}
        }
    }

    /// On a running engine, `handler` runs on the engine's thread once no player plays or waits to: at the next
    /// pass when none does now (beside any other handler waiting). On an engine that does not run (stopped, idle,
    /// waiting for its device) no player plays, and it runs at once, on the caller's thread; `.stopEngine` then
    /// stops an engine that is not stopped.
    func notifyWhenPlayersFinished(_ handler: @escaping @Sendable (HapticEngineError?) -> HapticEngineFinishedAction) {
        let running = state.withLock { state -> Bool in
            guard state.phase == .running else { return false }
            state.handlers.playersFinished.append(handler)
            // The next pass with nothing active calls it, whether or not anything played since the last call.
            state.wasActive = true
            return true
        }
        if running { return wake() }
        callPlayersFinished([handler], error: nil) { $0 != .stopped && $0 != .destroyed }
    }

    /// Calls each players-finished handler of `handlers` once, with `error`; when one answers `.stopEngine`, stops
    /// the engine (`notifyWhenFinished`), once, if its phase then is one `stoppable` accepts and, given `run` (the
    /// engine's run when the players finished: `EngineState.run`), the engine is still in that run: no stop, and no
    /// reset, came since.
    func callPlayersFinished(
        _ handlers: [FinishedHandler], error: HapticEngineError?, ofRun run: EngineRun? = nil,
        stoppable: (EnginePhase) -> Bool
    ) {
        let actions = handlers.map { $0(error) }
        guard actions.contains(.stopEngine), state.withLock({ stoppable($0.phase) && (run ?? $0.run) == $0.run })
        else { return }
        stopEverything(reason: .notifyWhenFinished)
        logger.info("haptic engine stopped", metadata: ["reason": "notifyWhenFinished"])
    }

    /// Haptics muted: the mix is planned at gain 0 from now on, so the motors go to rest and stay there while
    /// players (and their sound) play on. Always muted for an audio-only engine.
    var isMutedForHaptics: Bool {
        get { state.withLock { $0.hapticsMuted } }
        set {
            let muted = newValue || options.playsAudioOnly
            let now = motorNow
            let changed = state.withLock { state -> Bool in
                guard state.hapticsMuted != muted else { return false }
                state.hapticsMuted = muted
                state.scheduler.invalidate(at: now)
                state.openings = [:]
                return true
            }
            if changed { wake() }
        }
    }

    /// Sound muted: every sound ends at once and none starts; unmuted, players still playing are heard again
    /// from where they are.
    var isMutedForAudio: Bool {
        get { audio?.isMuted ?? false }
        set {
            guard let audio, audio.isMuted != newValue else { return }
            audio.isMuted = newValue
            syncSounds(force: true)
        }
    }
}
