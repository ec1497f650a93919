// The engine's life: start (or wait for a device), stop, destroy, and the start a play makes on an idle engine.
import HapticRendering
import LinuxAudio
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

extension EngineCore {
    // MARK: Lifecycle

    func start() throws(HapticEngineError) {
        let (phase, stopsBefore) = state.withLock { ($0.phase, $0.stops) }
        switch phase {
        case .running: return
        case .destroyed: throw HapticEngineError(.notRunning, "the engine was destroyed")
        default: break
        }
        guard (0...1).contains(options.gain) else {
            throw HapticEngineError(.invalidArgument, "HapticEngineOptions.gain: \(options.gain) is not within 0...1")
        }
        // A delay of 0 or less idled the engine in the very pass a play's start made, dropping the play (until 6
        // December); NaN never idles, and is refused as the mistake it is.
        if let delay = options.autoShutdownDelay, !(delay > 0) {
            throw HapticEngineError(
                .invalidArgument,
                "HapticEngineOptions.autoShutdownDelay: \(delay) is not a positive number of seconds (nil never idles)")
        }
        if audio != nil, let problem = AudioOutputs.bufferProblem(options.audioBufferSeconds) {
            throw HapticEngineError(.invalidArgument, "HapticEngineOptions.audioBufferSeconds: \(problem)")
        }
        waitForIdleRelease()
        let output: any MotorOutput
        do throws(OutputFailure) {
            output = try source.open(clock: clock, logger: logger)
        } catch {
            if error.kind == .notFound || error.kind == .deviceGone { waitForDevice(stopsBefore: stopsBefore) }
            throw HapticEngineError(error)
        }
        adoptLatency(of: output)
        let profile = options.renderProfile ?? output.capabilities.renderProfile
        // The players made before the start are rendered for the device before it is installed: once it is, the
        // engine runs, and a player started then writes at once, with no timer yet to end what it starts until the
        // start is done (a 40 ms tap was held at full for as long as the players took to render).
        renderPlayersForTheDevice(profile)
        let now = motorNow
        let installed = state.withLock { state -> (prepared: [PlayerID], generation: ResetGeneration)? in
            // A stop since this start began (while its device opened, or its players rendered) wins, as if it came
            // after the start.
            guard state.phase != .running, state.phase != .destroyed, state.stops == stopsBefore else { return nil }
            // An engine that idled (or whose device failed) let the device go, and the pulses prepared on it with
            // it: their players, those still held, are prepared again on the device opened now, so that their
            // starts stay one write.
            let prepared = state.preparedBeforeRelease.filter { state.scheduler.players[$0]?.isOrphaned == false }
            state.preparedBeforeRelease = []
            state.install(output, profile: profile, now: now)
            return (prepared, state.resetGeneration)
        }
        guard let installed else {
            output.close()
            // Another start installed its device meanwhile, or a stop came: the players play for what is installed.
            renderPlayersForTheDevice()
            return
        }
        // Before its prepared pulses are uploaded again and its timer plans (those come from the players' timelines):
        // a player made or changed while the others were rendered.
        renderPlayersForTheDevice()
        audio?.permitOpening()
        // A stop since the install closed the audio before this start let it open again: closed again. (An engine
        // whose device failed meanwhile keeps its audio, for the reattach.)
        if state.withLock({ $0.phase == .stopped || $0.phase == .destroyed }) { audio?.close(untilStarted: true) }
        output.prepareForChanges()
        startWatchIfNeeded()
        do {
            // A stop meanwhile took the output: it wins, as if it came after this start.
            guard try startTimerIfNeeded() else { return }
        } catch {
            stopEverything(reason: .systemError)
            throw error
        }
        for id in installed.prepared {
            // A failure is logged by the preparation itself; the player then plays through the mix.
            _ = try? preparePlayer(id, generation: installed.generation)
        }
        logger.info(
            "haptic engine started",
            metadata: ["output": "\(output.capabilities.name)", "profile": "\(renderProfile.name)"])
        wake()
    }

