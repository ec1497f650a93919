// A playback pass over the engine's state, in two halves around the planning that runs outside the lock:
// `beginPass` advances the players and says what to plan, `finishPass` takes the plan and decides the write.
// Pure apart from the output and handler references handed back for EngineCore to use outside the lock.
import HapticRendering

/// What a playback pass decided, for EngineCore to carry out outside the lock.
struct PassOutcome {
    enum Write {
        /// `wokeLate`: a level the thread slept through, written outside the plan (`PlaybackSample.wokeLate`).
        case apply(MotorMagnitudes, deadline: Double, wokeLate: Bool = false)
        case keepAlive(MotorMagnitudes, deadline: Double)
    }

    /// The output to write on and its generation; nil when the engine is not running.
    var output: (any MotorOutput)?
    var generation = OutputGeneration()
    var write: Write?
    /// Prepared pulses to stop before the write: their length is over, but the device may still play them.
    var stoppedPulses: [Int] = []
    /// While the motors rest, after a write that stopped them or with a plan just made: the levels the plan's next
    /// command raises them to, for the output to stage (`MotorOutput.stage`) meanwhile, so that the rise is one
    /// write (a play) then.
    var stage: MotorMagnitudes?
    /// When the next pass is due; nil: only when woken.
    var deadline: Double?
    /// The players-finished handlers, called once the engine went idle after playing.
    var playersFinished: [FinishedHandler] = []
    /// Auto-shutdown: the output released for idleness, the hot-plug watch with it, and the stopped handler to tell.
    var shutdown: (any MotorOutput)?
    var shutdownWatch: (any OutputWatch)?
    var idleHandler: (@Sendable (HapticEngineStoppedReason) -> Void)?
}

/// What a pass's first half found: what the players did, the completions to call, and the mix to plan (nil: the
/// plan is current).
struct PassStart {
    /// The output the pass writes on, for what it says outside the lock (`MotorOutput.changeLead`).
    var output: any MotorOutput
    var step: PlaybackScheduler.Step
    var finished: [CompletionHandler]
    var request: MixPlanRequest?
}

/// The mix to plan for a pass, copied out of the state so that planning (a whole pattern, for a player that does
/// not loop) runs outside the lock.
struct MixPlanRequest: Sendable {
    let scheduler: PlaybackScheduler
    let origin: Double
    /// No player changed at `origin` (the plan's horizon came): the plan continues the mix across it.
    let continuesAcross: Bool
    let resumption: DeviceCommandPlanner.Resumption
    /// Its frames (`DeviceCommandPlanner.frames`) are the output's, read outside the lock as the plan is made.
    var planner: DeviceCommandPlanner

    func make(locality: HapticLocality) -> PlaybackPlan {
        scheduler.plan(
            from: origin, resuming: resumption, planner: planner, locality: locality, continuing: continuesAcross)
    }
}

extension EngineState {
    /// A playback pass's first half, at `now`: advances the players, takes the completion handlers of those
    /// that finished or were stopped, and says whether the mix must be planned again (a player changed it, or
    /// the plan's horizon came). Nil when the engine is not running. The plan is made outside the lock from the
    /// request (`MixPlanRequest.make`), then `finishPass` takes it.
    mutating func beginPass(at now: Double, gain: Double) -> PassStart? {
        guard phase == .running, let output else { return nil }
        adoptSoloStart()
        let step = scheduler.advance(to: now)
        var finished: [CompletionHandler] = []
        for (player, event) in step.events where event == .finished || event == .stopped {
            if let completion = completions[player] { finished.append(completion) }
        }
        let horizonDue = plan?.horizonReached.flatMap { $0 <= now + PlayerState.epsilon ? $0 : nil }
        guard plan?.revision != scheduler.revision || horizonDue != nil else {
            return PassStart(output: output, step: step, finished: finished, request: nil)
        }
        // From the instant the mix changed (a start queued for t plans from t even when this pass runs a little
        // later), continuing from what the device holds.
        let origin = min(scheduler.changedSince ?? now, horizonDue ?? now, now)
        // Planned again at the horizon alone: the mix goes on across it.
        let continues = plan?.revision == scheduler.revision && horizonDue != nil
        // Across it, from the plan's own count of its commands (`PlaybackPlan.horizonHolds`): what is sent is then
        // the plan made whole, whenever the thread wrote them.
        let resumption = continues ? plan?.holdsAtHorizon ?? deviceHolds : deviceHolds
        // Planned again after a level the thread slept through, the mix unchanged since: it goes on across the
        // instant of that write too, where the mix has no jump unless the whole mix has one (a ramp's level there
        // is not a rise from silence, which the rate limit would send at once).
        let afterLateLevel = droppedForLateLevel == scheduler.revision
        droppedForLateLevel = nil
        let request = MixPlanRequest(
            scheduler: scheduler, origin: origin, continuesAcross: continues || afterLateLevel,
            resumption: resumption, planner: planner(gain: gain))
        return PassStart(output: output, step: step, finished: finished, request: request)
    }

