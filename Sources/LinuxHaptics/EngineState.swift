// Everything an engine knows, as one value: its phase, its output, its players and what the device holds.
// Only EngineCore holds it (in one Lock); the changes a playback pass or a lifecycle step makes are methods
// here, pure apart from the output and handler references they hand back for EngineCore to use outside the lock.
import HapticRendering

/// Where the engine is in its life; see docs/engine.md for the diagram.
enum EnginePhase: Sendable, Equatable {
    /// Created, or stopped by `stop()`.
    case stopped
    /// Output open, timer serving it.
    case running
    /// Output lost without `stop()`; waiting for the device (gameControllerDisconnect) or a new `start()`.
    case interrupted(HapticEngineStoppedReason)
    /// Auto-shutdown released the output; the next play re-opens it.
    case idle
    /// The engine object is gone.
    case destroyed
}

typealias CompletionHandler = @Sendable (HapticEngineError?) -> Void

struct EngineHandlers: Sendable {
    var stopped: (@Sendable (HapticEngineStoppedReason) -> Void)?
    var reset: (@Sendable () -> Void)?
    /// The players-finished handlers waiting, in the order asked for: each is called once.
    var playersFinished: [FinishedHandler] = []
}

typealias FinishedHandler = @Sendable (HapticEngineError?) -> HapticEngineFinishedAction

/// One run of an engine, from a start or a reset to the next stop or reset (`EngineState.run`); an idle and the
/// play that starts the engine again do not end it.
struct EngineRun: Equatable, Sendable {
    var stops: Int
    var reset: ResetGeneration
}

/// A player's pulse uploaded to its own effect slot (`prepare()`).
struct PreparedEffect: Sendable {
    var outputGeneration: OutputGeneration
    var id: Int
    /// Seconds of pattern time the pulse covers (the timeline's first, flat segment).
    var duration: Double
    /// The player's `controlsRevision` it was prepared with: controls taken since make it another level.
    var controlsRevision: Int
    /// Its trigger, bound ahead (`MotorOutput.pulseTrigger(prepared:)`).
    var trigger: any PulseTrigger
}

/// A player's plan when it starts alone on a device at rest (`PlaybackScheduler.soloPlan`), made for an output
/// generation's profile.
struct PlayerOpening: Sendable {
    /// In seconds from the start.
    let commands: [RumbleCommand]
    /// Seconds from the start at which the plan is made again (a long pattern's, at its last command); nil when
    /// the commands run to the pattern's end.
    let horizon: Double?
    /// `PlaybackPlan.horizonHolds`, in seconds from the start.
    let horizonHolds: DeviceCommandPlanner.Resumption?
    let outputGeneration: OutputGeneration
    /// The player's `controlsRevision` it was planned with: a control it took since (one held for later, taken
    /// while it waited) makes it another plan.
    let controlsRevision: Int
    /// What the start writes at once (the first command, when it falls at the start); nil when the first
    /// command comes later.
    let levels: MotorMagnitudes?

    init(plan: PlaybackPlan, outputGeneration: OutputGeneration = OutputGeneration(), controlsRevision: Int = 0) {
        commands = plan.commands
        horizon = plan.horizon.map { $0 - plan.origin }
        horizonHolds = plan.horizonHolds
        self.outputGeneration = outputGeneration
        self.controlsRevision = controlsRevision
        levels = commands.first.flatMap { $0.time == 0 ? $0.levels : nil }
    }
}

