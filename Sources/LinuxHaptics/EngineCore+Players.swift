// The players: made, changed, started (the fast paths to the first write), cancelled, prepared, released.
import AHAP
import HapticRendering
import LinuxAudio
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

extension EngineCore {
    // MARK: Players

    /// Adds a player; it is valid until the next reset.
    func addPlayer(_ player: PlayerState) throws(HapticEngineError) -> PatternPlayer {
        let armedStart = ArmedStart()
        let (id, generation) = try state.withLock { (state) throws(HapticEngineError) -> (PlayerID, ResetGeneration) in
            if state.phase == .destroyed { throw HapticEngineError(.notRunning, "the engine was destroyed") }
            let id = state.scheduler.add(player)
            state.addArmedStart(armedStart, of: id)
            return (id, state.resetGeneration)
        }
        // Rendered for the profile read before this lock: a start that opened a device since has rendered the
        // others again, not this one.
        renderPlayersForTheDevice(only: id)
        planOpening(of: id)
        prepareStream(for: id)
        return PatternPlayer(core: self, id: id, generation: generation, armedStart: armedStart)
    }

    /// The renderer for players' patterns on a device of `profile`: at the gain the device is planned with (an
    /// on/off weak motor hands what that gain turns off to the strong motor: `PatternRenderer.profile`), in the
    /// engine's locality.
    func patternRenderer(for profile: RenderProfile) -> PatternRenderer {
        PatternRenderer(profile: profile.withGain(profile.gain * options.gain), locality: options.locality)
    }

    /// Renders again, outside the lock, the pattern of each player (of player `only`, when given) rendered for
    /// another profile than `profile` (the engine's now, when nil): one made before `start()` opened its device, or
    /// while a device of another kind was open, then plays as a player made now would (a Switch's transients are
    /// 60 ms pulses, a DualShock 3's light weak-motor levels go to its strong motor). A player whose controls changed
    /// meanwhile is rendered again with them.
    func renderPlayersForTheDevice(_ profile: RenderProfile? = nil, only: PlayerID? = nil) {
        while true {
            let wanted = state.withLock { state -> [(PlayerID, Rerendering)] in
                let renderer = patternRenderer(for: profile ?? state.profile)
                if let only {
                    return state.scheduler.players[only]?.rendering(with: renderer).map { [(only, $0)] } ?? []
                }
                return state.scheduler.players.compactMap { id, player in
                    player.rendering(with: renderer).map { (id, $0) }
                }
            }
            if wanted.isEmpty { return }
            let rendered = wanted.map { id, rerendering in (id, rerendering, rerendering.rendered()) }
            let now = motorNow
            state.withLock { state in
                for (id, rerendering, rendered) in rendered {
                    guard state.scheduler.withPlayer(id, { $0.take(rerendering, rendered: rendered) }) == true else {
                        continue
                    }
                    state.scheduler.invalidate(at: now)
                    state.openings[id] = nil
                    state.refreshArmedStart(of: id)
                }
            }
        }
    }

    /// A stream that plays the patterns itself (a force device's periodic effects) does ahead, outside the lock,
    /// what a new player's start would otherwise do first (`PatternStream.prepare`).
    private func prepareStream(for id: PlayerID) {
        guard mayStreamPatterns else { return }
        let taken = state.withLock { state -> (any PatternStreamOutput, HapticPattern)? in
            guard let output = state.output as? any PatternStreamOutput,
                let pattern = state.scheduler.players[id]?.source?.pattern
            else { return nil }
            return (output, pattern)
        }
        if let (output, pattern) = taken { output.prepare(pattern) }
    }

