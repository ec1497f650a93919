// Core Haptics' pattern players: commands at engine times, dynamic parameters, and (advanced) pause, resume,
// seek, loop, rate and completion. A player is a handle on its state in the engine's scheduler; after a reset
// its calls fail with `playerInvalidated` and a new player must be made.
public import AHAP
import Synchronization

/// `CHHapticPatternPlayer`. Times are engine times (`HapticEngine.currentTime`); 0 or a time already
/// past means now.
public protocol HapticPatternPlayer: AnyObject, Sendable {
    func start(atTime time: Double) throws(HapticEngineError)
    func stop(atTime time: Double) throws(HapticEngineError)
    /// Applies `hapticIntensityControl` values, each at `time + parameter.relativeTime`.
    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError)
    /// Applies a `hapticIntensityControl` curve starting at `time + curve.relativeTime`.
    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError)
    /// Stops now, dropping pending commands; the completion handler gets `cancelled`.
    func cancel() throws(HapticEngineError)
    /// Uploads the pattern's opening ahead as one effect, so `start(atTime: 0)` reaches the device with one
    /// write. The opening is the rendered timeline's first segment when it is flat from time 0 (a transient's
    /// flat top); the rest plays through the mix after it. Returns false (and the player plays through the mix
    /// as usual) when the pattern opens with a ramp or silence, or the device has no slot to spare.
    @discardableResult func prepare() throws(HapticEngineError) -> Bool
}

/// `CHHapticAdvancedPatternPlayer`.
public protocol AdvancedHapticPatternPlayer: HapticPatternPlayer {
    func pause(atTime time: Double) throws(HapticEngineError)
    func resume(atTime time: Double) throws(HapticEngineError)
    func seek(toOffset offset: Double) throws(HapticEngineError)
    var loopEnabled: Bool { get set }
    /// Pattern time where a loop goes back to 0; 0 means the pattern's duration.
    var loopEnd: Double { get set }
    var playbackRate: Double { get set }
    /// Called when the player finishes, is stopped (nil), or is cancelled or cut off (an error).
    var completionHandler: (@Sendable (HapticEngineError?) -> Void)? { get set }
    /// Where the player is in its pattern, seconds.
    var currentOffset: Double { get }
    var phase: PlayerPhase { get }
}

final class PatternPlayer: AdvancedHapticPatternPlayer {
    private let core: EngineCore
    private let id: Int
    private let generation: Int

    init(core: EngineCore, id: Int, generation: Int) {
        self.core = core
        self.id = id
        self.generation = generation
    }

    deinit {
        core.state.withLock { state in
            state.scheduler.players[id]?.isOrphaned = true
        }
        core.releaseOrphans()
    }

    /// Runs `body` on this player's state, failing if a reset made the player stale.
    private func update<T>(
        wake: Bool = true, _ body: (inout PlayerState, Double) -> T
    ) throws(HapticEngineError) -> T {
        let now = core.clock.now
        let result = try core.state.withLock { (state) throws(HapticEngineError) -> T in
            guard state.resetGeneration == generation, var player = state.scheduler.players[id] else {
                throw HapticEngineError(.playerInvalidated, "the engine's output was reset: make a new player")
            }
            defer {
                state.scheduler.players[id] = player
                // Anything but a read may change the mix: the playback thread plans again from now.
                if wake { state.scheduler.invalidate(at: now) }
            }
            return body(&player, now)
        }
        if wake { core.wake() }
        return result
    }

    private func effectiveTime(_ time: Double, now: Double) -> Double { time.isFinite ? max(time, now) : now }

    func start(atTime time: Double) throws(HapticEngineError) {
        try core.ensureRunning()
        let prepared = core.state.withLock { state -> (output: any MotorOutput, effect: EngineCore.PreparedEffect)? in
            guard let effect = state.prepared[id], effect.outputGeneration == state.outputGeneration,
                let output = state.output, let player = state.scheduler.players[id],
                // The pulse is fixed in device time: only a plain start from the top can use it.
                player.rate == 1, !player.loopEnabled, player.startOffset == 0
            else { return nil }
            return (output, effect)
        }
        if let prepared, time <= core.clock.now {
            // The fast path: one write on the caller's thread; the scheduler only tracks the player's end.
            var triggered = true
            do throws(OutputFailure) {
                try prepared.output.trigger(prepared: prepared.effect.id)
            } catch {
                triggered = false
                core.logger.info("prepared trigger failed; playing through the mix", metadata: ["error": "\(error)"])
                core.state.withLock { _ = $0.prepared.removeValue(forKey: id) }
            }
            if triggered {
                core.state.withLock { $0.scheduler.preparedPlayers[id] = prepared.effect.duration }
                try update { player, now in player.schedule(.start, at: now) }
                return
            }
        }
        try update { player, now in
            player.schedule(.start, at: effectiveTime(time, now: now))
        }
        core.state.withLock { state in
            if state.scheduler.preparedPlayers.removeValue(forKey: id) != nil {
                state.scheduler.invalidate(at: core.clock.now)
            }
        }
    }