/// A player's opening uploaded, stopped, into the mix slot of a quiet device (`EngineCore.planOpening`), with
/// what a start needs to know to write it at once: the conditions `takeOpening` checks, worked out when it was
/// staged, and kept while the mix is unchanged; its start is armed while they hold (`EngineState.refreshStagedStart`,
/// `StagedStart`).
struct StagedOpening: Sendable {
    var player: PlayerID
    /// The mix as it was when staged: any change since (a player started, changed or ended, haptics muted) and a
    /// start goes the ordinary way.
    var revision: MixRevision
    var outputGeneration: OutputGeneration
    var levels: MotorMagnitudes
    /// The engine time from which the device is at rest (past the rate limit with its whole budget back), so that
    /// the opening, planned from rest, is what a pass would send. A prepared pulse still playing its length at the
    /// start sends it the ordinary way; one past its length is stopped just after the write.
    var restsFrom: Double
    /// The write budget left just after the opening (at rest, the same whenever it goes out).
    var writesLeft: Double
    /// The engine time it was staged at.
    var stagedAt: Double
    /// What writes it, bound once the output has staged it (`MotorOutput.stagedTrigger(for:)`): then a start may
    /// fire it armed (`StagedStart`).
    var trigger: (any PulseTrigger)?
}

/// A lone start whose opening went out before anything was planned (`EngineState.takeOpening`): the pass that
/// follows takes the rest of the player's solo plan (its `PlayerOpening`) as its own.
struct SoloStart: Sendable {
    var player: PlayerID
    /// The engine time the start was queued at: the plan's origin.
    var start: Double
    /// The mix as it was when the opening went out: any change since, and the pass plans as usual.
    var revision: MixRevision
}

/// A prepared pulse a start can trigger, and the output holding it.
/// What a player's start comes to (`EngineState.decideStart`).
enum StartDecision {
    /// Its prepared pulse is triggered now.
    case trigger(PreparedEffect)
    /// Its start is queued at this engine time for the mix; `holdsControls`: the player holds controls for later,
    /// which the start moves (`PlayerState.heldControlsPlacedAgain`).
    case queued(at: Double, holdsControls: Bool)
}

/// A prepared pulse triggered on its own slot, and the engine time its length ends.
struct TriggeredPulse: Sendable {
    var effect: Int
    var end: Double

    /// Its length is over at `now`, though the kernel may still be playing it (`isOver`).
    func hasEnded(at now: Double) -> Bool { end <= now + PlayerState.epsilon }

    /// Past its length and any overrun at `now`: the kernel has stopped it.
    func isOver(at now: Double) -> Bool { now > end + OutputTiming.pulseOverrunSeconds }
}

struct EngineState: Sendable {
    var phase = EnginePhase.stopped { didSet { publishStartGate() } }
    var output: (any MotorOutput)? { didSet { publishStartGate() } }
    /// Bumped on every open: a failure reported for an older output is stale.
    var outputGeneration = OutputGeneration() { didSet { publishStartGate() } }
    /// Bumped on every reset: players made before it are invalid.
    var resetGeneration = ResetGeneration() { didSet { publishStartGate() } }
    /// Counted on every stop or destroy (`stopEverything`): a start that began before one does not install its
    /// device, so that a stop which returned before the start got to its install still wins.
    var stops = 0