    /// Runs `body` on a player's state, failing if a reset made the player stale. Anything but a read
    /// (`changesMix`) may change the mix: the timer plans again from now. Not when the player neither plays nor
    /// waits to and the call left how it would start as it was (`PlayerState.StartSettings`: a rate, a loop or an
    /// offset set to what it already was, as a caller sets them before every start): such a call changes nothing,
    /// and the player keeps the opening planned for its start. A change of a player holding controls for later
    /// places them again where it will be at their times (`placeHeldControlsAgain`), unless `placesHeldControls` is
    /// false (the change of controls itself).
    func updatePlayer<T>(
        _ id: PlayerID, generation: ResetGeneration, changesMix: Bool, placesHeldControls: Bool = true,
        _ body: (inout PlayerState, Double) -> T
    ) throws(HapticEngineError) -> T {
        guard
            let (result, changed, holds) = try changePlayer(
                id, generation: generation, changesMix: changesMix, requiresRunning: false, body)
        else {
            // Only a change that asks for a running engine finds none.
            throw HapticEngineError(.notRunning, "the engine is not running")
        }
        afterChange(id, generation: generation, mix: changed, holds: holds, placesHeldControls: placesHeldControls)
        return result
    }

    /// Resumes a paused player at `time` (engine time; now if past), decided on a running engine
    /// (`decideOnARunningEngine`): a resume queued on an engine with no output would play at its next `start()`. A
    /// player with sound resumes no sooner than its sound can be heard from where it was paused, as a start waits
    /// for it (`soundStart(of:)`): the haptics wait for the sound output's latency, so that both go on together and
    /// the sound's first moments are not skipped.
    func resumePlayer(_ id: PlayerID, generation: ResetGeneration, at time: Double) throws(HapticEngineError) {
        let (changed, holds) = try decideOnARunningEngine { () throws(HapticEngineError) -> (Bool, Bool)? in
            let soundStart = soundStart(of: id)
            return try changePlayer(id, generation: generation, changesMix: true, requiresRunning: true) {
                player, now in player.schedule(.resume, at: max(time, now, soundStart ?? now))
            }.map { ($0.changed, $0.holds) }
        }
        afterChange(id, generation: generation, mix: changed, holds: holds, placesHeldControls: true)
    }

    /// After a player's change: the timer plans again and the sound hears of it when the mix may have changed, and
    /// the player's held controls are placed again.
    private func afterChange(
        _ id: PlayerID, generation: ResetGeneration, mix changed: Bool, holds: Bool, placesHeldControls: Bool
    ) {
        guard changed else { return }
        wake()
        syncSounds()
        if holds, placesHeldControls { placeHeldControlsAgain(id, generation: generation) }
    }

    /// Places a player's held controls again where it will be at their times (`PlayerState.heldControlsPlacedAgain`),
    /// after a command queued, a seek, a new rate or loop: a control sent for a time acts then, wherever the player
    /// is. A player made stale meanwhile has nothing to place.
    private func placeHeldControlsAgain(_ id: PlayerID, generation: ResetGeneration) {
        try? changeControls(id, generation: generation) { player, _ in player.heldControlsPlacedAgain() }
    }

    /// Gives a player new run-time controls: `change` works them out from the player under the lock (nil: the
    /// player has no pattern to apply them to), the pattern is rendered with them outside it (with those of each
    /// control held for later, rebuilt on top of them), and the change is made when no other control reached the
    /// player meanwhile (`PlayerState.take`); otherwise it is worked out again on top of that one.
    func changeControls(
        _ id: PlayerID, generation: ResetGeneration, _ change: (PlayerState, Double) -> ControlsChange?
    ) throws(HapticEngineError) {
        while true {
            let now = motorNow
            let wanted = try state.withLock {
                (state) throws(HapticEngineError) -> (PatternSource, ControlsChange)? in
                try state.requirePlayer(id, generation: generation)
                guard let player = state.scheduler.players[id], let source = player.source,
                    let change = change(player, now)
                else { return nil }
                return (source, change)
            }
            guard let (source, change) = wanted else { return }
            let rendered = change.controls.map { source.rendered(with: $0) }
            let kept = try updatePlayer(id, generation: generation, changesMix: true, placesHeldControls: false) {
                player, now in player.take(change, rendered: rendered, at: now)
            }
            if kept { return }
        }
    }