    /// Returns once no idle pass is letting the device go. Never on the pass's own thread: the pass releases before
    /// anything it calls back runs. What the release does meanwhile (the device closed, the sound stream taken, the
    /// hot-plug watch cancelled) waits for no thread a handler runs on, so a start inside a handler waits too: the
    /// sound stream, whose close waits for its thread (where a reset handler runs when the sound device came back),
    /// is closed after the wait (until 7 December it was closed within it, a start inside a handler did not wait,
    /// and the release could close the sound stream of the engine the play had started).
    private func waitForIdleRelease() {
        guard state.withLock({ $0.releasingIdleOutput }) else { return }
        logger.debug("a start waits for the idle engine to let its device go")
        while state.withLock({ $0.releasingIdleOutput }) {
            idleOutputReleased.wait(untilNanoseconds: MonotonicTime.nanoseconds() + Self.handlerRecheckNanoseconds)
        }
        // Several starts may wait at once, and a signal wakes one: pass it on.
        idleOutputReleased.signal()
    }

    /// No device to open: the engine waits for one, as it does after an unplug. When one appears it opens it
    /// and tells the reset handler. A stop since the start began (`stopsBefore`) wins here too: the engine stays
    /// stopped, with no watch to start it when a device appears.
    private func waitForDevice(stopsBefore: Int) {
        let waiting = state.withLock { state -> Bool in
            guard state.phase != .running, state.phase != .destroyed, state.stops == stopsBefore else { return false }
            state.phase = .interrupted(.gameControllerDisconnect)
            return true
        }
        if waiting { startWatchIfNeeded() }
    }

    func startWatchIfNeeded() {
        guard state.withLock({ $0.watch == nil }) else { return }
        let watch = source.watch(logger: logger) { [weak self] presence in self?.presenceChanged(presence) }
        let extra = state.withLock { state -> (any OutputWatch)? in
            // A stopped engine watches for nothing: a stop that came during a start took the watch away already.
            if state.watch != nil || state.phase == .destroyed || state.phase == .stopped { return watch }
            state.watch = watch
            return nil
        }
        extra?.cancel()
    }

    /// Starts the playback timer of a running engine that has none. False when the engine is not running (a
    /// stop or a destroy came meanwhile): then no timer is left behind, whose thread would hold the engine and
    /// run its passes for ever.
    func startTimerIfNeeded() throws(HapticEngineError) -> Bool {
        guard state.withLock({ $0.timer == nil }) else { return state.withLock { $0.phase == .running } }
        let timer = try clock.makeTimer { self.runPass() }
        let kept = state.withLock { state -> Bool in
            guard state.phase == .running, state.timer == nil else { return false }
            state.timer = timer
            return true
        }
        if !kept { timer.cancel() }
        return state.withLock { $0.phase == .running }
    }

    func wake() { state.withLock { $0.timer }?.wake() }

    /// `stop()`: motors off, device released, players stopped; the engine may be started again.
    /// No stopped or reset handler runs once it returns (`waitForHandlers`).
    func stop(completion: CompletionHandler?) {
        stopEverything(reason: nil)
        waitForHandlers()
        logger.info("haptic engine stopped")
        completion?(nil)
    }

    /// The engine object was released: stop, and tell the stopped handler why.
    func destroy() {
        stopEverything(reason: .engineDestroyed, final: true)
        waitForHandlers()
    }