    /// The engine's run now: a stop, or a reset (the device back after an interruption), begins another.
    var run: EngineRun { EngineRun(stops: stops, reset: resetGeneration) }
    /// An idle pass lets the device go (`EngineCore.releaseIdleOutput`: the device closed, the sound stream, the
    /// hot-plug watch): a start waits until it is done, so that what the release lets go is the idle engine's only.
    var releasingIdleOutput = false
    /// Plays held from idling (`EngineCore.withIdleHeld`): deciding on a running engine, or carrying out what they
    /// decided. The engine does not idle under them, or a delay shorter than a start would idle it between each start
    /// a play made and its decision, or between a decision and its trigger.
    var playsDeciding = 0
    /// A pass found the engine due to idle while plays decided: the last of them to end wakes the timer, which idles
    /// it then if nothing plays.
    var idleHeldForPlays = false
    /// Whether an armed start may fire, published on every change of what it depends on (`ArmedStart.swift`).
    let startGate = StartGate()
    /// Players' armed starts: each armed while its prepared pulse is what `decideStart` would trigger. Added
    /// through `addArmedStart`, which hands it the gate's token.
    var armedStarts: [PlayerID: ArmedStart] = [:]
    /// The engine plays sound: a player with sound never takes an armed start (its rumble waits for its sound).
    var playsSound = false
    var scheduler = PlaybackScheduler() { didSet { refreshStagedStart() } }
    /// The profile the output is planned for: the option's, or the one chosen from the device on open.
    var profile: RenderProfile
    /// The mix is planned at gain 0 (the motors rest while players play on), and no prepared pulse fires.
    var hapticsMuted = false { didSet { publishStartGate() } }
    /// The device commands for the current mix (nil: plan on the next pass).
    var plan: PlaybackPlan?
    /// The mix's revision when its plan was dropped for a level the thread slept through (`takeWrite`): while the
    /// mix is still that one, the next plan goes on across the instant it is made from, as the whole plan would.
    var droppedForLateLevel: MixRevision?
    /// What the device holds as a plan resumes it, in engine time: the last command's levels and time (where the
    /// rate limit resumes from), and the write the budget counts from with the writes left after it. Kept by the
    /// planner's own rules (`DeviceCommandPlanner.resumption(after:from:)`, and
    /// `resumption(afterRenewalDueAt:madeAt:from:)` for a renewal made late).
    var deviceHolds = DeviceCommandPlanner.Resumption.deviceOff
    /// The levels the device holds: the last command's (quantised to the profile).
    var lastWritten: MotorMagnitudes {
        get { deviceHolds.sent }
        set { deviceHolds.sent = newValue }
    }
    /// Engine time of the last primitive written (command or keep-alive): the self-expiry window's start.
    var lastWriteTime = -Double.infinity
    var idleSince: Double?
    var wasActive = false
    var handlers = EngineHandlers()
    /// Stopped and reset handlers of a lost or returned device decided on and not yet returned
    /// (`EngineCore.deliver`).
    var handlerCallsInFlight = 0
    var completions: [PlayerID: CompletionHandler] = [:]

    /// The completion handlers a stop or a lost output cuts off: those of players still playing, paused or with
    /// a start pending (`PlayerState.awaitsCompletion`). A player that already finished was told, once, even with
    /// a stop still scheduled after its end.
    var activeCompletions: [CompletionHandler] {
        completions.compactMap { id, completion in
            scheduler.players[id]?.awaitsCompletion == true ? completion : nil
        }
    }
    var prepared: [PlayerID: PreparedEffect] = [:] { didSet { refreshStagedStart() } }
    /// The players whose pulses were prepared on a device the engine let go of without a stop or a reset (it
    /// idled, or the device failed): the next start prepares them again on the device it opens. A stop lets them
    /// go, and a reset forgets the players.
    var preparedBeforeRelease: [PlayerID] = []
    /// Players' openings, planned ahead; dropped when a player changes.
    var openings: [PlayerID: PlayerOpening] = [:]
    /// A lone start whose opening was written, for the pass that follows to take its plan from.
    var soloStart: SoloStart?
    /// The opening staged on the mix slot, while the device is quiet.
    var stagedOpening: StagedOpening? { didSet { refreshStagedStart() } }
    /// A start of the staged opening made ready ahead, armed whenever it is what a start now would write.
    let stagedStart = StagedStart()
    /// What the staged start is armed with (its opening's player and mix revision, its gate and time), or nil.
    private var stagedStartArmed: StagedStartKey?
    /// Pulses triggered lately. The kernel rounds a replay up to whole ticks, so a pulse can outlive its length
    /// by up to `OutputTiming.pulseOverrunSeconds`; a command of the mix in that window (a transient's decay
    /// taking over from its prepared top, say) stops it first, and a start's opening just after its write
    /// (`takeEndedPulses`), or the device would play both summed until the kernel's tick.
    var triggeredPulses: [TriggeredPulse] = [] { didSet { refreshStagedStart() } }
    var watch: (any OutputWatch)?
    var timer: (any HapticTimer)?
    /// What a pass on a caller's thread had to call back, for the timer's next pass to call on its thread.
    var deferredCallbacks: [@Sendable () -> Void] = []

