// The engine's state and its one playback pass. Everything mutable sits in one Mutex; device I/O and
// handlers run outside it, so a handler may call back into the engine from the thread it is called on.
import HapticRendering
import LinuxInput
import Logging
import Synchronization

/// Where the engine is in its life; see docs/engine.md for the diagram.
enum EnginePhase: Sendable, Equatable {
    /// Created, or stopped by `stop()`.
    case stopped
    /// Output open, playback thread serving it.
    case running
    /// Output lost without `stop()`; waiting for the device (deviceRemoved) or a new `start()`.
    case interrupted(HapticEngineStoppedReason)
    /// Auto-shutdown released the output; the next play re-opens it.
    case idle
    /// The engine object is gone.
    case destroyed
}

final class EngineCore: Sendable {
    struct Handlers: Sendable {
        var stopped: (@Sendable (HapticEngineStoppedReason) -> Void)?
        var reset: (@Sendable () -> Void)?
        var playersFinished: (@Sendable (HapticEngineError?) -> HapticEngineFinishedAction)?
    }

    struct PreparedEffect: Sendable {
        var outputGeneration: Int
        var id: Int
        /// Seconds of pattern time the pulse covers (the timeline's first, flat segment).
        var duration: Double
    }

    struct State: Sendable {
        var phase = EnginePhase.stopped
        var output: (any MotorOutput)?
        /// Bumped on every open: a failure reported for an older output is stale.
        var outputGeneration = 0
        /// Bumped on every reset: players made before it are invalid.
        var resetGeneration = 0
        var scheduler = PlaybackScheduler()
        /// The profile the output is planned for: the option's, or the one chosen from the device on open.
        var profile: RenderProfile
        /// The device commands for the current mix (nil: plan on the next pass).
        var plan: PlaybackPlan?
        /// The levels the device holds: the last command's (quantised to the profile).
        var lastWritten = MotorMagnitudes.off
        /// Engine time of the last primitive written (command or keep-alive): the self-expiry window's start.
        var lastWriteTime = -Double.infinity
        /// The deadline of the last command sent: where a new plan resumes the rate limit from.
        var lastCommandTime = -Double.infinity
        var idleSince: Double?
        var wasActive = false
        var handlers = Handlers()
        var completions: [Int: @Sendable (HapticEngineError?) -> Void] = [:]
        var prepared: [Int: PreparedEffect] = [:]
        var watch: (any OutputWatch)?
        var driver: (any PlaybackDriver)?
    }

    let clock: any HapticClock
    let options: HapticEngineOptions
    let source: any OutputSource
    let logger: Logger
    let state: Mutex<State>
    /// Serialises playback passes (the thread's, or the manual clock's callers').
    private let pass = Mutex(())

    init(source: any OutputSource, options: HapticEngineOptions, clock: any HapticClock, logger: Logger) {
        self.source = source
        self.options = options
        self.clock = clock
        self.logger = logger
        state = Mutex(State(profile: options.renderProfile ?? .genericRumble))
    }

    /// The profile players are rendered with and the device is planned for: the engine option when set, else
    /// the one chosen from the open output's device, else (no output yet) the generic profile.
    var renderProfile: RenderProfile { state.withLock { $0.profile } }

    // MARK: Lifecycle

    func start() throws(HapticEngineError) {
        let phase = state.withLock { $0.phase }
        switch phase {
        case .running: return
        case .destroyed: throw HapticEngineError(.notRunning, "the engine was destroyed")
        default: break
        }
        let output: any MotorOutput
        do throws(OutputFailure) {
            output = try source.open(clock: clock, logger: logger)
        } catch {
            throw HapticEngineError(error)
        }
        let now = clock.now
        let installed = state.withLock { state -> Bool in
            guard state.phase != .running, state.phase != .destroyed else { return false }
            install(output, in: &state, now: now)
            return true
        }
        guard installed else {
            output.close()
            return
        }
        startWatchIfNeeded()
        do { try startDriverIfNeeded() } catch {
            stopEverything(reason: .systemError)
            throw error
        }
        logger.info(
            "haptic engine started",
            metadata: ["output": "\(output.capabilities.name)", "profile": "\(renderProfile.name)"])
        wake()
    }

