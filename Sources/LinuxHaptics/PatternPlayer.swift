// Core Haptics' pattern players: commands at engine times, dynamic parameters, and (advanced) pause, resume,
// seek, loop, rate and completion. A player is a handle on its state in the engine's scheduler; after a reset
// its calls fail with `playerInvalidated` and a new player must be made.
public import AHAP

/// `CHHapticPatternPlayer`. Times are engine times (`HapticEngine.currentTime`); 0 or a time already
/// past means now. A time or offset that is not a finite number (NaN, an infinity) throws `invalidArgument`
/// and changes nothing.
public protocol HapticPatternPlayer: AnyObject, Sendable {
    /// Starts the pattern at `time` from its top (a player playing or paused starts over; one sought while it was
    /// not playing starts where the seek put it). A player with sound starts no sooner than its sound can be heard
    /// from its first frame (the sound output's latency): haptics and sound begin together.
    func start(atTime time: Double) throws(HapticEngineError)
    func stop(atTime time: Double) throws(HapticEngineError)
    /// Applies dynamic parameters at `time` (their own relative times are not used), as the pattern's own would act:
    /// the haptic controls (intensity, sharpness, attack, decay, release) and the audio ones. The player holds them
    /// until `time` and places them in the pattern where it will be then (its queued start, pause or resume
    /// counted, and placed again when a later call, a command, a seek, a rate or a loop, moves that). Each replaces
    /// what was sent before for its identifier from `time` on (what acts until then keeps acting); on a looping
    /// player it acts from the start of every later pass too. A `cancel()` or the engine's stop drops those still
    /// held.
    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError)
    /// Applies a parameter curve starting at `time`, which takes the place of the curve's own relative time (as in
    /// Core Haptics), placed and replacing what was sent before for its identifier as `sendParameters` does.
    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError)
    /// Stops now, dropping pending commands; the completion handler gets `cancelled`.
    func cancel() throws(HapticEngineError)
    /// Silences the player's haptics and sound from now on while it plays on in time (Core Haptics' `isMuted`):
    /// its commands, controls and completion are as unmuted; set back to false, it is heard again from where it
    /// is. A prepared pulse already fired plays out its length (at most a transient's 40 ms).
    var isMuted: Bool { get set }
    /// Uploads the pattern's opening ahead as one effect, so `start(atTime: 0)` reaches the device with one
    /// write. The opening is the rendered timeline's first segment when it is flat from time 0 (a transient's
    /// flat top); the rest plays through the mix after it. Returns false (and the player plays through the mix
    /// as usual) when the pattern opens with a ramp or silence, or the device has no slot to spare. Controls sent
    /// after it (`sendParameters`, `scheduleParameterCurve`) send the start through the mix, at the level they
    /// make, until it is called again. The upload
    /// is made again when an engine that idled (`autoShutdownDelay`) or lost its device to an error starts again;
    /// a stop lets it go, and a reset forgets the player.
    @discardableResult func prepare() throws(HapticEngineError) -> Bool
}

/// `CHHapticAdvancedPatternPlayer`.
public protocol HapticAdvancedPatternPlayer: HapticPatternPlayer {
    func pause(atTime time: Double) throws(HapticEngineError)
    /// Goes on from where the player was paused at `time`; a player with sound no sooner than its sound can be heard
    /// from there, as a start waits for it.
    func resume(atTime time: Double) throws(HapticEngineError)
    func seek(toOffset offset: Double) throws(HapticEngineError)
    var loopEnabled: Bool { get set }
    /// Pattern time where a loop goes back to 0; 0 means the pattern's duration.
    var loopEnd: Double { get set }
    /// Pattern seconds per engine second. A value of 0 or below, or not a finite number, is ignored, as in Core
    /// Haptics; one below 0.01 is taken as 0.01 (and reads back so), where Core Haptics takes any positive rate.
    var playbackRate: Double { get set }
    /// Called when the player finishes, is stopped (nil), or is cancelled or cut off (an error).
    var completionHandler: (@Sendable (HapticEngineError?) -> Void)? { get set }
    /// Where the player is in its pattern, seconds.
    var currentOffset: Double { get }
    var phase: PlayerPhase { get }
    /// The pattern time the player ends at (and loops at, unless `loopEnd` says otherwise): its haptics' end,
    /// or its last sound's when that is later (an `AudioCustom` file's length counts).
    var duration: Double { get }
}

/// A start now of one of this engine's players, holding no reference to it: for a caller that keeps the player
/// alive itself and starts it often (`HapticManager`'s prepared patterns), the start is a direct call of the
/// player's `start(atTime: 0)`, with no protocol witness and no reference count changed before its write.
package struct UnretainedStart: Sendable {
    private let player: Unmanaged<PatternPlayer>

    /// The start of `player`; nil when it is not one of this engine's players.
    package init?(_ player: any HapticPatternPlayer) {
        guard let player = player as? PatternPlayer else { return nil }
        self.player = .passUnretained(player)
    }

    /// `start(atTime: 0)` of the player, which the caller keeps alive.
    @inline(__always)
    package func start() throws(HapticEngineError) {
        let failure = player._withUnsafeGuaranteedRef { player -> HapticEngineError? in
            do throws(HapticEngineError) { try player.start(atTime: 0) } catch { return error }
            return nil
        }
        if let failure { throw failure }
    }
}

final class PatternPlayer: HapticAdvancedPatternPlayer {
    private let core: EngineCore
    private let id: PlayerID
    private let generation: ResetGeneration
    /// Armed while a start now is its prepared pulse's trigger (`ArmedStart.swift`), with the engine's gate.
    private let armedStart: ArmedStart