    init(profile: RenderProfile) { self.profile = profile }

    /// A freshly opened output becomes the one the engine plays on, from a clean device state.
    mutating func install(_ output: any MotorOutput, profile: RenderProfile, now: Double) {
        self.output = output
        outputGeneration.advance()
        phase = .running
        self.profile = profile
        plan = nil
        deviceHolds = .deviceOff
        lastWriteTime = -.infinity
        idleSince = now
        prepared.removeAll()
        openings.removeAll()
        soloStart = nil
        stagedOpening = nil
        triggeredPulses.removeAll()
    }

    /// What the engine is doing, in one line, for a test that failed to say more than "it did not play":
    /// its phase, its players and what they wait for, the plan against the players' revision, and what the
    /// device holds.
    var summary: String {
        let players = scheduler.players.keys.sorted().map { id -> String in
            let player = scheduler.players[id]
            let orphaned = player?.isOrphaned == true ? ", released" : ""
            return "\(id.rawValue): \(player?.phase.rawValue ?? "?"), \(player?.pendingCount ?? 0) queued\(orphaned)"
        }
        let planned = plan.map { plan in
            "\(plan.commands.count - plan.next) of \(plan.commands.count) commands left, next at "
                + "\(plan.nextCommandTime.map { "\($0)" } ?? "none"), "
                + (plan.revision == scheduler.revision ? "current" : "stale")
        }
        return
            "phase \(phase), output \(output == nil ? "none" : "open"), players [\(players.joined(separator: "; "))], "
            + "plan \(planned ?? "none"), holds \(lastWritten) since \(lastWriteTime), last command at "
            + "\(deviceHolds.lastCommandTime), pulses \(triggeredPulses.count), timer \(timer == nil ? "none" : "running")"
    }

    /// The planner for the open output's profile, with the engine's `gain` on top of the profile's (none while
    /// haptics are muted). A value: plan with it outside the lock.
    func planner(gain: Double) -> DeviceCommandPlanner {
        DeviceCommandPlanner(profile: profile.withGain(profile.gain * (hapticsMuted ? 0 : gain)))
    }

    /// A prepared pulse for player `id` that is still valid on the open output, if the player can use it (the
    /// pulse is fixed in device time: only a plain start from the top can, with the controls it was prepared with
    /// and none held for later).
    func usablePreparedEffect(for id: PlayerID) -> PreparedEffect? {
        guard let effect = prepared[id], effect.outputGeneration == outputGeneration, output != nil, !hapticsMuted,
            let player = scheduler.players[id], player.rate == 1, !player.loopEnabled, player.startOffset == 0,
            player.controlsRevision == effect.controlsRevision, player.heldControls.isEmpty, !player.isMuted
        else { return nil }
        return effect
    }

    /// The gate's token now: open while running on an output with haptics on.
    var startGateToken: UInt64 {
        guard phase == .running, output != nil, !hapticsMuted else { return 0 }
        return StartGate.token(output: outputGeneration, reset: resetGeneration)
    }

    /// The gate published, to the engine's word and every player's armed start, and the staged start re-armed
    /// under it.
    private mutating func publishStartGate() {
        let token = startGateToken
        startGate.publish(token)
        for armedStart in armedStarts.values { armedStart.publish(token) }
        refreshStagedStart()
    }

    /// Adds player `id`'s armed start, with the gate as it is now.
    mutating func addArmedStart(_ armedStart: ArmedStart, of id: PlayerID) {
        armedStart.publish(startGateToken)
        armedStarts[id] = armedStart
    }

