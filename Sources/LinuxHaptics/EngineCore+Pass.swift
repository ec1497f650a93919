// The playback pass: players advanced to now, the mix planned when it changed, the due command written.
import HapticRendering
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem
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
        // Counted as inside the engine's callbacks: a stop made from one (a completion that stops the engine)
        // waits for no handler, since a stop on another thread may be joining this one.
        if !callbacks.isEmpty { HandlerThreads.run { for callback in callbacks { callback() } } }
        releaseOrphans()
        return deadline
    }

    /// A pass on the caller's thread, so that a change due now reaches the device before the call returns
    /// instead of a thread hop later; the timer is then told when it is next needed (the deadline this pass worked
    /// out), and sleeps on until then. What the pass would call back (completion and stopped handlers, a failed
    /// write's `outputFailed`) is left to the timer, woken at once for it, so handlers still run on an engine
    /// thread. When a pass is already running (the timer's, another caller's, or this thread's own, from the
    /// playback observer) the timer is woken and its next pass takes the change, as for any other change.
    /// With `opening` (a player started now, queued at that engine time), the player's opening is written
    /// first when it is known and exactly what the pass would send (`EngineState.takeOpening`): the device
    /// then hears of the start before any planning.
    func passOnCallersThread(opening: (id: PlayerID, start: Double)? = nil) {
        let ran = pass.withLockIfAvailable { _ -> CallersPass in
            var callbacks: [@Sendable () -> Void] = []
            if let opening {
                writeOpening(&callbacks) { state, now in
                    state.takeOpening(of: opening.id, startedAt: opening.start, at: now).map {
                        ($0.levels, opening.start, $0.stopping)
                    }
                }
            }
            return CallersPass(deadline: passLocked(&callbacks, mayIdle: false), callbacks: callbacks)
        }
        guard let ran else { return wake() }
        handOver(ran)
    }

    /// A start now of a player whose opening is staged on the quiet device and armed (`StagedStart`): the
    /// opening's one write with nothing before it but the pass lock's try, which keeps every other write of the
    /// mix away until the start is recorded; the start is recorded after it, then the pass runs on the caller's
    /// thread as above. A failed write is reported as the pass reports one. False (nothing done) when nothing is
    /// armed for the player or a pass is running, and false (nothing recorded) when the engine stopped running
    /// since the write: the start then decides as usual.
    func startStagedOpening(of id: PlayerID, generation: ResetGeneration) -> Bool {
        guard stagedStart.mayFire(for: id) else { return false }
        let ran = pass.withLockIfAvailable { _ -> CallersPass? in
            // An observer is told the time just before the write, as of every write: the clock is read for it then.
            // The start itself is at the time just after (the plan's origin, the sample's deadline).
            let observedAt = options.playbackObserver == nil ? nil : motorNow
            guard let fired = stagedStart.fire(of: id, gate: startGate.token, now: { motorNow }) else { return nil }
            let now = motorNow
            // The Bluetooth pads' work item first, as after any opening (`writeOpening`).
            Sys.yield()
            let staged = fired.staged
            if let observer = options.playbackObserver, fired.failure == nil {
                observer(PlaybackSample(deadline: now, sent: observedAt ?? now, mix: staged.levels, kind: .apply))
            }
            let recorded = state.withLock { state in
                state.recordStagedStartWent(staged, generation: generation, at: now).map {
                    (state.output, state.outputGeneration, $0)
                }
            }
            guard let (output, outputGeneration, stopping) = recorded else { return nil }
            var callbacks: [@Sendable () -> Void] = []
            do throws(OutputFailure) {
                if let failure = fired.failure { throw failure }
                if let output { for effect in stopping { try output.stop(prepared: effect) } }
            } catch {
                callbacks.append { [weak self] in self?.outputFailed(error, generation: outputGeneration) }
            }
            return CallersPass(deadline: passLocked(&callbacks, mayIdle: false), callbacks: callbacks)
        }
        guard let ran, let ran else { return false }
        handOver(ran)
        return true
    }

    /// What a pass on a caller's thread leaves for the timer.
    private struct CallersPass {
        var deadline: Double?
        var callbacks: [@Sendable () -> Void]
    }

    /// After a pass on a caller's thread (the pass lock released): the timer is told the pass's deadline, and
    /// woken at once only when there is something to call back or no deadline to tell. When a `stop()` took the
    /// timer since (and the callbacks left for it before these), the engine stopped with no timer, what there is to
    /// call back is called here, on the caller's thread: a completion would otherwise never be told, and a handler
    /// counted in flight would keep every later stop waiting (until 7 December). A running engine with no timer yet
    /// (a start made it run and is making its timer) leaves them to the timer it is making.
    private func handOver(_ ran: CallersPass) {
        guard ran.callbacks.isEmpty, let deadline = ran.deadline else {
            if !ran.callbacks.isEmpty {
                let left = state.withLock { state -> Bool in
                    guard state.timer != nil || state.phase == .running else { return false }
                    state.deferredCallbacks += ran.callbacks
                    return true
                }
                if !left { HandlerThreads.run { for callback in ran.callbacks { callback() } } }
            }
            return wake()
        }
        state.withLock { $0.timer }?.wake(by: deadline)
    }

    /// One pass, with the pass lock held; returns when the timer is next needed, on the clock's time line (the
    /// state's deadline, `outputLatency` earlier). Unless `mayIdle` (the timer's pass), an engine due to idle is
    /// left to the timer, woken at once for it.
    private func passLocked(_ callbacks: inout [@Sendable () -> Void], mayIdle: Bool = true) -> Double? {
        let latency = outputLatency
        let now = clock.now + latency
        guard let begun = state.withLock({ $0.beginPass(at: now, gain: options.gain) }) else { return nil }
        callbacks += begun.finished.map { completion in { completion(nil) } }
        var request = begun.request
        if let origin = request?.origin, request?.planner.profile.followsDeviceFrames == true {
            // Its first call goes out at its origin less the latency, or now.
            request?.planner.frames = begun.output.frameGrid(callingFrom: max(now, origin) - latency)
        }
        let plan = request?.make(locality: options.locality)
        // Asked outside the engine's lock: the output answers under its own.
        let changeLead = begun.output.changeLead
        let (outcome, run) = state.withLock { state in
            let outcome = state.finishPass(
                at: now, step: begun.step, plan: plan, autoShutdownDelay: options.autoShutdownDelay,
                changeLead: changeLead, mayIdle: mayIdle)
            return (outcome, state.run)
        }
        if !outcome.playersFinished.isEmpty {
            let handlers = outcome.playersFinished
            // A `.stopEngine` stops the run whose players finished, not one a stop and a start, or the device's
            // going and coming back, began since (a caller's pass hands its callbacks to the timer there is then: until
            // 7 December the old run's handler stopped the engine the app had started again, or the reset had).
            callbacks.append { [weak self] in
                self?.callPlayersFinished(handlers, error: nil, ofRun: run) { $0 != .stopped && $0 != .destroyed }
            }
        }
        if let shutdown = outcome.shutdown {
            releaseIdleOutput(shutdown, watch: outcome.shutdownWatch, handler: outcome.idleHandler, &callbacks)
        }
        guard let output = outcome.output else { return nil }
        do throws(OutputFailure) {
            for effect in outcome.stoppedPulses { try output.stop(prepared: effect) }
            try write(outcome.write, on: output, now: now)
            // The rise after this rest made ready now, ahead of the rise's own time: on a uinput pad an upload is a
            // round trip to the process behind it, which would otherwise come between the rise's time and its play.
            if let levels = outcome.stage { output.stage(levels) }
        } catch {
            let generation = outcome.generation
            callbacks.append { [weak self] in self?.outputFailed(error, generation: generation) }
            return nil
        }
        return outcome.deadline.map { $0 - latency }
    }

    /// Writes a started player's opening, if `take` (`EngineState.takeOpening`, at the
    /// engine time now) gives one (its levels, the engine time it was due at, and the prepared pulses to stop),
    /// and says whether it did; a failed write is reported as the pass reports one. A pulse past its length that
    /// the kernel may still be playing is stopped after the opening's write and the yield, not before the write
    /// as the pass stops one before a command: the start's one write comes first, and the device plays both
    /// summed only until the stop (a driver that queues a frame per call, hid-nintendo's, sends one frame of it).
    @discardableResult
    private func writeOpening(
        _ callbacks: inout [@Sendable () -> Void],
        take: (inout EngineState, Double) -> (MotorMagnitudes, Double, [Int])?
    ) -> Bool {
        let now = motorNow
        let taken = state.withLock { state -> (any MotorOutput, OutputGeneration, MotorMagnitudes, Double, [Int])? in
            guard let output = state.output, let (levels, due, stopping) = take(&state, now) else { return nil }
            return (output, state.outputGeneration, levels, due, stopping)
        }
        guard let (output, generation, levels, due, stopping) = taken else { return false }
        do throws(OutputFailure) {
            try write(.apply(levels, deadline: due), on: output, now: now)
            // The drivers of the Bluetooth pads (hid-playstation, hid-sony, hid-microsoft) send the report from a
            // work item the write queued on this CPU, which otherwise waits for this thread's bookkeeping and
            // pass (and for the stops below): it runs first (about 0.1 ms sooner on the emulated Xbox pad). With
            // other threads runnable on this CPU, the call returns after them.
            Sys.yield()
            for effect in stopping { try output.stop(prepared: effect) }
        } catch {
            callbacks.append { [weak self] in self?.outputFailed(error, generation: generation) }
        }
        return true
    }

    /// Auto-shutdown: the device, the sound stream and the hot-plug watch are released; the next play opens them
    /// again. A start waits until the device, the stream and the watch are let go (`EngineState.releasingIdleOutput`,
    /// set by the pass that idled): the stream a play started the engine with, or its watch, would otherwise be
    /// closed here. The stream is set aside under that wait (a sound asked for before it is closed takes it up
    /// again) and closed after it: closing it waits for its thread, which may be running a reset handler (the sound
    /// device came back) that waits for the app. Until 7 December a play waited for that close, for ever where the
    /// handler took a lock the playing thread held. The pass still waits for it (the engine's players with it), so
    /// that a `stop()`, which waits for the pass, returns with the stream closed.
    private func releaseIdleOutput(
        _ output: any MotorOutput, watch: (any OutputWatch)?, handler: (@Sendable (HapticEngineStoppedReason) -> Void)?,
        _ callbacks: inout [@Sendable () -> Void]
    ) {
        // Counted in flight when the pass decided on it: delivered, it is counted out (a stop waits for it).
        if let handler { callbacks.append { [weak self] in self?.deliver { handler(.idleTimeout) } } }
        output.close()
        audio?.setStreamAside()
        watch?.cancel()
        state.withLock { $0.releasingIdleOutput = false }
        idleOutputReleased.signal()
        audio?.closeSetAside()
        logger.info("haptic engine idle: device released")
    }

    func write(_ write: PassOutcome.Write?, on output: any MotorOutput, now: Double) throws(OutputFailure) {
        switch write {
        case nil: break
        case .apply(let mix, let deadline, let wokeLate):
            try output.apply(mix)
            options.playbackObserver?(
                PlaybackSample(deadline: deadline, sent: now, mix: mix, kind: .apply, wokeLate: wokeLate))
        case .keepAlive(let mix, let deadline):
            try output.keepAlive()
            options.playbackObserver?(PlaybackSample(deadline: deadline, sent: now, mix: mix, kind: .keepAlive))
        }
    }
}