    init(core: EngineCore, id: PlayerID, generation: ResetGeneration, armedStart: ArmedStart) {
        self.core = core
        self.id = id
        self.generation = generation
        self.armedStart = armedStart
    }

    deinit { core.playerReleased(id, generation: generation) }

    /// Runs `body` on this player's state in the engine, failing if a reset made the player stale.
    private func update<T>(
        changesMix: Bool = true, _ body: (inout PlayerState, Double) -> T
    ) throws(HapticEngineError) -> T {
        try core.updatePlayer(id, generation: generation, changesMix: changesMix, body)
    }

    /// A read of the player's state, or `fallback` when the player is stale.
    private func read<T>(_ fallback: T, _ body: (PlayerState, Double) -> T) -> T {
        (try? update(changesMix: false) { player, now in body(player, now) }) ?? fallback
    }

    private func effectiveTime(_ time: Double, now: Double) -> Double { max(time, now) }

    /// `invalidArgument` for a time or offset that is not a finite number: NaN, an infinity. Such a value is a
    /// caller's mistake (a division by zero, an unset variable) that read as "now" would hide.
    private func requireFinite(_ value: Double, _ what: String) throws(HapticEngineError) {
        guard value.isFinite else {
            throw HapticEngineError(
                .invalidArgument, "\(what) \(value) is not a number of seconds: give a finite one (0 for now)")
        }
    }

    /// A start now of a player whose start is armed is its prepared pulse's write, before anything else; the
    /// engine records it afterwards. Any other start decides under the engine's lock (`EngineCore.startPlayer`).
    func start(atTime time: Double) throws(HapticEngineError) {
        try requireFinite(time, "start time")
        if time <= 0, let outcome = armedStart.fire() {
            return try core.armedStartWent(outcome, id: id, generation: generation)
        }
        try core.startPlayer(id, generation: generation, at: time)
    }

    func stop(atTime time: Double) throws(HapticEngineError) {
        try requireFinite(time, "stop time")
        try update { player, now in player.schedule(.stop, at: effectiveTime(time, now: now)) }
    }

    func pause(atTime time: Double) throws(HapticEngineError) {
        try requireFinite(time, "pause time")
        try update { player, now in player.schedule(.pause, at: effectiveTime(time, now: now)) }
    }

    /// On a running engine, started again where it idled or lost its device; a player with sound resumes when its
    /// sound can be heard (`EngineCore.resumePlayer`).
    func resume(atTime time: Double) throws(HapticEngineError) {
        try requireFinite(time, "resume time")
        try core.resumePlayer(id, generation: generation, at: time)
    }

    func seek(toOffset offset: Double) throws(HapticEngineError) {
        try requireFinite(offset, "offset")
        try update { player, now in player.seek(to: offset, now: now) }
    }

    func cancel() throws(HapticEngineError) { try core.cancelPlayer(id, generation: generation) }

    /// A control's value or time that is not a number is refused, naming the parameter, before anything changes:
    /// a NaN attack, decay or release time trapped the renderer.
    private func requireFiniteValues(_ values: [Double], of parameter: HapticDynamicParameter.ID, _ what: String)
        throws(HapticEngineError)
    {
        guard let bad = values.first(where: { !$0.isFinite }) else { return }
        throw HapticEngineError(
            .invalidArgument, "\(what) of \(parameter.rawValue) is \(bad): give a finite number")
    }

    func sendParameters(_ parameters: [HapticDynamicParameter], atTime time: Double) throws(HapticEngineError) {
        try requireFinite(time, "parameter time")
        for parameter in parameters {
            try requireFiniteValues([parameter.value], of: parameter.parameterID, "the value")
        }
        try core.changeControls(id, generation: generation) { player, now in
            player.controlsChange(sending: parameters, at: effectiveTime(time, now: now), now: now)
        }
    }

    func scheduleParameterCurve(_ curve: HapticParameterCurve, atTime time: Double) throws(HapticEngineError) {
        try requireFinite(time, "curve time")
        try requireFiniteValues(curve.controlPoints.map(\.value), of: curve.parameterID, "a control point's value")
        try requireFiniteValues(
            curve.controlPoints.map(\.relativeTime) + [curve.relativeTime], of: curve.parameterID,
            "a control point's time")
        try core.changeControls(id, generation: generation) { player, now in
            player.controlsChange(scheduling: curve, at: effectiveTime(time, now: now), now: now)
        }
    }

    @discardableResult
    func prepare() throws(HapticEngineError) -> Bool { try core.preparePlayer(id, generation: generation) }

    var isMuted: Bool {
        get { read(false) { player, _ in player.isMuted } }
        set { _ = try? update { player, _ in player.isMuted = newValue } }
    }

    var loopEnabled: Bool {
        get { read(false) { player, _ in player.loopEnabled } }
        set { _ = try? update { player, now in player.setLoopEnabled(newValue, at: now) } }
    }

    var loopEnd: Double {
        get { read(0) { player, _ in player.loopEnd } }
        set { _ = try? update { player, now in player.setLoopEnd(newValue, at: now) } }
    }

    var playbackRate: Double {
        get { read(1) { player, _ in player.rate } }
        set { _ = try? update { player, now in player.setRate(newValue, now: now) } }
    }

    var completionHandler: (@Sendable (HapticEngineError?) -> Void)? {
        get { core.completionHandler(of: id, generation: generation) }
        set { core.setCompletionHandler(of: id, generation: generation, to: newValue) }
    }

    /// Never before the pattern's start, also during a lead-in (`PlayerState.leadIn`).
    var currentOffset: Double { read(0) { player, now in max(player.offset(at: now), 0) } }

    var phase: PlayerPhase { read(.stopped) { player, _ in player.phase } }

    var duration: Double { read(0) { player, _ in player.duration } }
}