    /// `updatePlayer` without waking the timer; also says whether the mix may have changed, and whether the player
    /// holds controls for later. Nil, with nothing changed, when `requiresRunning` and the engine does not run
    /// (`EngineState.runsForAPlay`).
    private func changePlayer<T>(
        _ id: PlayerID, generation: ResetGeneration, changesMix: Bool, requiresRunning: Bool,
        _ body: (inout PlayerState, Double) -> T
    ) throws(HapticEngineError) -> (T, changed: Bool, holds: Bool)? {
        let now = motorNow
        return try state.withLock { (state) throws(HapticEngineError) -> (T, changed: Bool, holds: Bool)? in
            guard state.phase != .destroyed else { throw EngineState.destroyedEngine }
            if requiresRunning, try !state.runsForAPlay() { return nil }
            // Moved out of the dictionary rather than copied, so that a change does not copy its queue.
            guard state.resetGeneration == generation, var player = state.scheduler.players.removeValue(forKey: id)
            else { throw EngineState.stalePlayer }
            let before = changesMix ? player.startSettings : nil
            let result = body(&player, now)
            let changed = changesMix && (before == nil || player.startSettings != before)
            let holds = !player.heldControls.isEmpty
            state.scheduler.players[id] = player
            if changed {
                state.scheduler.invalidate(at: now)
                state.openings[id] = nil
                state.refreshArmedStart(of: id)
            }
            return (result, changed, holds)
        }
    }

    /// Starts a player at `time` (engine time; now if past). A player with a prepared pulse, started now from
    /// the top, takes the fast path: one write on the caller's thread, the scheduler only tracking its end. Any
    /// other start due now has its first command written on the caller's thread too (its planned opening before
    /// any planning, when that is what the pass would send); a later one wakes the timer.
    /// The common case, a running engine and a player without sound, takes one lock before that write.
    func startPlayer(_ id: PlayerID, generation: ResetGeneration, at time: Double) throws(HapticEngineError) {
        if !(time > 0), startStagedOpening(of: id, generation: generation) { return }
        let now = motorNow
        let (framed, leadIn) = onFrames(time.isFinite ? max(time, now) : now, now: now)
        let requested = framed + leadIn
        var streamed = false
        // Controls held for later are placed again where the start puts the player at their times, after its
        // write. (A start that writes before any lock, a staged or prepared one, is not made while any are held.)
        var holds = false
        defer { if holds { placeHeldControlsAgain(id, generation: generation) } }
        let quick = try state.withLock { (state) throws(HapticEngineError) -> StartDecision? in
            guard state.phase == .running, audio == nil || !state.playerHasSound(id) else { return nil }
            streamed = mayStreamPatterns && state.output is any PatternStreamOutput
            if leadIn > 0, state.scheduler.players[id]?.loopEnabled == false {
                // Started on the frame its time falls in, the pattern where it was asked to begin.
                let decision = try state.decideStart(of: id, generation: generation, at: framed, now: now)
                state.scheduler.withPlayer(id) { $0.leadIn(by: leadIn) }
                return decision
            }
            let start = streamed ? state.wholeStart(requested, now: now) : requested
            return try state.decideStart(of: id, generation: generation, at: start, now: now)
        }
        if let quick {
            if case .queued(_, let held) = quick { holds = held }
            if streamed, case .queued = quick {
                // The stream (HD actuators, a force device's periodic effects) hears of the start at once. The
                // motors' pass writes nothing to it: it is the timer's, not the caller's.
                syncSounds()
                wake()
                return
            }
            try carryOut(quick, id: id, generation: generation, now: now)
            return
        }
        defer { syncSounds() }
        // The engine is kept from idling until the decision is carried out: an idle between the two (a pulse's
        // trigger failing on the closed device, or cut by the close) started the play again, which idled again, for
        // as long as the engine idled sooner than a start (the same day the hold came, over the decision alone).
        try withIdleHeld { () throws(HapticEngineError) in
            var decidedAt = 0.0
            let decision = try decideOnARunningEngine { () throws(HapticEngineError) -> StartDecision? in
                // A player with sound starts no sooner than its sound can be heard from its first frame: the rumble
                // waits for the sound output's latency, so that both begin together.
                let soundStart = soundStart(of: id)
                let later = clock.now + outputLatency
                let start = max(requested, later, soundStart ?? later)
                decidedAt = later
                return try state.withLock { (state) throws(HapticEngineError) -> StartDecision? in
                    // A stop since the engine was found running wins: a start queued on a stopped engine would play at
                    // its next start().
                    guard try state.runsForAPlay() else { return nil }
                    return try state.decideStart(
                        of: id, generation: generation, at: state.wholeStart(start, now: later), now: later)
                }
            }
            if case .queued(_, let held) = decision { holds = held }
            try carryOut(decision, id: id, generation: generation, now: decidedAt)
        }
    }