    /// Arms player `id`'s start with its prepared pulse when a start now would trigger it (`decideStart`) and
    /// it has no sound to wait for; disarms it otherwise. Called whenever the player or its pulse changes.
    func refreshArmedStart(of id: PlayerID) {
        guard let armedStart = armedStarts[id] else { return }
        let token = startGateToken
        var wanted: ArmedStart.Armed?
        if token != 0, !(playsSound && playerHasSound(id)), let effect = usablePreparedEffect(for: id) {
            wanted = ArmedStart.Armed(effect: effect, gate: token)
        }
        let current = armedStart.current
        if current?.effect.trigger === wanted?.effect.trigger, current?.gate == wanted?.gate { return }
        armedStart.arm(wanted)
    }

    static let stalePlayer = HapticEngineError(.playerInvalidated, "the engine's output was reset: make a new player")
    static let destroyedEngine = HapticEngineError(.notRunning, "the engine was destroyed")

    /// For a play: a stopped or destroyed engine refuses it (one that idled or waits for its device is started by
    /// the play).
    func requireStarted() throws(HapticEngineError) {
        switch phase {
        case .stopped: throw HapticEngineError(.notRunning, "the engine is stopped: call start() first")
        case .destroyed: throw Self.destroyedEngine
        case .running, .idle, .interrupted: return
        }
    }

    /// For a play's decision, under the lock it is made in: true on a running engine; false on one that idled or
    /// lost its device since the play started it (the play starts it again: a start or resume queued on an engine
    /// with no output would play at its next `start()`, however much later); a stopped or destroyed engine refuses
    /// the play.
    func runsForAPlay() throws(HapticEngineError) -> Bool {
        try requireStarted()
        return phase == .running
    }

    /// Fails with `notRunning` on a destroyed engine (every command of its players does: until 6 December a stop,
    /// seek, parameter or cancel returned normally and changed a player no engine would play), and with
    /// `playerInvalidated` when player `id`, made in reset generation `generation`, is gone.
    func requirePlayer(_ id: PlayerID, generation: ResetGeneration) throws(HapticEngineError) {
        guard phase != .destroyed else { throw Self.destroyedEngine }
        guard resetGeneration == generation, scheduler.players[id] != nil else { throw Self.stalePlayer }
    }

    /// Whether player `id` has sound to play (a pattern with audio events, on an engine that plays audio).
    func playerHasSound(_ id: PlayerID) -> Bool {
        scheduler.players[id]?.source?.audio != nil
    }

    /// `start`, or later when the output is a stream that has already queued past it: the first moment from
    /// which a pattern started on it is played from its first sample (`PatternStream.startLead`), as a player
    /// with sound waits for the sound's latency.
    func wholeStart(_ start: Double, now: Double) -> Double {
        guard let stream = output as? any PatternStreamOutput else { return start }
        return max(start, now + stream.startLead)
    }

    /// How a start of player `id` at `start` (engine time, not before `now`) goes: its prepared pulse triggered,
    /// when it starts now from the top and has one for this output, else queued for the mix to play whole.
    mutating func decideStart(of id: PlayerID, generation: ResetGeneration, at start: Double, now: Double)
        throws(HapticEngineError)
        -> StartDecision
    {
        try requirePlayer(id, generation: generation)
        if start <= now, let prepared = usablePreparedEffect(for: id) { return .trigger(prepared) }
        return .queued(at: start, holdsControls: queueStart(id, at: start, now: now))
    }

    /// Queues player `id`'s start at `time`, with no prepared pulse covering its opening: the mix plays it
    /// whole, planned again from `now`. Returns whether the player holds controls for later.
    @discardableResult
    mutating func queueStart(_ id: PlayerID, at time: Double, now: Double) -> Bool {
        let holds = scheduler.withPlayer(id) { player -> Bool in
            player.schedule(.start, at: time)
            return !player.heldControls.isEmpty
        }
        scheduler.preparedPlayers[id] = nil
        scheduler.invalidate(at: now)
        return holds ?? false
    }