    func stop(atTime time: Double) throws(HapticEngineError) {
        try update { player, now in player.schedule(.stop, at: effectiveTime(time, now: now)) }
    }

    func pause(atTime time: Double) throws(HapticEngineError) {
        try update { player, now in player.schedule(.pause, at: effectiveTime(time, now: now)) }
    }

    func resume(atTime time: Double) throws(HapticEngineError) {
        try core.ensureRunning()
        try update { player, now in player.schedule(.resume, at: effectiveTime(time, now: now)) }
    }

    func seek(toOffset offset: Double) throws(HapticEngineError) {
        try update { player, now in player.seek(to: offset, now: now) }
    }

    func cancel() throws(HapticEngineError) {
        try update { player, _ in player.cancel() }
        let completion = core.state.withLock { $0.completions[id] }
        completion?(HapticEngineError(.cancelled, "the player was cancelled"))
    }

    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError) {
        try update { player, now in player.send(parameters, at: effectiveTime(time, now: now)) }
    }

    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError) {
        try update { player, now in player.schedule(curve, at: effectiveTime(time, now: now)) }
    }

    @discardableResult
    func prepare() throws(HapticEngineError) -> Bool {
        try core.ensureRunning()
        let timeline = try update(wake: false) { player, _ in player.timeline }
        // The first segment, if flat and from the start, is what a rumble effect can hold (a transient's flat
        // top); whatever follows (its decay) plays through the mix after it.
        guard let first = timeline.segments.first, first.start == 0, first.isConstant, !first.startLevels.isOff
        else { return false }
        // The level the planner would send for it: the profile's steps, the engine's gain.
        let levels = core.planner(for: core.renderProfile).quantized(core.options.locality.apply(first.startLevels))
        let pulse = PreparedPulse(mix: levels, duration: first.end)
        let current = core.state.withLock { state in state.output.map { ($0, state.outputGeneration) } }
        guard let (output, generation) = current else { return false }
        do throws(OutputFailure) {
            let effect = try output.prepare(pulse)
            let previous = core.state.withLock { state in
                state.prepared.updateValue(
                    EngineCore.PreparedEffect(outputGeneration: generation, id: effect, duration: first.end), forKey: id
                )
            }
            if let previous, previous.outputGeneration == generation { output.release(prepared: previous.id) }
            return true
        } catch {
            // One slot, or a device that refuses: the pulse still plays, through the mix slot.
            core.logger.info(
                "cannot prepare the pattern; it will play through the mix", metadata: ["error": "\(error)"])
            return false
        }
    }

    var loopEnabled: Bool {
        get { (try? update(wake: false) { player, _ in player.loopEnabled }) ?? false }
        set { _ = try? update { player, _ in player.loopEnabled = newValue } }
    }

    var loopEnd: Double {
        get { (try? update(wake: false) { player, _ in player.loopEnd }) ?? 0 }
        set { _ = try? update { player, _ in player.loopEnd = newValue.isFinite ? max(newValue, 0) : 0 } }
    }

    var playbackRate: Double {
        get { (try? update(wake: false) { player, _ in player.rate }) ?? 1 }
        set { _ = try? update { player, now in player.setRate(newValue, now: now) } }
    }

    var completionHandler: (@Sendable (HapticEngineError?) -> Void)? {
        get { core.state.withLock { $0.completions[id] } }
        set { core.state.withLock { $0.completions[id] = newValue } }
    }

    var currentOffset: Double { (try? update(wake: false) { player, now in player.offset(at: now) }) ?? 0 }

    var phase: PlayerPhase { (try? update(wake: false) { player, _ in player.phase }) ?? .stopped }
}
