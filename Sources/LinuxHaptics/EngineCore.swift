// The engine: its state in one Lock that only this type touches, and the intents the engine and its players
// ask of it (start, stop, add a player, change a player, trigger a prepared pulse, run a playback pass).
// Device I/O and handlers run outside the lock, so a handler may call back into the engine from its thread.
import HapticRendering
import LinuxAudio
import LinuxInput
import Logging

final class EngineCore: Sendable {
    let clock: any HapticClock
    let options: HapticEngineOptions
    private let source: any OutputSource
    let logger: Logger
    private let state: Lock<EngineState>
    /// Serialises playback passes: the timer's, those `wake()` runs inline under a manual clock, and the one a
    /// start due now runs on the caller's thread (`passOnCallersThread`).
    private let pass = Lock(())
    /// The patterns' sound, on the monotonic clock's timeline; nil when the engine plays haptics only, or runs
    /// on another clock with no sound output given (a manual clock's time is not the sound device's).
    let audio: EngineAudio?
    /// Serialises the sound's updates, so that the stream hears a player's changes in the order they happened;
    /// holds the scheduler revision they were last made for (nil: make them whatever the revision).
    private let soundSync = Lock<Int?>(nil)
    private let hapticsMuted = Lock(false)

    init(source: any OutputSource, options: HapticEngineOptions, clock: any HapticClock, logger: Logger) {
        self.source = source
        self.options = options
        self.clock = clock
        self.logger = logger
        state = Lock(EngineState(profile: options.renderProfile ?? .genericRumble))
        hapticsMuted.withLock { $0 = options.playsAudioOnly }
        if options.playsHapticsOnly || (!(clock is MonotonicClock) && options.audioOutputFactory == nil) {
            audio = nil
        } else {
            audio = EngineAudio(
                configuration: EngineAudioConfiguration(
                    device: options.audioDevice, sampleRate: AudioOutputs.defaultSampleRate,
                    bufferSeconds: options.audioBufferSeconds, resourceDirectories: options.audioResourceDirectories,
                    openOutput: options.audioOutputFactory, onSoundScheduled: options.soundScheduleObserver),
                logger: logger)
        }
    }

    // MARK: What the engine reports

    /// The profile players are rendered with and the device is planned for: the engine option when set, else
    /// the one chosen from the open output's device, else (no output yet) the generic profile.
    var renderProfile: RenderProfile { state.withLock { $0.profile } }

    var outputCapabilities: OutputCapabilities? { state.withLock { $0.output?.capabilities } }

    var isRunning: Bool { state.withLock { $0.phase == .running } }

    /// What the motors do now: the output's own model when it has one, or the last mix sent.
    var outputLevels: MotorMagnitudes {
        let (output, written) = state.withLock { ($0.output, $0.lastWritten) }
        return output?.currentLevels() ?? written
    }

    var stoppedHandler: (@Sendable (HapticEngineStoppedReason) -> Void)? {
        get { state.withLock { $0.handlers.stopped } }
        set { state.withLock { $0.handlers.stopped = newValue } }
    }

    var resetHandler: (@Sendable () -> Void)? {
        get { state.withLock { $0.handlers.reset } }
        set { state.withLock { $0.handlers.reset = newValue } }
    }

    func notifyWhenPlayersFinished(_ handler: @escaping @Sendable (HapticEngineError?) -> HapticEngineFinishedAction) {
        state.withLock { $0.handlers.playersFinished = handler }
        wake()
    }

    /// The planner for a profile, with the engine's gain on top of the profile's (none while haptics are muted).
    func planner(for profile: RenderProfile) -> DeviceCommandPlanner {
        let gain = hapticsMuted.withLock { $0 } ? 0 : options.gain
        return DeviceCommandPlanner(profile: profile.withGain(profile.gain * gain))
    }