    private func install(_ output: any MotorOutput, in state: inout State, now: Double) {
        state.output = output
        state.outputGeneration += 1
        state.phase = .running
        state.profile = options.renderProfile ?? output.capabilities.renderProfile
        state.plan = nil
        state.lastWritten = .off
        state.lastWriteTime = -.infinity
        state.lastCommandTime = -.infinity
        state.idleSince = now
        state.prepared.removeAll()
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

    private func startDriverIfNeeded() throws(HapticEngineError) {
        guard state.withLock({ $0.driver == nil }) else { return }
        let driver: any PlaybackDriver
        if let manual = clock as? ManualClock {
            driver = InlineDriver(clock: manual, core: self)
        } else {
            do throws(SystemCallError) {
                driver = try ThreadDriver(core: self)
            } catch {
                throw HapticEngineError(.systemError, "cannot start the playback thread: \(error)")
            }
        }
        state.withLock { $0.driver = driver }
    }

    func wake() { state.withLock { $0.driver }?.wake() }

    /// `stop()`: motors off, device released, players stopped; the engine may be started again.
    func stop(completion: (@Sendable (HapticEngineError?) -> Void)?) {
        stopEverything(reason: nil)
        logger.info("haptic engine stopped")
        completion?(nil)
    }

    /// The engine object was released: stop, and tell the stopped handler why.
    func destroy() { stopEverything(reason: .engineDestroyed, final: true) }

    private func stopEverything(reason: HapticEngineStoppedReason?, final: Bool = false) {
        let (output, watch, driver, completions, handler) = state.withLock { state in
            let wasRunning = state.phase == .running
            state.phase = final ? .destroyed : .stopped
            state.scheduler.haltAll()
            defer {
                state.output = nil
                state.watch = nil
                state.driver = nil
                state.completions = [:]
                state.prepared = [:]
            }
            let handler = (reason != nil && wasRunning) ? state.handlers.stopped : nil
            return (state.output, state.watch, state.driver, Array(state.completions.values), handler)
        }
        watch?.cancel()
        driver?.shutdown()
        if let output {
            try? output.apply(.off)
            output.close()
        }
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

    /// An output call failed: a gone device interrupts with `deviceRemoved`, anything else with
    /// `deviceError`; the output is closed at once so no descriptor or slot outlives the failure.
    func outputFailed(_ failure: OutputFailure, generation: Int) {
        if failure.kind == .closed { return }
        let reason: HapticEngineStoppedReason = failure.kind == .deviceGone ? .deviceRemoved : .deviceError
        let taken = state.withLock {
            state -> (
                output: any MotorOutput, handler: (@Sendable (HapticEngineStoppedReason) -> Void)?,
                completions: [@Sendable (HapticEngineError?) -> Void]
            )? in
            guard state.phase == .running, state.outputGeneration == generation, let output = state.output else {
                return nil
            }
            state.phase = .interrupted(reason)
            state.output = nil
            state.scheduler.haltAll()
            state.lastWritten = .off
            state.prepared = [:]
            defer { state.completions = [:] }
            return (output, state.handlers.stopped, Array(state.completions.values))
        }
        guard let taken else { return }
        taken.output.close()
        logger.info("haptic output stopped", metadata: ["reason": "\(reason.rawValue)", "error": "\(failure)"])
        let error = HapticEngineError(reason == .deviceRemoved ? .noDevice : .deviceError, failure.message)
        for completion in taken.completions { completion(error) }
        taken.handler?(reason)
    }

    private func presenceChanged(_ presence: OutputPresence) {
        switch presence {
        case .removed:
            let generation = state.withLock { $0.outputGeneration }
            outputFailed(OutputFailure(.deviceGone, "the hot-plug monitor saw the device go"), generation: generation)
        case .appeared:
            reattach()
        }
    }

    /// The device came back (or a compatible one appeared): open it, send neutral, forget every old effect
    /// and player, and tell the reset handler.
    private func reattach() {
        guard state.withLock({ $0.phase == .interrupted(.deviceRemoved) }) else { return }
        let output: any MotorOutput
        do throws(OutputFailure) {
            output = try source.open(clock: clock, logger: logger)
            try output.sendNeutral()
        } catch {
            logger.info("the device appeared but could not be re-opened", metadata: ["error": "\(error)"])
            return
        }
        let now = clock.now
        let handler = state.withLock { state -> (@Sendable () -> Void)?? in
            guard state.phase == .interrupted(.deviceRemoved) else { return nil }
            install(output, in: &state, now: now)
            state.resetGeneration += 1
            state.scheduler = PlaybackScheduler()
            state.completions = [:]
            return .some(state.handlers.reset)
        }
        guard let handler else {
            output.close()
            return
        }
        logger.info("haptic output reset", metadata: ["output": "\(output.capabilities.name)"])
        wake()
        handler?()
    }

    /// Forgets released players that finished, with their completion handlers and prepared slots.
    func releaseOrphans() {
        let (output, slots) = state.withLock { state -> ((any MotorOutput)?, [Int]) in
            var slots: [Int] = []
            for id in state.scheduler.removeFinishedOrphans() {
                state.completions[id] = nil
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
        let deadline = pass.withLock { _ in passLocked(&callbacks) }
        for callback in callbacks { callback() }
        releaseOrphans()
        return deadline
    }

    private enum Write {
        case none
        case apply(MotorMagnitudes, deadline: Double)
        case keepAlive(MotorMagnitudes, deadline: Double)
    }

    /// The planner for the engine's profile, with the engine's gain on top of the profile's.
    func planner(for profile: RenderProfile) -> DeviceCommandPlanner {
        DeviceCommandPlanner(profile: profile.withGain(profile.gain * options.gain))
    }

    private func passLocked(_ callbacks: inout [@Sendable () -> Void]) -> Double? {
        let now = clock.now
        var write = Write.none
        var shutdown: (any MotorOutput)?
        let planned = state.withLock { state -> (output: any MotorOutput, generation: Int, deadline: Double?)? in
            guard state.phase == .running, let output = state.output else { return nil }
            let step = state.scheduler.advance(to: now)
            let horizonDue = state.plan?.horizon.flatMap { $0 <= now + PlayerState.epsilon ? $0 : nil }
            if state.plan?.revision != state.scheduler.revision || horizonDue != nil {
                // Plan from the instant the mix changed (a start queued for t plans from t even when this pass
                // runs a little later), continuing from what the device holds.
                let origin = min(state.scheduler.consumeChanges() ?? now, horizonDue ?? now, now)
                state.plan = state.scheduler.plan(
                    from: origin,
                    resuming: .init(sent: state.lastWritten, lastCommandTime: state.lastCommandTime),
                    planner: planner(for: state.profile), locality: options.locality)
            }
            if let command = state.plan?.takeDue(at: now) {
                write = .apply(command.levels, deadline: command.time)
                state.lastWritten = command.levels
                state.lastWriteTime = now
                state.lastCommandTime = command.time
            } else if !state.lastWritten.isOff && now >= state.lastWriteTime + OutputTiming.holdSeconds {
                write = .keepAlive(state.lastWritten, deadline: state.lastWriteTime + OutputTiming.holdSeconds)
                state.lastWriteTime = now
            }
            let renewal = state.lastWritten.isOff ? nil : state.lastWriteTime + OutputTiming.holdSeconds
            var deadline = [step.nextChange, state.plan?.nextCommandTime, state.plan?.horizon, renewal]
                .compactMap { $0 }.min()
            for (player, event) in step.events {
                guard let completion = state.completions[player] else { continue }
                if event == .finished || event == .stopped { callbacks.append { completion(nil) } }
            }
            if step.isActive || !state.lastWritten.isOff || state.plan?.nextCommandTime != nil {
                state.idleSince = nil
                state.wasActive = state.wasActive || step.isActive
            } else {
                state.idleSince = state.idleSince ?? now
                if state.wasActive, let finished = state.handlers.playersFinished {
                    state.wasActive = false
                    state.handlers.playersFinished = nil
                    callbacks.append { [weak self] in
                        if finished(nil) == .stopEngine { self?.stop(completion: nil) }
                    }
                }
                if let delay = options.autoShutdownDelay, let since = state.idleSince {
                    if now >= since + delay {
                        state.phase = .idle
                        shutdown = output
                        state.output = nil
                        state.prepared = [:]
                        if let handler = state.handlers.stopped { callbacks.append { handler(.idleTimeout) } }
                        return nil
                    }
                    deadline = min(deadline ?? .infinity, since + delay)
                }
            }
            return (output, state.outputGeneration, deadline)
        }
        if let shutdown {
            shutdown.close()
            let watch = state.withLock { state -> (any OutputWatch)? in
                defer { state.watch = nil }
                return state.watch
            }
            watch?.cancel()
            logger.info("haptic engine idle: device released")
        }
        guard let planned else { return nil }
        do throws(OutputFailure) {
            switch write {
            case .none: break
            case .apply(let mix, let deadline):
                try planned.output.apply(mix)
                options.playbackObserver?(PlaybackSample(deadline: deadline, sent: now, mix: mix, kind: .apply))
            case .keepAlive(let mix, let deadline):
                try planned.output.keepAlive()
                options.playbackObserver?(PlaybackSample(deadline: deadline, sent: now, mix: mix, kind: .keepAlive))
            }
        } catch {
            let generation = planned.generation
            callbacks.append { [weak self] in self?.outputFailed(error, generation: generation) }
            return nil
        }
        return planned.deadline
    }
}
