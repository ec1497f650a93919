// Failures and hot-plug: a lost output interrupts the engine; the device coming back resets it.
import HapticRendering
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

extension EngineCore {
    // MARK: Failures and hot-plug

    /// An output call failed: a gone device interrupts with `gameControllerDisconnect`, anything else with
    /// `deviceError`; the output is closed at once so no descriptor or slot outlives the failure.
    func outputFailed(
        _ failure: OutputFailure, generation: OutputGeneration, reason given: HapticEngineStoppedReason? = nil
    ) {
        if failure.kind == .closed { return }
        let reason: HapticEngineStoppedReason =
            given ?? (failure.kind == .deviceGone ? .gameControllerDisconnect : .deviceError)
        typealias Stopped = @Sendable (HapticEngineStoppedReason) -> Void
        let taken = state.withLock {
            state -> (any MotorOutput, Stopped?, [CompletionHandler], [FinishedHandler], EngineRun)? in
            guard state.phase == .running, state.outputGeneration == generation, let output = state.output else {
                return nil
            }
            state.phase = .interrupted(reason)
            state.output = nil
            let cutOff = state.activeCompletions
            state.scheduler.haltAll()
            state.lastWritten = .off
            state.preparedBeforeRelease = state.prepared.keys.sorted()
            state.prepared = [:]
            // The players, and their completion handlers, stay: a device error leaves them usable after a new
            // start, and a reset (the pad back) forgets them all.
            let stopped = state.handlers.stopped
            if stopped != nil { state.handlerCallsInFlight += 1 }
            // The players were cut off: the finished handlers waiting hear of it now, with the error, rather than
            // after the device's return, where a `.stopEngine` would stop the engine the reset brought back.
            let finished = state.handlers.playersFinished
            state.handlers.playersFinished = []
            state.wasActive = false
            return (output, stopped, cutOff, finished, state.run)
        }
        guard let (output, stopped, completions, finished, run) = taken else { return }
        output.close()
        audio?.stopAll()
        logger.info("haptic output stopped", metadata: ["reason": "\(reason.rawValue)", "error": "\(failure)"])
        let error = HapticEngineError(reason == .deviceError ? .deviceError : .noDevice, failure.message)
        // The completions run inside the engine's callbacks too: one that stops the engine must not wait for
        // the stopped handler this thread has yet to call.
        HandlerThreads.run { for completion in completions { completion(error) } }
        if let stopped { deliver { stopped(reason) } }
        if !finished.isEmpty {
            HandlerThreads.run { [weak self] in
                // `.stopEngine` stops the interrupted engine (no reset follows when the device returns), not one a
                // stop or the device's return changed meanwhile (nor the next interruption, after such a return: until
                // 7 December it stopped that one, whose reset then never came).
                self?.callPlayersFinished(finished, error: error, ofRun: run) { phase in
                    if case .interrupted = phase { true } else { false }
                }
            }
        }
    }

    func presenceChanged(_ presence: OutputPresence) {
        switch presence {
        case .removed:
            // A write that failed as the device went (a Bluetooth link answers EIO while it drops, USB ESHUTDOWN)
            // stopped the engine with a device error: the removal says what that was, so the device's return resets
            // the engine as after an unplug. The stopped handler has heard of the stop already.
            let generation = state.withLock { state -> OutputGeneration? in
                guard state.phase != .interrupted(.deviceError) else {
                    state.phase = .interrupted(.gameControllerDisconnect)
                    return nil
                }
                return state.outputGeneration
            }
            guard let generation else { return }
            outputFailed(OutputFailure(.deviceGone, "the hot-plug monitor saw the device go"), generation: generation)
        case .appeared:
            reattach(after: .gameControllerDisconnect)
        }
    }

    /// The device came back (or a compatible one appeared): open it, send neutral, forget every old effect
    /// and player, and tell the reset handler.
    /// The cause of an interruption is gone (`reason`: the pad back, or the sound device).
    func reattach(after reason: HapticEngineStoppedReason) {
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
        adoptLatency(of: output)
        let now = motorNow
        var released: (completions: [PlayerID: CompletionHandler], armedStarts: [PlayerID: ArmedStart]) = ([:], [:])
        defer { withExtendedLifetime(released) {} }
        let generation = state.withLock { state -> ResetGeneration? in
            guard state.phase == .interrupted(reason) else { return nil }
            state.install(output, profile: options.renderProfile ?? output.capabilities.renderProfile, now: now)
            state.resetGeneration.advance()
            state.scheduler.forgetPlayers()
            state.preparedBeforeRelease = []
            // Let go after the lock, as a replaced handler is (`setCompletionHandler`).
            swap(&released.completions, &state.completions)
            // Their handles still hold their armed starts; the reset generation keeps those from firing.
            swap(&released.armedStarts, &state.armedStarts)
            return state.resetGeneration
        }
        guard let generation else {
            output.close()
            return
        }
        do {
            // A stop meanwhile took the output: it wins, and no timer is left behind.
            guard try startTimerIfNeeded() else { return }
        } catch {
            stopEverything(reason: .systemError)
            return
        }
        logger.info("haptic output reset", metadata: ["output": "\(output.capabilities.name)"])
        wake()
        // Only for the engine this reset brought back: a stop meanwhile (or a stop and a start) calls no handler.
        let reset = state.withLock { state -> (@Sendable () -> Void)? in
            guard state.phase == .running, state.resetGeneration == generation, let reset = state.handlers.reset else {
                return nil
            }
            state.handlerCallsInFlight += 1
            return reset
        }
        if let reset { deliver(reset) }
    }

    /// Opens the device that appeared and sends neutral. A device just announced may not take uploads yet: uinput
    /// answers `ENODEV` until its creator's `UI_DEV_CREATE` returns, which is after the kernel announced the node. So
    /// a `deviceGone` failure is tried again after each of `ReattachRetry.delays` (on the thread that heard of
    /// the device, the hot-plug watch's or the sound stream's, which hears nothing else meanwhile) while the
    /// engine still waits for this device; any other failure, or the last, is thrown.
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
}