    func stopEverything(reason: HapticEngineStoppedReason?, final: Bool = false) {
        // What a destroy lets go (the completion handlers) goes after the lock: a
        // handler may hold the last reference to a player or an engine, whose release calls into an engine.
        var released: [PlayerID: CompletionHandler] = [:]
        defer { withExtendedLifetime(released) {} }
        let (output, watch, timer, completions, handler, deferred, finished) = state.withLock { state in
            let wasRunning = state.phase == .running
            // An idle engine is one an app still sees as started (its next play opens the device again): a
            // players-finished handler that stops it is heard of, as on a running engine, since a play throws
            // `notRunning` from then on.
            let reported = wasRunning || (state.phase == .idle && reason == .notifyWhenFinished)
            state.phase = final ? .destroyed : .stopped
            state.stops += 1
            let cutOff = state.activeCompletions
            state.scheduler.haltAll()
            defer {
                state.output = nil
                state.watch = nil
                state.timer = nil
                // A completion handler is a property of its player, which outlives a stop (a destroy ends both).
                if final { swap(&released, &state.completions) }
                state.prepared = [:]
                state.preparedBeforeRelease = []
                state.deferredCallbacks = []
            }
            let handler = (reason != nil && reported) ? state.handlers.stopped : nil
            // Counted, so that a stop on another thread waits for it (`deliver`).
            if handler != nil { state.handlerCallsInFlight += 1 }
            // A players-finished handler still waiting hears of it now: no player plays on a stopped engine.
            let finished = state.handlers.playersFinished
            state.handlers.playersFinished = []
            state.wasActive = false
            return (state.output, state.watch, state.timer, cutOff, handler, state.deferredCallbacks, finished)
        }
        watch?.cancel()
        timer?.cancel()
        audio?.close(untilStarted: true)
        if let output {
            try? output.apply(.off)
            output.close()
        }
        // What a pass on a caller's thread left for the timer, which is gone now: a player that finished there
        // still hears of it.
        for callback in deferred { callback() }
        for completion in completions { completion(HapticEngineError(.notRunning, "the engine stopped")) }
        // The engine is stopped already: whatever the handler answers, there is nothing more to stop.
        for handler in finished { _ = handler(nil) }
        if let reason, let handler { deliver { handler(reason) } }
    }

    /// For a play: an engine that shut itself down (idle) or lost its output starts again; a stopped one
    /// must be started by its owner. A stop that wins over the start made here (`start()` then returns, the
    /// engine stopped) is the play's refusal too.
    func ensureRunning() throws(HapticEngineError) {
        switch state.withLock({ $0.phase }) {
        case .running: return
        case .stopped, .destroyed: break
        case .idle, .interrupted: try start()
        }
        try state.withLock { (state) throws(HapticEngineError) in try state.requireStarted() }
    }

    /// How many times a play starts an engine that stops running again before the play is decided.
    static let playStartAttempts = 3

    /// Makes a play's decision on a running engine: `decide` returns nil when, under the lock it decides in, it
    /// finds the engine not running (`EngineState.runsForAPlay`). The engine is started first where it idled or
    /// lost its device (`ensureRunning`), and again when it stopped running between that start and the decision
    /// (its device failed): a decision made then would be queued on an engine with no output. The engine does not
    /// idle while a play decides (`EngineState.playsDeciding`), however short its `autoShutdownDelay`.
    func decideOnARunningEngine<T>(_ decide: () throws(HapticEngineError) -> T?) throws(HapticEngineError) -> T {
        try withIdleHeld { () throws(HapticEngineError) -> T in
            for _ in 0..<Self.playStartAttempts {
                try ensureRunning()
                if let decided = try decide() { return decided }
            }
            throw HapticEngineError(
                .notRunning, "the engine stopped running each time the play started it (its device kept failing)")
        }
    }

    /// Runs a play's `body` with the engine kept from idling (`EngineState.playsDeciding`): a pass due to idle
    /// meanwhile leaves it to the last play held, which wakes the timer.
    func withIdleHeld<T>(_ body: () throws(HapticEngineError) -> T) throws(HapticEngineError) -> T {
        state.withLock { $0.playsDeciding += 1 }
        defer {
            let idleHeld = state.withLock { state -> Bool in
                state.playsDeciding -= 1
                guard state.playsDeciding == 0, state.idleHeldForPlays else { return false }
                state.idleHeldForPlays = false
                return true
            }
            if idleHeld { wake() }
        }
        return try body()
    }
}