    /// Haptics muted: the mix is planned at gain 0 from now on, so the motors go to rest and stay there while
    /// players (and their sound) play on. Always muted for an audio-only engine.
    var isMutedForHaptics: Bool {
        get { hapticsMuted.withLock { $0 } }
        set {
            let muted = newValue || options.playsAudioOnly
            guard
                hapticsMuted.withLock({ held in
                    defer { held = muted }
                    return held != muted
                })
            else { return }
            let now = clock.now
            state.withLock { state in
                state.scheduler.invalidate(at: now)
                state.openings = [:]
            }
            wake()
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

    // MARK: Sound

    /// Brings the sound stream in line with the players: called after anything that may change what a player
    /// plays (a command queued or applied, a seek, controls) and after each pass. Every such change bumps the
    /// scheduler's revision, so a pass that changed nothing costs one comparison; `force` makes the sounds again
    /// whatever the revision (the mute changed).
    func syncSounds(force: Bool = false) {
        guard let audio else { return }
        soundSync.withLock { synced in
            let now = clock.now
            let taken = state.withLock { state -> [Int: EngineAudio.PlayerSound]? in
                let revision = state.scheduler.revision
                if !force, synced == revision { return nil }
                synced = revision
                guard state.phase == .running else { return [:] }
                var players: [Int: EngineAudio.PlayerSound] = [:]
                for (id, player) in state.scheduler.players {
                    guard let source = player.source, source.audio != nil else { continue }
                    players[id] = EngineAudio.PlayerSound(
                        cues: player.soundCues(), source: source, controls: player.controls)
                }
                return players
            }
            if let taken { audio.sync(taken, now: now, core: self) }
        }
    }

    /// The sound device went away (true) or came back (false). Going away interrupts the engine as an unplugged
    /// pad does (`audioSessionInterrupt`); its return resets it.
    func audioInterrupted(_ interrupted: Bool) {
        if interrupted {
            let generation = state.withLock { $0.outputGeneration }
            outputFailed(
                OutputFailure(.deviceGone, "the sound device went away"), generation: generation,
                reason: .audioSessionInterrupt)
        } else {
            reattach(after: .audioSessionInterrupt)
        }
    }

    /// The sound stream ended on an error other than its device going away: the haptics play on; the sounds
    /// playing are lost, and the next sound opens the output again.
    func audioFailed(_ error: AudioDeviceError) {
        logger.warning(
            "the engine's sound output failed; its sounds stop, the haptics play on", metadata: ["error": "\(error)"])
        audio?.close()
    }

    // MARK: Lifecycle

    func start() throws(HapticEngineError) {
        switch state.withLock({ $0.phase }) {
        case .running: return
        case .destroyed: throw HapticEngineError(.notRunning, "the engine was destroyed")
        default: break
        }
        let output: any MotorOutput
        do throws(OutputFailure) {
            output = try source.open(clock: clock, logger: logger)
        } catch {
            if error.kind == .notFound || error.kind == .deviceGone { waitForDevice() }
            throw HapticEngineError(error)
        }
        let now = clock.now
        let installed = state.withLock { state -> Bool in
            guard state.phase != .running, state.phase != .destroyed else { return false }
            state.install(output, profile: options.renderProfile ?? output.capabilities.renderProfile, now: now)
            return true
        }
        guard installed else {
            output.close()
            return
        }
        startWatchIfNeeded()
        do { try startTimerIfNeeded() } catch {
            stopEverything(reason: .systemError)
            throw error
        }
        logger.info(
            "haptic engine started",
            metadata: ["output": "\(output.capabilities.name)", "profile": "\(renderProfile.name)"])
        wake()
    }

    /// No device to open: the engine waits for one, as it does after an unplug. When one appears it opens it
    /// and tells the reset handler.
    private func waitForDevice() {
        let waiting = state.withLock { state -> Bool in
            guard state.phase != .running, state.phase != .destroyed else { return false }
            state.phase = .interrupted(.gameControllerDisconnect)
            return true
        }
        if waiting { startWatchIfNeeded() }
    }

    private func startWatchIfNeeded() {
        guard state.withLock({ $0.watch == nil }) else { return }
        let watch = source.watch(logger: logger) { [weak self] presence in self?.presenceChanged(presence) }
        let extra = state.withLock { state -> (any OutputWatch)? in
            if state.watch != nil || state.phase == .destroyed { return watch }
            state.watch = watch
            return nil
        }
        extra?.cancel()
    }

    private func startTimerIfNeeded() throws(HapticEngineError) {
        guard state.withLock({ $0.timer == nil }) else { return }
        let timer = try clock.makeTimer { self.runPass() }
        state.withLock { $0.timer = timer }
    }

    func wake() { state.withLock { $0.timer }?.wake() }

    /// `stop()`: motors off, device released, players stopped; the engine may be started again.
    func stop(completion: CompletionHandler?) {
        stopEverything(reason: nil)
        logger.info("haptic engine stopped")
        completion?(nil)
    }

    /// The engine object was released: stop, and tell the stopped handler why.
    func destroy() { stopEverything(reason: .engineDestroyed, final: true) }

    private func stopEverything(reason: HapticEngineStoppedReason?, final: Bool = false) {
        let (output, watch, timer, completions, handler, deferred) = state.withLock { state in
            let wasRunning = state.phase == .running
            state.phase = final ? .destroyed : .stopped
            let cutOff = state.activeCompletions
            state.scheduler.haltAll()
            defer {
                state.output = nil
                state.watch = nil
                state.timer = nil
                state.completions = [:]
                state.prepared = [:]
                state.deferredCallbacks = []
            }
            let handler = (reason != nil && wasRunning) ? state.handlers.stopped : nil
            return (state.output, state.watch, state.timer, cutOff, handler, state.deferredCallbacks)
        }
        watch?.cancel()
        timer?.cancel()
        audio?.close()
        if let output {
            try? output.apply(.off)
            output.close()
        }
        // What a pass on a caller's thread left for the timer, which is gone now: a player that finished there
        // still hears of it.
        for callback in deferred { callback() }
        for completion in completions { completion(HapticEngineError(.notRunning, "the engine stopped")) }
        if let reason { handler?(reason) }
    }

    /// For a play: an engine that shut itself down (idle) or lost its output starts again; a stopped one
    /// must be started by its owner.
    func ensureRunning() throws(HapticEngineError) {
        switch state.withLock({ $0.phase }) {
        case .running: return
        case .stopped: throw HapticEngineError(.notRunning, "the engine is stopped: call start() first")
        case .destroyed: throw HapticEngineError(.notRunning, "the engine was destroyed")
        case .idle, .interrupted: try start()
        }
    }

    // MARK: Failures and hot-plug

    /// An output call failed: a gone device interrupts with `gameControllerDisconnect`, anything else with
    /// `deviceError`; the output is closed at once so no descriptor or slot outlives the failure.
    func outputFailed(_ failure: OutputFailure, generation: Int, reason given: HapticEngineStoppedReason? = nil) {
        if failure.kind == .closed { return }
        let reason: HapticEngineStoppedReason =
            given ?? (failure.kind == .deviceGone ? .gameControllerDisconnect : .deviceError)
        let taken = state.withLock { state -> (any MotorOutput, EngineHandlers, [CompletionHandler])? in
            guard state.phase == .running, state.outputGeneration == generation, let output = state.output else {
                return nil
            }
            state.phase = .interrupted(reason)
            state.output = nil
            let cutOff = state.activeCompletions
            state.scheduler.haltAll()
            state.lastWritten = .off
            state.prepared = [:]
            defer { state.completions = [:] }
            return (output, state.handlers, cutOff)
        }
        guard let (output, handlers, completions) = taken else { return }
        output.close()
        audio?.stopAll()
        logger.info("haptic output stopped", metadata: ["reason": "\(reason.rawValue)", "error": "\(failure)"])
        let error = HapticEngineError(reason == .deviceError ? .deviceError : .noDevice, failure.message)
        for completion in completions { completion(error) }
        handlers.stopped?(reason)
    }

    private func presenceChanged(_ presence: OutputPresence) {
        switch presence {
        case .removed:
            let generation = state.withLock { $0.outputGeneration }
            outputFailed(OutputFailure(.deviceGone, "the hot-plug monitor saw the device go"), generation: generation)
        case .appeared:
            reattach(after: .gameControllerDisconnect)
        }
    }

    /// The device came back (or a compatible one appeared): open it, send neutral, forget every old effect
    /// and player, and tell the reset handler.
    /// The cause of an interruption is gone (`reason`: the pad back, or the sound device).
    private func reattach(after reason: HapticEngineStoppedReason) {
        guard state.withLock({ $0.phase == .interrupted(reason) }) else { return }
        let output: any MotorOutput
        do throws(OutputFailure) {
            output = try openAppeared(while: reason)
        } catch {
            logger.info("the device appeared but could not be re-opened", metadata: ["error": "\(error)"])
            // The sound came back but the pad did not: wait for the pad, as after an unplug.
            if reason == .audioSessionInterrupt {
                let waiting = state.withLock { state -> Bool in
                    guard state.phase == .interrupted(reason) else { return false }
                    state.phase = .interrupted(.gameControllerDisconnect)
                    return true
                }
                if waiting { startWatchIfNeeded() }
            }
            return
        }
        let now = clock.now
        let handlers = state.withLock { state -> EngineHandlers? in
            guard state.phase == .interrupted(reason) else { return nil }
            state.install(output, profile: options.renderProfile ?? output.capabilities.renderProfile, now: now)
            state.resetGeneration += 1
            state.scheduler.forgetPlayers()
            state.completions = [:]
            return state.handlers
        }
        guard let handlers else {
            output.close()
            return
        }
        do { try startTimerIfNeeded() } catch {
            stopEverything(reason: .systemError)
            return
        }
        logger.info("haptic output reset", metadata: ["output": "\(output.capabilities.name)"])
        wake()
        handlers.reset?()
    }

    /// Opens the device that appeared and sends neutral. A device just announced may not take uploads yet: uinput
    /// answers `ENODEV` until its creator's `UI_DEV_CREATE` returns, which is after the kernel announced the node. So
    /// a `deviceGone` failure is tried again after each of `ReattachRetry.delays` (on the watch's thread, which
    /// hears nothing else meanwhile) while the engine still waits for this device; any other failure, or the
    /// last, is thrown.
    private func openAppeared(while reason: HapticEngineStoppedReason) throws(OutputFailure) -> any MotorOutput {
        var delays = ReattachRetry.delays[...]
        while true {
            do throws(OutputFailure) {
                let output = try source.open(clock: clock, logger: logger)
                do throws(OutputFailure) {
                    try output.sendNeutral()
                } catch {
                    output.close()
                    throw error
                }
                return output
            } catch {
                guard error.kind == .deviceGone, let delay = delays.popFirst(),
                    state.withLock({ $0.phase == .interrupted(reason) })
                else { throw error }
                logger.debug(
                    "the device that appeared is not ready; trying again",
                    metadata: ["error": "\(error)", "after ms": "\(delay / 1_000_000)"])
                Sys.sleep(nanoseconds: delay)
            }
        }
    }

    // MARK: Players

    /// Adds a player; it is valid until the next reset.
    func addPlayer(_ player: PlayerState) throws(HapticEngineError) -> PatternPlayer {
        let (id, generation) = try state.withLock { (state) throws(HapticEngineError) -> (Int, Int) in
            if state.phase == .destroyed { throw HapticEngineError(.notRunning, "the engine was destroyed") }
            return (state.scheduler.add(player), state.resetGeneration)
        }
        planOpening(of: id)
        return PatternPlayer(core: self, id: id, generation: generation)
    }

    /// Runs `body` on a player's state, failing if a reset made the player stale. Anything but a read
    /// (`changesMix`) may change the mix: the timer plans again from now.
    func updatePlayer<T>(
        _ id: Int, generation: Int, changesMix: Bool, _ body: (inout PlayerState, Double) -> T
    ) throws(HapticEngineError) -> T {
        let result = try changePlayer(id, generation: generation, changesMix: changesMix, body)
        if changesMix {
            wake()
            syncSounds()
        }
        return result
    }

    /// `updatePlayer` without waking the timer.
    private func changePlayer<T>(
        _ id: Int, generation: Int, changesMix: Bool, _ body: (inout PlayerState, Double) -> T
    ) throws(HapticEngineError) -> T {
        let now = clock.now
        return try state.withLock { (state) throws(HapticEngineError) -> T in
            // Moved out of the dictionary rather than copied, so that a change does not copy its queue.
            guard state.resetGeneration == generation, var player = state.scheduler.players.removeValue(forKey: id)
            else { throw EngineState.stalePlayer }
            defer {
                state.scheduler.players[id] = player
                if changesMix {
                    state.scheduler.invalidate(at: now)
                    state.openings[id] = nil
                }
            }
            return body(&player, now)
        }
    }

    /// Starts a player at `time` (engine time; now if past). A player with a prepared pulse, started now from
    /// the top, takes the fast path: one write on the caller's thread, the scheduler only tracking its end. Any
    /// other start due now has its first command written on the caller's thread too (its planned opening before
    /// any planning, when that is what the pass would send); a later one wakes the timer.
    /// The common case, a running engine and a player without sound, takes one lock before that write.
    func startPlayer(_ id: Int, generation: Int, at time: Double) throws(HapticEngineError) {
        let now = clock.now
        let requested = time.isFinite ? max(time, now) : now
        let quick = try state.withLock { (state) throws(HapticEngineError) -> StartDecision? in
            guard state.phase == .running, audio == nil || !state.playerHasSound(id) else { return nil }
            return try state.decideStart(of: id, generation: generation, at: requested, now: now)
        }
        if let quick { return try carryOut(quick, id: id, generation: generation, now: now) }
        try ensureRunning()
        // A player with sound starts no sooner than its sound can be heard from its first frame: the rumble waits
        // for the sound output's latency, so that both begin together.
        let soundLead = hasSound(id) ? audio?.lead(core: self) : nil
        let later = clock.now
        let start = max(requested, soundLead.map { later + $0 } ?? later)
        defer { if soundLead != nil { syncSounds() } }
        let decision = try state.withLock { (state) throws(HapticEngineError) in
            try state.decideStart(of: id, generation: generation, at: start, now: later)
        }
        try carryOut(decision, id: id, generation: generation, now: later)
    }

    /// Triggers the prepared pulse `decideStart` chose (queueing the start for the mix if the trigger fails), or
    /// runs a pass on the caller's thread for a start queued now; a later start only wakes the timer.
    private func carryOut(_ decision: StartDecision, id: Int, generation: Int, now: Double)
        throws(HapticEngineError)
    {
        switch decision {
        case .trigger(let prepared):
            if try triggerPrepared(prepared, id: id, generation: generation, at: now) { return }
            let now = clock.now
            try state.withLock { (state) throws(HapticEngineError) in
                try state.requirePlayer(id, generation: generation)
                state.queueStart(id, at: now, now: now)
            }
            passOnCallersThread()
        case .queued(let start):
            guard start <= now else { return wake() }
            passOnCallersThread(opening: (id, start))
        }
        planOpening(of: id)
    }

    /// Whether player `id` has sound to play.
    private func hasSound(_ id: Int) -> Bool {
        audio != nil && state.withLock { $0.playerHasSound(id) }
    }

    /// Plans player `id`'s opening for the open output's profile unless it has a current one; outside the
    /// lock (a long pattern takes a while to plan), kept only if the player's timeline did not change meanwhile.
    private func planOpening(of id: Int) {
        let wanted = state.withLock { state -> (MotorTimeline, RenderProfile, Int)? in
            guard state.openings[id]?.outputGeneration != state.outputGeneration,
                let player = state.scheduler.players[id]
            else { return nil }
            return (player.timeline, state.profile, state.outputGeneration)
        }
        guard let (timeline, profile, generation) = wanted else { return }
        let levels = PlaybackScheduler.opening(of: timeline, planner: planner(for: profile), locality: options.locality)
        state.withLock { state in
            guard state.outputGeneration == generation, state.scheduler.players[id]?.timeline == timeline else {
                return
            }
            state.openings[id] = PlayerOpening(levels: levels, outputGeneration: generation)
        }
    }

    /// Triggers a player's prepared pulse; false when the trigger failed (the pulse is forgotten and the
    /// player plays through the mix).
    private func triggerPrepared(_ prepared: PreparedUse, id: Int, generation: Int, at triggered: Double)
        throws(HapticEngineError) -> Bool
    {
        do throws(OutputFailure) {
            try prepared.output.trigger(prepared: prepared.effect.id)
        } catch {
            logger.info("prepared trigger failed; playing through the mix", metadata: ["error": "\(error)"])
            state.withLock { _ = $0.prepared.removeValue(forKey: id) }
            return false
        }
        state.withLock { state in
            state.scheduler.preparedPlayers[id] = prepared.effect.duration
            state.triggeredPulses.append(
                TriggeredPulse(effect: prepared.effect.id, end: triggered + prepared.effect.duration))
        }
        try updatePlayer(id, generation: generation, changesMix: true) { player, now in
            player.schedule(.start, at: now)
        }
        return true
    }

    /// Cancels a player and tells its completion handler.
    func cancelPlayer(_ id: Int, generation: Int) throws(HapticEngineError) {
        try updatePlayer(id, generation: generation, changesMix: true) { player, _ in player.cancel() }
        let completion = state.withLock { $0.completions[id] }
        completion?(HapticEngineError(.cancelled, "the player was cancelled"))
    }

    /// Uploads a player's opening as one effect (see `HapticPatternPlayer.prepare()`).
    func preparePlayer(_ id: Int, generation: Int) throws(HapticEngineError) -> Bool {
        try ensureRunning()
        let timeline = try updatePlayer(id, generation: generation, changesMix: false) { player, _ in player.timeline }
        // The first segment, if flat and from the start, is what a rumble effect can hold (a transient's flat
        // top); whatever follows (its decay) plays through the mix after it.
        guard let first = timeline.segments.first, first.start == 0, first.isConstant, !first.startLevels.isOff
        else { return false }
        // The level the planner would send for it: the profile's steps, the engine's gain.
        let levels = planner(for: renderProfile).quantized(options.locality.apply(first.startLevels))
        guard let (output, generation) = state.withLock({ state in state.output.map { ($0, state.outputGeneration) } })
        else { return false }
        do throws(OutputFailure) {
            let effect = try output.prepare(PreparedPulse(mix: levels, duration: first.end))
            let previous = state.withLock { state in
                state.prepared.updateValue(
                    PreparedEffect(outputGeneration: generation, id: effect, duration: first.end), forKey: id)
            }
            if let previous, previous.outputGeneration == generation { output.release(prepared: previous.id) }
            return true
        } catch {
            // One slot, or a device that refuses: the pulse still plays, through the mix slot.
            logger.info("cannot prepare the pattern; it will play through the mix", metadata: ["error": "\(error)"])
            return false
        }
    }

    /// A player's completion handler; nil for a player the reset made stale.
    func completionHandler(of id: Int, generation: Int) -> CompletionHandler? {
        state.withLock { $0.resetGeneration == generation ? $0.completions[id] : nil }
    }

    /// Sets a player's completion handler; a stale player's is dropped, since it can never complete.
    func setCompletionHandler(of id: Int, generation: Int, to handler: CompletionHandler?) {
        state.withLock { state in
            guard state.resetGeneration == generation, state.scheduler.players[id] != nil else { return }
            state.completions[id] = handler
        }
    }

    /// The player's handle is gone: once it has nothing left to play it is forgotten, with its slot. A stale
    /// handle's player went with the reset.
    func playerReleased(_ id: Int, generation: Int) {
        state.withLock { state in
            guard state.resetGeneration == generation else { return }
            state.scheduler.withPlayer(id) { $0.isOrphaned = true }
        }
        releaseOrphans()
    }

    /// Forgets released players that finished, with their completion handlers and prepared slots.
    private func releaseOrphans() {
        let (output, slots) = state.withLock { state -> ((any MotorOutput)?, [Int]) in
            var slots: [Int] = []
            for id in state.scheduler.removeFinishedOrphans() {
                state.completions[id] = nil
                state.openings[id] = nil
                if let effect = state.prepared.removeValue(forKey: id),
                    effect.outputGeneration == state.outputGeneration
                {
                    slots.append(effect.id)
                }
            }
            return (state.output, slots)
        }
        if let output { for slot in slots { output.release(prepared: slot) } }
    }

    // MARK: The playback pass

    /// Advances every player to now, sends the mix if it changed (or renews it), and returns the engine
    /// time of the next change point: nil means nothing is scheduled (sleep until woken).
    func runPass() -> Double? {
        var callbacks: [@Sendable () -> Void] = []
        let deadline = pass.withLock { _ in
            callbacks = state.withLock { state in
                defer { state.deferredCallbacks = [] }
                return state.deferredCallbacks
            }
            return passLocked(&callbacks)
        }
        syncSounds()
        for callback in callbacks { callback() }
        releaseOrphans()
        return deadline
    }

    /// A pass on the caller's thread, so that a change due now reaches the device before the call returns
    /// instead of a thread hop later; the timer is woken afterwards for the deadlines that follow. What the pass
    /// would call back (completion and stopped handlers, a failed write's `outputFailed`) is left to the timer's
    /// next pass, so handlers still run on an engine thread. When a pass is already running (the timer's,
    /// another caller's, or this thread's own, from the playback observer) the timer's next pass takes the
    /// change, as for any other change.
    /// With `opening` (a player started now, queued at that engine time), the player's opening is written
    /// first when it is known and exactly what the pass would send (`EngineState.takeOpening`): the device
    /// then hears of the start before any planning.
    private func passOnCallersThread(opening: (id: Int, start: Double)? = nil) {
        _ = pass.withLockIfAvailable { _ in
            var callbacks: [@Sendable () -> Void] = []
            if let opening { writeOpening(of: opening.id, startedAt: opening.start, &callbacks) }
            _ = passLocked(&callbacks)
            if !callbacks.isEmpty { state.withLock { $0.deferredCallbacks += callbacks } }
        }
        wake()
    }

    private func passLocked(_ callbacks: inout [@Sendable () -> Void]) -> Double? {
        let now = clock.now
        let outcome = state.withLock { state in
            state.pass(
                at: now, planner: planner(for: state.profile), locality: options.locality,
                autoShutdownDelay: options.autoShutdownDelay)
        }
        callbacks += outcome.finished.map { completion in { completion(nil) } }
        if let finished = outcome.playersFinished {
            callbacks.append { [weak self] in
                guard finished(nil) == .stopEngine, let self else { return }
                self.stopEverything(reason: .notifyWhenFinished)
                self.logger.info("haptic engine stopped", metadata: ["reason": "notifyWhenFinished"])
            }
        }
        if let shutdown = outcome.shutdown { releaseIdleOutput(shutdown, handler: outcome.idleHandler, &callbacks) }
        guard let output = outcome.output else { return nil }
        do throws(OutputFailure) {
            for effect in outcome.stoppedPulses { try output.stop(prepared: effect) }
            try write(outcome.write, on: output, now: now)
        } catch {
            let generation = outcome.generation
            callbacks.append { [weak self] in self?.outputFailed(error, generation: generation) }
            return nil
        }
        return outcome.deadline
    }

    /// Writes a started player's opening, if `EngineState.takeOpening` gives one; a failed write is reported
    /// as the pass reports one.
    private func writeOpening(of id: Int, startedAt start: Double, _ callbacks: inout [@Sendable () -> Void]) {
        let now = clock.now
        let taken = state.withLock { state -> (any MotorOutput, Int, MotorMagnitudes)? in
            guard let output = state.output, let levels = state.takeOpening(of: id, startedAt: start, at: now) else {
                return nil
            }
            return (output, state.outputGeneration, levels)
        }
        guard let (output, generation, levels) = taken else { return }
        do throws(OutputFailure) {
            try write(.apply(levels, deadline: start), on: output, now: now)
        } catch {
            callbacks.append { [weak self] in self?.outputFailed(error, generation: generation) }
        }
    }

    /// Auto-shutdown: the device and the hot-plug watch are released; the next play opens them again.
    private func releaseIdleOutput(
        _ output: any MotorOutput, handler: (@Sendable (HapticEngineStoppedReason) -> Void)?,
        _ callbacks: inout [@Sendable () -> Void]
    ) {
        if let handler { callbacks.append { handler(.idleTimeout) } }
        output.close()
        audio?.close()
        let watch = state.withLock { state -> (any OutputWatch)? in
            defer { state.watch = nil }
            return state.watch
        }
        watch?.cancel()
        logger.info("haptic engine idle: device released")
    }

    private func write(_ write: PassOutcome.Write?, on output: any MotorOutput, now: Double) throws(OutputFailure) {
        switch write {
        case nil: break
        case .apply(let mix, let deadline):
            try output.apply(mix)
            options.playbackObserver?(PlaybackSample(deadline: deadline, sent: now, mix: mix, kind: .apply))
        case .keepAlive(let mix, let deadline):
            try output.keepAlive()
            options.playbackObserver?(PlaybackSample(deadline: deadline, sent: now, mix: mix, kind: .keepAlive))
        }
    }
}