    /// After an armed start's write (`PatternPlayer.start(atTime:)`): the start recorded as any trigger's is; a
    /// failed write forgets the pulse and starts the player the ordinary way, through the mix.
    func armedStartWent(_ outcome: ArmedStart.Outcome, id: PlayerID, generation: ResetGeneration)
        throws(HapticEngineError)
    {
        switch outcome {
        case .fired(let effect):
            if try recordTriggered(effect, id: id, generation: generation) { return }
            try startPlayer(id, generation: generation, at: 0)
        case .failed(let effect, let error):
            forgetPrepared(effect, of: id, after: error)
            try startPlayer(id, generation: generation, at: 0)
        }
    }

    /// After a prepared pulse's write (an armed start's, or `triggerPrepared`'s): the pulse's end recorded and the
    /// player started from now, so that the mix plays what follows the pulse. The timeline is unchanged, so the
    /// player's planned opening stays valid; a player whose pulse is triggered has no sound (or the engine none),
    /// so the sound stream has nothing to hear of it. False, with nothing recorded, when the engine stopped running
    /// between the write and this record (its idle pass closed the device, which ended the pulse, or the device
    /// failed), or runs on another output since (it idled and a play opened the device again): the caller starts
    /// the player again the ordinary way, on a running engine. Until 7 December the start was recorded on the engine
    /// with no output, and what followed the pulse played at the next `start()`; then, for a few hours, one recorded
    /// on the device opened again left the pulse's top out of the mix, and it never played.
    private func recordTriggered(_ effect: PreparedEffect, id: PlayerID, generation: ResetGeneration)
        throws(HapticEngineError) -> Bool
    {
        let now = motorNow
        // The Bluetooth pads' drivers send the report from a work item the write queued on this CPU, which would
        // otherwise wait for the bookkeeping below: it runs first, as after an opening's write (`writeOpening`).
        Sys.yield()
        let recorded = try state.withLock { (state) throws(HapticEngineError) -> ((any HapticTimer)?, Double, Bool)? in
            try state.requirePlayer(id, generation: generation)
            // The pulse went out on this output: one that idled and opened again since ended it with its close.
            guard try state.runsForAPlay(), state.outputGeneration == effect.outputGeneration else { return nil }
            state.scheduler.preparedPlayers[id] = effect.duration
            state.triggeredPulses.append(TriggeredPulse(effect: effect.id, end: now + effect.duration))
            let wasActive =
                state.scheduler.withPlayer(id) { player -> Bool in
                    defer { player.schedule(.start, at: now) }
                    return player.isActive
                } ?? false
            state.scheduler.invalidate(at: now)
            return (state.timer, state.profile.minimumUpdateInterval, wasActive)
        }
        guard let (timer, interval, wasActive) = recorded else { return false }
        // A player that was playing or waiting leaves the mix now (its pulse plays its top on its own slot): the
        // pass writes that change at once.
        guard !wasActive else {
            wake()
            return true
        }
        // Otherwise nothing of the player's is the mix's before its pulse ends (the mix leaves the pulse's part out),
        // and what the other players have due keeps the timer's own wake-up: the timer is needed by the pulse's end,
        // less an interval and the time to plan what follows, not now. So the caller's thread goes back to the caller
        // without waking a thread (one system call), and the timer's pass does not come before the driver's work.
        timer?.wake(by: now + effect.duration - interval - Self.planningAllowance - outputLatency)
        return true
    }