    /// A playback pass's second half: takes the plan made for `beginPass`'s request (nil when none was asked
    /// for) and decides what to write (a due command, or a renewal of what the device holds) and when to run
    /// next. A plan made for players that changed while it was planned is dropped, nothing is written, and the
    /// next pass is due at once (it plans again). A command from one non-zero level to another is due
    /// `changeLead` (the output's `MotorOutput.changeLead`) before its time.
    mutating func finishPass(
        at now: Double, step: PlaybackScheduler.Step, plan made: PlaybackPlan?, autoShutdownDelay: Double?,
        changeLead: Double = 0, mayIdle: Bool = true
    ) -> PassOutcome {
        var outcome = PassOutcome()
        guard phase == .running, let output else { return outcome }
        var replaced: RumbleCommand?
        if let made {
            guard made.revision == scheduler.revision else {
                outcome.output = output
                outcome.generation = outputGeneration
                outcome.deadline = now
                return outcome
            }
            _ = scheduler.consumeChanges()
            // What the replaced plan had due before the change was never sent: a late pass slept through it. Not
            // after a stop, which asks for silence from its time on.
            let stopped = step.events.contains { $0.event == .stopped }
            replaced = stopped ? nil : plan?.takeAll(before: made.origin)
            plan = made
        }
        outcome.write = takeWrite(at: now, changeLead: changeLead, replaced: replaced)
        // A level slept through: its plan is dropped, and the mix it was planned for (changed, if at all, before
        // this instant) goes on.
        if case .apply(_, _, wokeLate: true)? = outcome.write, (made?.origin ?? -.infinity) < now - PlayerState.epsilon
        {
            droppedForLateLevel = scheduler.revision
        }
        // A level written late (`takeWrite`) leaves no plan: the next pass makes one at once.
        let replanning = plan == nil
        outcome.stoppedPulses = pulsesToStop(at: now, beforeCommand: outcome.write)
        // At rest with a rise to come: after a write that stopped the motors, or with a plan just made (a
        // pattern that opens with silence).
        let wroteOff = if case .apply(let levels, _, _) = outcome.write { levels.isOff } else { false }
        if wroteOff || made != nil, lastWritten.isOff, let next = plan?.nextCommand, !next.levels.isOff {
            outcome.stage = next.levels
        }
        let nextCommand = plan?.nextCommandTime.map { time in
            heldBack(until: time, at: now) ?? time - lead(ofNextCommand: changeLead)
        }
        // The horizon counts once the commands before it are written (one held back would otherwise make it due
        // over and over until it goes out).
        var deadline = earliest(earliest(step.nextChange, nextCommand), earliest(plan?.horizonReached, renewalDue))
        if replanning { deadline = now }
        if step.isActive || !lastWritten.isOff || plan?.nextCommandTime != nil {
            idleSince = nil
            wasActive = wasActive || step.isActive
        } else {
            let since = idleSince ?? now
            idleSince = since
            if wasActive, !handlers.playersFinished.isEmpty {
                wasActive = false
                outcome.playersFinished = handlers.playersFinished
                handlers.playersFinished = []
            }
            if let delay = autoShutdownDelay {
                if now < since + delay {
                    deadline = min(deadline ?? .infinity, since + delay)
                } else if playsDeciding > 0 {
                    // Not before the plays decide: the last of them wakes the timer (no deadline for it here, which
                    // would be past and run the pass again at once, over and over).
                    idleHeldForPlays = true
                } else if !mayIdle {
                    // A pass on a caller's thread leaves the idle to the timer, due now: the idle's release (the
                    // device's close, the sound stream's, which waits for a handler on its thread) and its stopped
                    // handler are the timer's, and a `stop()` waits for them there.
                    deadline = now
                } else {
                    phase = .idle
                    outcome.shutdown = output
                    // Taken with the phase's change: a start that follows makes its own watch.
                    outcome.shutdownWatch = watch
                    watch = nil
                    releasingIdleOutput = true
                    outcome.idleHandler = handlers.stopped
                    // Counted, so that a stop waits for it (`EngineCore.deliver`): until 6 December a stop on
                    // another thread could return while it ran.
                    if handlers.stopped != nil { handlerCallsInFlight += 1 }
                    self.output = nil
                    preparedBeforeRelease = prepared.keys.sorted()
                    prepared = [:]
                    outcome.write = nil
                    return outcome
                }
            }
        }
        outcome.output = output
        outcome.generation = outputGeneration
        outcome.deadline = deadline
        return outcome
    }