    /// Player `id`'s planned opening, while it holds: planned for the open output, with the controls the player has
    /// now (one it took since, held for later and taken while it waited, makes another plan).
    func currentOpening(of id: PlayerID) -> PlayerOpening? {
        guard let opening = openings[id], opening.outputGeneration == outputGeneration,
            opening.controlsRevision == scheduler.players[id]?.controlsRevision
        else { return nil }
        return opening
    }

    /// For a start of player `id` queued at `start` (due now): its opening, when a pass at `now` would send
    /// exactly that first, recorded as sent, with the prepared pulses to stop just after its write (their length
    /// over, their overrun not: `takeEndedPulses`). That holds when the
    /// opening was planned for this output, the player starts plainly from its top with nothing else queued, no
    /// other player plays or waits, and the device is at rest: off, past the rate limit, no prepared pulse still
    /// playing its length. The mix is then the player's alone, from its start: the pass that follows takes the
    /// rest of its solo plan as its own (`adoptSoloStart`) and plans nothing before that plan's horizon: up to
    /// there the mix was planned when the player was made.
    /// Nothing but this bookkeeping happens before the write.
    mutating func takeOpening(of id: PlayerID, startedAt start: Double, at now: Double)
        -> (levels: MotorMagnitudes, stopping: [Int])?
    {
        guard phase == .running, output != nil, let levels = currentOpening(of: id)?.levels,
            deviceIsAtRest(for: start, at: now), startsAloneFromItsTop(id)
        else { return nil }
        recordCommand(levels, at: start)
        soloStart = SoloStart(player: id, start: start, revision: scheduler.revision)
        return (levels, takeEndedPulses(at: now))
    }

    /// While the device is quiet at `now`: player `id`'s opening, to be staged on the mix slot and noted as
    /// staged, so that the player's start is one write (`StagedStart`, armed once the output has bound its trigger).
    /// Nil when the device is not quiet, the opening does not begin at once, or the player's start must wait for
    /// its sound. The staged start is disarmed first, waiting out a write in flight: from here until the output has
    /// staged the new levels no start writes the slot, and a start that went out and is not recorded yet holds the
    /// device, so nothing is staged.
    mutating func stageOpening(of id: PlayerID, at now: Double) -> MotorMagnitudes? {
        let wentOut = stagedStart.arm(nil)
        stagedStartArmed = nil
        // Armed again when nothing is staged after all.
        defer { refreshStagedStart() }
        guard !wentOut, output != nil, let levels = currentOpening(of: id)?.levels, isQuiet(at: now)
        else { return nil }
        let planner = DeviceCommandPlanner(profile: profile)
        if !(playsSound && playerHasSound(id)), !(output is any PatternStreamOutput),
            startsAloneFromItsTop(id, queued: 0), let deviceRests = planner.restsFrom(deviceHolds)
        {
            let after = planner.resumption(
                after: RumbleCommand(time: 0, levels: levels, holdDuration: nil), from: .deviceOff)
            stagedOpening = StagedOpening(
                player: id, revision: scheduler.revision, outputGeneration: outputGeneration, levels: levels,
                restsFrom: deviceRests, writesLeft: after.writesLeft, stagedAt: now)
        } else {
            stagedOpening = nil
        }
        return levels
    }

    /// The staged opening of player `id` (staged at `levels`) gets the output's trigger for it, unless something
    /// changed it meanwhile; its start is then armed.
    mutating func bindStagedTrigger(_ trigger: any PulseTrigger, of id: PlayerID, levels: MotorMagnitudes) {
        guard var staged = stagedOpening, staged.player == id, staged.levels == levels, staged.trigger == nil else {
            return
        }
        staged.trigger = trigger
        stagedOpening = staged
    }