    /// How long before a triggered pulse ends the timer plans what follows it: a long pattern's 2 s plan takes a few
    /// milliseconds in a debug build.
    static let planningAllowance = 0.010

    /// A prepared pulse whose trigger failed is forgotten: the player plays through the mix from now on. Only that
    /// pulse: one prepared for the player on an output opened since (the engine idled and a play started it again,
    /// preparing its pulses anew) is kept, its slot still the engine's. Until 7 December the trigger's failure on the
    /// closed device forgot the new one, whose slot stayed taken until the device closed.
    private func forgetPrepared(_ effect: PreparedEffect, of id: PlayerID, after error: OutputFailure) {
        logger.info("prepared trigger failed; playing through the mix", metadata: ["error": "\(error)"])
        let forgotten = state.withLock { state -> PreparedEffect? in
            defer { state.refreshArmedStart(of: id) }
            guard let prepared = state.prepared[id], prepared.outputGeneration == effect.outputGeneration,
                prepared.id == effect.id
            else { return nil }
            return state.prepared.removeValue(forKey: id)
        }
        withExtendedLifetime(forgotten) {}
    }

    /// Triggers the prepared pulse `decideStart` chose (queueing the start for the mix if the trigger fails), or
    /// runs a pass on the caller's thread for a start queued now; a later start only wakes the timer.
    private func carryOut(_ decision: StartDecision, id: PlayerID, generation: ResetGeneration, now: Double)
        throws(HapticEngineError)
    {
        switch decision {
        case .trigger(let prepared):
            if try triggerPrepared(prepared, id: id, generation: generation) { return }
            // Through the mix, from now, on a running engine: one that stopped running around the trigger (its idle
            // pass closed the device, which failed the trigger or ended the pulse) is started again by the play.
            // Until 7 December the start was queued on the engine with no output, and played at the next `start()`.
            let now = motorNow
            let queued = try state.withLock { (state) throws(HapticEngineError) -> Bool in
                try state.requirePlayer(id, generation: generation)
                guard try state.runsForAPlay() else { return false }
                state.queueStart(id, at: now, now: now)
                return true
            }
            guard queued else { return try startPlayer(id, generation: generation, at: 0) }
            passOnCallersThread()
        case .queued(let start, _):
            guard start <= now else { return wake() }
            passOnCallersThread(opening: (id, start))
        }
        planOpening(of: id)
    }

    /// The engine time from which player `id`'s sound can be heard from its next frame: now plus the sound
    /// output's lead (the stream opened if needed). Nil for a player without sound, or while the engine's sound is
    /// muted or cannot be had.
    func soundStart(of id: PlayerID) -> Double? {
        guard hasSound(id), let lead = audio?.lead() else { return nil }
        return clock.now + lead
    }

    /// Whether player `id` has sound to play.
    private func hasSound(_ id: PlayerID) -> Bool {
        audio != nil && state.withLock { $0.playerHasSound(id) }
    }