    /// The earlier of two optional times (no array: a pass on a caller's thread runs before its write).
    private func earliest(_ first: Double?, _ second: Double?) -> Double? {
        guard let first, let second else { return first ?? second }
        return min(first, second)
    }

    /// The triggered pulses whose length is over by `now` but that may still play, when a command goes out
    /// now (`takeEndedPulses`); otherwise none, and those past any overrun are forgotten.
    private mutating func pulsesToStop(at now: Double, beforeCommand write: PassOutcome.Write?) -> [Int] {
        if case .apply = write { return takeEndedPulses(at: now) }
        triggeredPulses.removeAll { $0.isOver(at: now) }
        return []
    }

    /// How often the output wants a steady non-zero mix renewed.
    private var renewalHold: Double { (output?.renewal ?? .standard).holdSeconds }

    /// When the renewal of the level the device holds falls due; nil while the motors are off.
    private var renewalDue: Double? { lastWritten.isOff ? nil : lastWriteTime + renewalHold }

    /// Whether the renewals the engine writes are the ones the write budget counts (one every `renewalHold`, as
    /// every built-in profile's budget counts its renewals); not where a broadcast renews at another member's
    /// rhythm, or a budget counts none.
    private var budgetCountsRenewals: Bool {
        profile.budget.renewalInterval.map { abs($0 - renewalHold) < PlayerState.epsilon } ?? false
    }

    /// How long before its time the plan's next command is written: `changeLead` when it changes one non-zero
    /// level the device holds to another, 0 otherwise (a start from rest, a stop, the same level again).
    private func lead(ofNextCommand changeLead: Double) -> Double {
        guard changeLead > 0, !lastWritten.isOff, let next = plan?.nextCommand, !next.levels.isOff,
            next.levels != lastWritten
        else { return 0 }
        return changeLead
    }