    /// Arms the staged start when a start now of the staged player would write the staged opening: the opening
    /// bound to a trigger, planned for this output and for the mix as it is (no player started, changed or ended
    /// since, no pulse triggered), the engine running with haptics on, the player without a prepared pulse it
    /// could trigger; and from the time the device is at rest and every prepared pulse's length is over (the
    /// conditions the pass's own opening has, `takeOpening`). Disarms it otherwise. Called whenever any of these
    /// may have changed; cheap when nothing is staged.
    mutating func refreshStagedStart() {
        // Nothing armed, and nothing staged for the mix as it is: nothing to do (the common case while anything
        // plays, and on the ordinary start's way to its write).
        if stagedStartArmed == nil, stagedOpening?.trigger == nil || stagedOpening?.revision != scheduler.revision {
            return
        }
        let wanted = wantedStagedStart()
        guard wanted?.key != stagedStartArmed else { return }
        let armed = wanted.map { StagedStart.Armed(key: $0.key, staged: $0.staged, trigger: $0.trigger) }
        let wentOut = stagedStart.arm(armed)
        stagedStartArmed = wentOut ? nil : wanted?.key
    }

    /// What the staged start should be armed with now, if anything.
    private func wantedStagedStart() -> (staged: StagedOpening, trigger: any PulseTrigger, key: StagedStartKey)? {
        guard let staged = stagedOpening, let trigger = staged.trigger, staged.revision == scheduler.revision,
            staged.outputGeneration == outputGeneration,
            prepared.isEmpty || usablePreparedEffect(for: staged.player) == nil
        else { return nil }
        let gate = startGateToken
        guard gate != 0 else { return nil }
        // A pulse's length is over at `now` once `now + epsilon` reaches its end (`TriggeredPulse.hasEnded`).
        let pulsesEnd = triggeredPulses.lazy.map { $0.end - PlayerState.epsilon }.max() ?? -.infinity
        let notBefore = max(staged.restsFrom, pulsesEnd)
        let key = StagedStartKey(
            player: staged.player, revision: staged.revision, gate: gate,
            notBefore: notBefore <= staged.stagedAt ? -.infinity : notBefore, trigger: ObjectIdentifier(trigger))
        return (staged, trigger, key)
    }

    /// After the armed staged start's write at `now` (`StagedStart.fire`): the start recorded as the pass's own
    /// opening records one (what the device holds from `now`, the write budget left), and queued as
    /// `recordStagedStart` queues it; returns the prepared pulses to stop now, their length over but the kernel
    /// maybe still playing them (`takeEndedPulses`). A start written just after a reset or a new output records
    /// nothing: that output is gone. Nil, with nothing recorded, when the engine no longer runs (a `stop()` on
    /// another thread, or the device failed, since the write): the start goes the ordinary way, which a stopped
    /// engine refuses. Until 7 December it was queued on the stopped engine and played at its next `start()`.
    mutating func recordStagedStartWent(_ staged: StagedOpening, generation: ResetGeneration, at now: Double) -> [Int]?
    {
        defer { stagedStart.recorded() }
        guard phase == .running else { return nil }
        guard staged.outputGeneration == outputGeneration, resetGeneration == generation else { return [] }
        if stagedOpening?.player == staged.player { stagedOpening = nil }
        deviceHolds = .init(sent: staged.levels, lastCommandTime: now, writesLeft: staged.writesLeft)
        lastWriteTime = now
        let stopping = takeEndedPulses(at: now)
        recordStagedStart(staged, generation: generation, at: now)
        return stopping
    }

    /// After a staged opening's write: the start recorded as `decideStart` and `takeOpening` record one, the
    /// start queued at `now` and, when the mix did not change since it was staged, the pass to follow taking the
    /// rest of the player's solo plan as its own. When it did change (another player started meanwhile),
    /// the pass plans the mix from what the device holds; after a reset or a new output, nothing is left to record.
    mutating func recordStagedStart(_ staged: StagedOpening, generation: ResetGeneration, at now: Double) {
        guard resetGeneration == generation, outputGeneration == staged.outputGeneration,
            scheduler.players[staged.player] != nil
        else { return }
        let alone = scheduler.revision == staged.revision
        queueStart(staged.player, at: now, now: now)
        if alone { soloStart = SoloStart(player: staged.player, start: now, revision: scheduler.revision) }
    }