    /// Plans player `id`'s opening for the open output's profile unless it has a current one; outside the
    /// lock (a long pattern takes a while to plan), kept only if the player's controls, which make its timeline, did
    /// not change meanwhile.
    private func planOpening(of id: PlayerID) {
        let wanted = state.withLock { state -> (MotorTimeline, Int, DeviceCommandPlanner, OutputGeneration)? in
            // Where the engine plans on the device's frames, an opening would write between two of them.
            guard state.currentOpening(of: id) == nil, !state.profile.followsDeviceFrames,
                let player = state.scheduler.players[id]
            else { return nil }
            return (player.timeline, player.controlsRevision, state.planner(gain: options.gain), state.outputGeneration)
        }
        guard let (timeline, revision, planner, generation) = wanted else { return }
        let plan = PlaybackScheduler.soloPlan(of: timeline, planner: planner, locality: options.locality)
        let now = motorNow
        let staged = state.withLock { state -> (any MotorOutput, MotorMagnitudes, Bool)? in
            guard state.outputGeneration == generation, state.scheduler.players[id]?.controlsRevision == revision else {
                return nil
            }
            state.openings[id] = PlayerOpening(plan: plan, outputGeneration: generation, controlsRevision: revision)
            // While nothing plays, the device gets ready for this opening, so its start is one write.
            guard let output = state.output, let levels = state.stageOpening(of: id, at: now) else { return nil }
            return (output, levels, state.stagedOpening?.player == id)
        }
        guard let (output, levels, noted) = staged else { return }
        output.stage(levels)
        // A start of a noted opening is armed once the output has bound its write.
        guard noted else { return }
        let trigger = output.stagedTrigger(for: levels)
        state.withLock { $0.bindStagedTrigger(trigger, of: id, levels: levels) }
    }

    /// Triggers a player's prepared pulse; false when the trigger failed (the pulse is forgotten and the
    /// player plays through the mix) or the engine stopped running before the start was recorded.
    private func triggerPrepared(_ effect: PreparedEffect, id: PlayerID, generation: ResetGeneration)
        throws(HapticEngineError) -> Bool
    {
        do throws(OutputFailure) {
            try effect.trigger.fire()
        } catch {
            forgetPrepared(effect, of: id, after: error)
            return false
        }
        return try recordTriggered(effect, id: id, generation: generation)
    }

    /// Cancels a player and tells its completion handler, once: only a player that played, was paused or had a
    /// start pending was waiting to hear how it ended (an idle, finished or already cancelled one was told). The
    /// handler runs on the engine's thread, as every other completion does (Core Haptics calls it on its own
    /// queue), not inside the caller's `cancel()`, which may hold a lock the handler takes; on an engine with no
    /// playback thread (stopped), it runs before `cancel()` returns.
    func cancelPlayer(_ id: PlayerID, generation: ResetGeneration) throws(HapticEngineError) {
        let awaited = try updatePlayer(id, generation: generation, changesMix: true) { player, _ in
            defer { player.cancel() }
            return player.awaitsCompletion
        }
        guard awaited, let completion = state.withLock({ $0.completions[id] }) else { return }
        let error = HapticEngineError(.cancelled, "the player was cancelled")
        let deferred = state.withLock { state -> Bool in
            guard state.timer != nil else { return false }
            state.deferredCallbacks.append { completion(error) }
            return true
        }
        if deferred { wake() } else { completion(error) }
    }

    /// Where the engine plans on the device's frames (`RenderProfile.followsDeviceFrames`), the frame a start at
    /// `start` begins on, and the time from that frame to `start` (the player then starts on the frame, the
    /// pattern from that much later: the frame holds the pattern's opening at its mean, as every other frame
    /// holds its part). When that frame can no longer be planned from `now` (its call would be late), the first
    /// frame that can, with no lead-in: the pattern then plays whole, a little later. Elsewhere `start`, 0.
    private func onFrames(_ start: Double, now: Double) -> (start: Double, leadIn: Double) {
        guard followsFrames else { return (start, 0) }
        let output = state.withLock { $0.profile.followsDeviceFrames ? $0.output : nil }
        guard let grid = output?.frameGrid(callingFrom: clock.now) else { return (start, 0) }
        let first = grid.instant(atOrAfter: now)
        guard start > first else { return (first, 0) }
        let frame = grid.instant(atOrAfter: start - grid.period)
        return frame < start ? (frame, start - frame) : (start, 0)
    }

    /// Uploads a player's opening as one effect (see `HapticPatternPlayer.prepare()`): not where the engine plans
    /// on the device's frames, whose pulse would go out between two of them. The engine does not idle meanwhile, as
    /// while a play decides: until 7 December it could idle between the start made here and the upload, and the
    /// pulse was said prepared on the device it had closed.
    func preparePlayer(_ id: PlayerID, generation: ResetGeneration) throws(HapticEngineError) -> Bool {
        try withIdleHeld { () throws(HapticEngineError) -> Bool in
            try prepareOnARunningEngine(id, generation: generation)
        }
    }