    /// The command due now (or within its lead), or else a renewal of a non-zero mix whose self-expiry window is
    /// running out. A pass that woke past the whole hold of a level the device would otherwise never play (of
    /// the plan, or of the plan a change `replaced`) writes that level now instead, late rather than never, as
    /// the planner places a jump: it then drops the plan, so that the next one is made from the instant of this
    /// write, the device holding that level. The rest of the mix stays on time, and the level holds at least the
    /// minimum interval.
    ///
    /// Every write is counted when it went out (a command written early, within its lead, at its time), so the
    /// rate limit and the budget count from the writes the device saw. After one written late, the plan's next
    /// command may be due before they let it out: it waits until they do (`heldBack(until:at:)`), or until the
    /// renewal of the level held falls due, whose place it takes, and then the latest command due goes out, as
    /// after any late wake-up.
    private mutating func takeWrite(
        at now: Double, changeLead: Double, replaced: RumbleCommand?
    ) -> PassOutcome.Write? {
        let renewal = renewalDue
        var lead = lead(ofNextCommand: changeLead)
        // On the device's frames a renewal and a command less than a frame apart would be two calls for one frame
        // (`DeviceCommandPlanner.framesBetweenCalls`; the renewals stay on the grid of the last command, and the
        // grid may have moved by half a frame since): the command goes out in the renewal's place, early. Each
        // frame renews the level there, so the renewal interval is a frame.
        if profile.followsDeviceFrames, let renewal, now >= renewal {
            let frame = profile.budget.renewalInterval ?? 2 * profile.minimumUpdateInterval
            lead = max(lead, frame * DeviceCommandPlanner.framesBetweenCalls)
        }
        // One the budget counts, whose place a change may take for the same writes.
        let counted = budgetCountsRenewals ? renewal : nil
        // Asked only of a command due now (within its lead): one not yet due is not taken anyway.
        let waits =
            plan?.nextCommandTime.map { time in
                guard time <= now + lead + PlayerState.epsilon else { return false }
                // Once a renewal is due, only the minimum interval holds a command back: it goes out in the
                // renewal's place, for the same writes.
                if let counted, now >= counted {
                    return now < deviceHolds.lastCommandTime + profile.minimumUpdateInterval - PlayerState.epsilon
                }
                return heldBack(until: time, at: now) != nil
            } ?? false
        // The lead is an update's: a stop inside it waits for its time (a pad's frames take any command of the
        // frame's call window).
        let due =
            if waits {
                PlaybackPlan.Due()
            } else if profile.followsDeviceFrames {
                plan?.takeDue(at: now + lead) ?? PlaybackPlan.Due()
            } else {
                plan?.takeDue(at: now, updatesUntil: now + lead) ?? PlaybackPlan.Due()
            }
        if let missed = louder(due.loudestSkipped, replaced),
            missed.levels.wasMissed(held: lastWritten, sent: due.latest?.levels ?? lastWritten),
            budgetAffords(missed.levels, at: now)
        {
            recordCommand(missed.levels, at: now)
            plan = nil
            scheduler.invalidate(at: now)
            return .apply(missed.levels, deadline: missed.time, wokeLate: true)
        }
        if let command = due.latest {
            // On the device's frames a command is its frame's, whenever in its frame's call window it went out.
            let time = profile.followsDeviceFrames ? command.time : max(now, command.time)
            // Counted at its own time when it went out early (within its lead), as the planner counts it: a renewal
            // then never falls just before a command that would renew anyway, and comes at most the lead later than
            // the replay window's restart, well inside its margin. One written once a renewal was due takes that
            // renewal's place: the budget counts the renewals before it, which went out, and neither it nor any
            // after it, which did not.
            recordCommand(command.levels, at: time, dueAt: counted.map { min(time, $0) })
            return .apply(command.levels, deadline: command.time)
        }
        guard let renewal, now >= renewal else { return nil }
        if now > renewal + lateRenewalTolerance {
            // Counted when it went out, once: the budget keeps the renewals the device saw, and the next ones
            // fall due from it. The minimum interval still counts from the command.
            deviceHolds = DeviceCommandPlanner(profile: profile).resumption(
                afterRenewalDueAt: renewal, madeAt: now, from: deviceHolds)
            lastWriteTime = now
        } else {
            // Counted at its time, as the planner counts it; the next one falls due from then too, so that the
            // renewals the engine writes are the ones the budget counts (the device renews a little early).
            lastWriteTime = renewal
        }
        return .keepAlive(lastWritten, deadline: renewal)
    }

    /// How late a renewal may go out and still be counted at its time (`OutputTiming.lateRenewalTolerance`).
    private var lateRenewalTolerance: Double { OutputTiming.lateRenewalTolerance(for: profile) }

    /// The earliest time from `time` on at which the device takes a change: the minimum interval after the last
    /// command and the budget, counted from the writes it saw (`WriteBucket.earliest(from:)`, through the
    /// planner). A plan made from what the device holds never has a command before it; a plan whose write went
    /// out late may.
    private func commandsAllowedFrom(_ time: Double) -> Double {
        DeviceCommandPlanner(profile: profile).earliestChange(after: deviceHolds, from: time)
    }

    /// When a command due at `time`, written at `now` or at its time, must wait for the device to take it
    /// (`commandsAllowedFrom`): the time it may go out; nil when it may go out as planned.
    private func heldBack(until time: Double, at now: Double) -> Double? {
        let at = max(now, time)
        let allowed = commandsAllowedFrom(at)
        return allowed > at + PlayerState.epsilon ? allowed : nil
    }

    /// Whether the write budget takes `levels` written at `now`, outside the plan, and a change one minimum
    /// interval later. Otherwise the level is not written: the plan made after it would have to hold it until the
    /// budget came back, and on a profile whose renewals take most of its budget (`switch`: 25 of 26 writes a
    /// second) that is most of a second past the level's end.
    private func budgetAffords(_ levels: MotorMagnitudes, at now: Double) -> Bool {
        let after = DeviceCommandPlanner(profile: profile).resumption(
            after: RumbleCommand(time: now, levels: levels, holdDuration: nil), from: deviceHolds)
        let budget = profile.budget
        return after.writesLeft + budget.writesPerSecond * profile.minimumUpdateInterval >= budget.writesPerChange
    }

    /// The louder of two optional commands (`MotorMagnitudes.peak`), the first when they are equal.
    private func louder(_ first: RumbleCommand?, _ second: RumbleCommand?) -> RumbleCommand? {
        guard let first, let second else { return first ?? second }
        return second.levels.peak > first.levels.peak ? second : first
    }
}