    /// Notes a command written with `levels` for engine time `time`, its writes taken from the budget, and the
    /// renewals of its level due from `time` on, where the budget counts them. One due earlier, at `due`, with
    /// nothing written since, takes the place of the renewals due from then on
    /// (`DeviceCommandPlanner.resumption(after:madeAt:from:)`).
    mutating func recordCommand(_ levels: MotorMagnitudes, at time: Double, dueAt due: Double? = nil) {
        deviceHolds = DeviceCommandPlanner(profile: profile).resumption(
            after: RumbleCommand(time: due ?? time, levels: levels, holdDuration: nil), madeAt: time,
            from: deviceHolds)
        lastWriteTime = time
    }

    /// Nothing plays or waits to at `now`: the motors rest, no player is active, no pulse plays its length (one
    /// the kernel may still be playing past it is stopped just after the opening's write).
    func isQuiet(at now: Double) -> Bool {
        lastWritten.isOff && !scheduler.players.values.contains { $0.isActive } && pulsesHaveEnded(at: now)
    }

    /// The device holds nothing a command at `start` would have to follow: off, past the rate limit with its
    /// whole write budget, and no prepared pulse still playing its length at `now`.
    private func deviceIsAtRest(for start: Double, at now: Double) -> Bool {
        DeviceCommandPlanner(profile: profile).isAtRest(deviceHolds, at: start) && pulsesHaveEnded(at: now)
    }

    /// Every triggered pulse's length is over at `now`.
    private func pulsesHaveEnded(at now: Double) -> Bool { triggeredPulses.allSatisfy { $0.hasEnded(at: now) } }

    /// For a write of the mix at `now`: the triggered pulses to stop with it (their length over, not their
    /// overrun: the kernel may still be playing them), and every pulse whose length is over forgotten.
    mutating func takeEndedPulses(at now: Double) -> [Int] {
        guard !triggeredPulses.isEmpty else { return [] }
        let stopping = triggeredPulses.filter { $0.hasEnded(at: now) && !$0.isOver(at: now) }.map(\.effect)
        triggeredPulses.removeAll { $0.hasEnded(at: now) }
        return stopping
    }

    /// Player `id` starts plainly from its top (`queued` commands pending: its start, or none before it is
    /// asked; normal rate, no loop, no control held for later, not muted, a pattern that lasts) and no other player
    /// plays or waits: the mix is its own.
    private func startsAloneFromItsTop(_ id: PlayerID, queued: Int = 1) -> Bool {
        guard let player = scheduler.players[id], player.pendingCount == queued, player.heldControls.isEmpty,
            !player.isMuted, player.rate == 1,
            !player.loopEnabled, player.startOffset == 0, player.duration > PlayerState.epsilon
        else { return false }
        return !scheduler.players.contains { $0.key != id && $0.value.isActive }
    }

    /// After a lone start wrote its opening (`takeOpening`), and only if nothing changed the mix since: the
    /// start is applied (the player's only queued command; its pattern outlasts the instant it starts at) and
    /// the rest of its solo plan becomes the engine's, horizon included, as the pass would have planned it.
    mutating func adoptSoloStart() {
        guard let solo = soloStart else { return }
        soloStart = nil
        guard solo.revision == scheduler.revision, scheduler.players[solo.player]?.pendingCount == 1,
            let opening = currentOpening(of: solo.player)
        else { return }
        scheduler.withPlayer(solo.player) { _ = $0.advance(to: solo.start) }
        _ = scheduler.consumeChanges()
        plan = PlaybackPlan(
            revision: scheduler.revision, commands: opening.commands, origin: solo.start, next: 1,
            horizon: opening.horizon.map { solo.start + $0 }, horizonHolds: opening.horizonHolds)
    }
}