    private func prepareOnARunningEngine(_ id: PlayerID, generation: ResetGeneration) throws(HapticEngineError) -> Bool
    {
        try ensureRunning()
        guard !followsFrames else { return false }
        let (timeline, revision) = try updatePlayer(id, generation: generation, changesMix: false) { player, _ in
            (player.timeline, player.controlsRevision)
        }
        // The first segment, if flat and from the start, is what a rumble effect can hold (a transient's flat
        // top); whatever follows (its decay) plays through the mix after it.
        guard let first = timeline.segments.first, first.start == 0, first.isConstant, !first.startLevels.isOff
        else { return false }
        // Uploaded already on this output for what it plays now: an engine woken from idle by this call prepares
        // again what was prepared before (`start`), this player's pulse too, which was uploaded twice until
        // 6 December.
        let current = state.withLock { state in
            state.prepared[id].map {
                $0.outputGeneration == state.outputGeneration && $0.controlsRevision == revision
                    && $0.duration == first.end
            } ?? false
        }
        if current { return true }
        // The level the planner would send for it: the profile's steps, the engine's gain.
        guard
            let (output, generation, planner) = state.withLock({ state in
                state.output.map { ($0, state.outputGeneration, state.planner(gain: options.gain)) }
            })
        else { return false }
        let levels = planner.quantized(options.locality.apply(first.startLevels))
        do throws(OutputFailure) {
            let effect = try output.prepare(PreparedPulse(mix: levels, duration: first.end))
            guard let trigger = output.pulseTrigger(prepared: effect) else {
                throw OutputFailure(.closed, "the prepared effect \(effect) is gone")
            }
            let previous = state.withLock { state in
                defer { state.refreshArmedStart(of: id) }
                return state.prepared.updateValue(
                    PreparedEffect(
                        outputGeneration: generation, id: effect, duration: first.end, controlsRevision: revision,
                        trigger: trigger),
                    forKey: id)
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
    func completionHandler(of id: PlayerID, generation: ResetGeneration) -> CompletionHandler? {
        state.withLock { $0.resetGeneration == generation ? $0.completions[id] : nil }
    }

    /// Sets a player's completion handler; a stale player's is dropped, since it can never complete. The handler it
    /// replaces is let go after the lock: it may hold the last reference to a player or an engine, whose release
    /// calls into an engine (this one's lock taken again trapped, until 6 December).
    func setCompletionHandler(of id: PlayerID, generation: ResetGeneration, to handler: CompletionHandler?) {
        let replaced = state.withLock { state -> CompletionHandler? in
            guard state.resetGeneration == generation, state.scheduler.players[id] != nil else { return nil }
            defer { state.completions[id] = handler }
            return state.completions[id]
        }
        withExtendedLifetime(replaced) {}
    }

    /// The player's handle is gone: once it has nothing left to play it is forgotten, with its slot. A stale
    /// handle's player went with the reset.
    func playerReleased(_ id: PlayerID, generation: ResetGeneration) {
        state.withLock { state in
            guard state.resetGeneration == generation else { return }
            state.scheduler.withPlayer(id) { $0.isOrphaned = true }
        }
        releaseOrphans()
    }

    /// Forgets released players that finished, with their completion handlers and prepared slots.
    func releaseOrphans() {
        var forgotten: [CompletionHandler] = []
        defer { withExtendedLifetime(forgotten) {} }
        let (output, slots) = state.withLock { state -> ((any MotorOutput)?, [Int]) in
            var slots: [Int] = []
            for id in state.scheduler.removeFinishedOrphans() {
                // Let go after the lock, as a replaced one is (`setCompletionHandler`).
                if let handler = state.completions.removeValue(forKey: id) { forgotten.append(handler) }
                state.openings[id] = nil
                state.armedStarts[id] = nil
                if state.stagedOpening?.player == id { state.stagedOpening = nil }
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
}
