// The playback pass: players advanced to now, the mix planned when it changed, the due command written.
import HapticRendering
import LinuxAudio
import LinuxInput
import Logging

extension EngineCore {
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
    func passOnCallersThread(opening: (id: PlayerID, start: Double)? = nil) {
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
        guard let begun = state.withLock({ $0.beginPass(at: now, gain: options.gain) }) else { return nil }
        callbacks += begun.finished.map { completion in { completion(nil) } }
        let plan = begun.request?.make(locality: options.locality)
        let outcome = state.withLock { state in
            state.finishPass(at: now, step: begun.step, plan: plan, autoShutdownDelay: options.autoShutdownDelay)
        }
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
    private func writeOpening(of id: PlayerID, startedAt start: Double, _ callbacks: inout [@Sendable () -> Void]) {
        let now = clock.now
        let taken = state.withLock { state -> (any MotorOutput, OutputGeneration, MotorMagnitudes)? in
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

    func write(_ write: PassOutcome.Write?, on output: any MotorOutput, now: Double) throws(OutputFailure) {
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
