// A player's state machine, pure: commands queued at engine times, the pattern offset as a function of
// engine time (rate, pause, seek, loop), run-time controls, and the next time its output changes. No clock
// and no I/O: the scheduler advances it to "now" and asks it for levels and its next change point.
import AHAP
import HapticRendering

/// Where a player is in its life.
public enum PlayerPhase: String, Sendable, Hashable {
    /// Created (or stopped, or finished) and not scheduled to play.
    case idle
    case playing
    case paused
    /// Reached the end of the pattern.
    case finished
    /// Stopped by `stop(atTime:)` or by the engine stopping.
    case stopped
    /// Cancelled: stopped at once, its pending commands dropped.
    case cancelled
}

/// Something a player did that its owner reports (completion handlers, `notifyWhenPlayersFinished`).
enum PlayerEvent: Sendable, Hashable {
    case finished
    case stopped
}

enum PlayerCommand: Sendable, Hashable {
    case start, stop, pause, resume
}

struct PlayerState: Sendable {
    /// A guard against floating-point rounding at breakpoints: a wake-up computed for a boundary may land
    /// a hair before it. 100 ns is far below any motor's time scale.
    static let epsilon = 1e-7
    /// The slowest playback rate taken: a smaller positive rate plays at this one (0 or below is ignored, as Core
    /// Haptics ignores it).
    static let minimumRate = 0.01

    /// What the player plays; rendered again when run-time controls arrive.
    private(set) var timeline: MotorTimeline
    /// The pattern time its last sound ends at (0 without sound): a pattern lasts until its haptics and its
    /// audio have both ended, as a Core Haptics pattern's duration covers its audio events.
    private var soundEnd = 0.0
    /// The pattern time the player ends at (and a loop starts again at, unless `loopEnd` says otherwise): where its
    /// motors stop, its sound ends, or its pattern's events end (`PatternSource.eventsEnd`), whichever is last.
    var duration: Double { max(timeline.endTime, soundEnd, source?.eventsEnd ?? 0) }
    /// The pattern and renderer, for players made from a pattern (nil for a timeline made elsewhere).
    let source: PatternSource?
    /// Parameters and curves sent while it runs, in pattern time (the renderer's form).
    private(set) var controls = RuntimeControls.none
    /// Bumped whenever `controls` change: the player's sound, rendered with them, must be made again.
    private(set) var controlsRevision = 0
    private(set) var phase: PlayerPhase = .idle
    /// The engine time the player reached its pattern's end at, while it stays as it was then (a new rate, seek or
    /// controls forget it): a plan made late, from an instant before that end, still counts what it played
    /// (`playsAfter`).
    private(set) var finishedAt: Double?
    /// While playing: offset(t) = anchorOffset + (t - anchorTime) * rate, before looping.
    private var anchorTime = 0.0
    private var anchorOffset = 0.0
    private var pausedOffset = 0.0
    /// Where the next start begins (set by seeking while not playing).
    private(set) var startOffset = 0.0
    private(set) var rate = 1.0
    private(set) var loopEnabled = false
    /// Pattern time where a loop goes back to 0; 0 means the pattern's duration.
    private(set) var loopEnd = 0.0
    private var pending: [(time: Double, command: PlayerCommand)] = []
    /// Its handle was released: it plays to its end (Core Haptics' fire-and-forget idiom,
    /// `try engine.makePlayer(with: pattern).start(atTime: 0)`), then the scheduler drops it.
    var isOrphaned = false

    init(timeline: MotorTimeline) {
        self.timeline = timeline
        source = nil
    }

    init(source: PatternSource) {
        self.source = source
        let rendered = source.rendered(with: .none)
        timeline = rendered.timeline
        soundEnd = rendered.soundEnd
    }

    /// The controls with `parameters` received at engine time `now` for engine time `time` (converted to pattern
    /// time as the player will play then: `projectedOffset(at:)`); nil for a player without a pattern, which has
    /// nothing to apply them to. Rendering them in is `adopt`'s, outside the engine's lock.
    func controls(sending parameters: [HapticDynamicParameter], at time: Double, now: Double) -> RuntimeControls? {
        guard source != nil else { return nil }
        var changed = controls
        changed.send(
            parameters, atPatternTime: projectedOffset(at: time), fromEachPassStart: loopLength != nil,
            position: controlPosition(now: now))
        return changed
    }

    /// The controls with `curve` scheduled at engine time `now` from engine time `time`, which takes the place of
    /// the curve's own relative time (as Core Haptics' `scheduleParameterCurve` overrides it); nil for a player
    /// without a pattern.
    func controls(scheduling curve: HapticParameterCurve, at time: Double, now: Double) -> RuntimeControls? {
        guard source != nil else { return nil }
        var changed = controls
        changed.schedule(curve, atPatternTime: projectedOffset(at: time), position: controlPosition(now: now))
        return changed
    }

    /// The pattern offset the player will be at at engine time `time` (now or later): its queued commands up to
    /// then applied (a start, a pause, a resume), as `advance(to:)` will apply them. A control sent for a moment
    /// after a queued start acts where the pattern will be then, not at the offset the player waits at. A player
    /// that will have ended or stopped by then is placed as it runs now (past its end, where a control changes
    /// nothing it plays), not at the offset a later start would begin from.
    func projectedOffset(at time: Double) -> Double {
        // Nothing queued (a player steered as it plays): it runs as it does now.
        guard !pending.isEmpty else { return offset(at: time) }
        var projected = self
        _ = projected.advance(to: time)
        guard projected.phase == .playing || projected.phase == .paused else { return offset(at: time) }
        return projected.offset(at: time)
    }

    /// Where the player stands at engine time `now`, for a control sent then (`RuntimeControls.send`'s
    /// `position`); nil for a looping player, whose one pattern time holds every pass.
    private func controlPosition(now: Double) -> Double? {
        loopLength == nil ? offset(at: now) : nil
    }

    /// Takes new controls and the pattern rendered with them (`PatternSource.rendered`) at engine time `now`.
    mutating func adopt(_ rendered: RenderedControls, at now: Double) {
        if phase != .playing { finishedAt = nil }
        reanchor(at: now)
        controls = rendered.controls
        controlsRevision += 1
        timeline = rendered.timeline
        soundEnd = rendered.soundEnd
    }

    /// Turns looping on or off at engine time `now`; a call that leaves it as it was changes nothing.
    mutating func setLoopEnabled(_ enabled: Bool, at now: Double) {
        guard enabled != loopEnabled else { return }
        reanchor(at: now, wrapped: true)
        loopEnabled = enabled
    }

    /// Sets where a loop goes back to 0 (`loopEnd`) at engine time `now`; a call that leaves it as it was changes
    /// nothing.
    mutating func setLoopEnd(_ end: Double, at now: Double) {
        let end = end.isFinite ? Swift.max(end, 0) : 0
        guard end != loopEnd else { return }
        reanchor(at: now, wrapped: true)
        loopEnd = end
    }

    /// Moves a playing player's anchor to `now` without moving its time line, for a change that makes its cue
    /// anew (a rate, controls, a loop). The new cue then says where the player is at `now`: a stream that plays a
    /// cue anchored at offset 0 from the pattern's beginning, as the start it is (the voice coils play such a cue
    /// whole), would otherwise play the pattern again from the top at every change.
    /// A change of the loop itself anchors at the offset `wrapped` in the loop as it was, where the player is in
    /// the pattern: looping turned off then plays the current pass out to the pattern's end, and a new loop end
    /// goes on from there, rather than from an offset counted over every pass so far.
    private mutating func reanchor(at now: Double, wrapped: Bool = false) {
        guard phase == .playing else { return }
        anchorOffset = wrapped ? offset(at: now) : rawOffset(at: now)
        anchorTime = now
    }

    /// Whether the player plays, or will (a command is pending): the engine is not idle while any is.
    var isActive: Bool { phase == .playing || phase == .paused || !pending.isEmpty }

    /// Whether the player's completion is still to come: it plays, is paused, or has a start pending. A stop,
    /// pause or resume pending on a player that does not play will do nothing, and tell nothing: a player that
    /// finished before the stop scheduled for it was told already.
    var awaitsCompletion: Bool {
        phase == .playing || phase == .paused || pending.contains { $0.command == .start }
    }

    /// What decides how a player that neither plays nor waits to will play once started; nil while it is active.
    /// A call that leaves them as they were changes nothing in the mix (`EngineCore.updatePlayer`).
    struct StartSettings: Equatable {
        var phase: PlayerPhase
        var startOffset: Double
        var rate: Double
        var loopEnabled: Bool
        var loopEnd: Double
        var controlsRevision: Int
    }

    var startSettings: StartSettings? {
        guard !isActive else { return nil }
        return StartSettings(
            phase: phase, startOffset: startOffset, rate: rate, loopEnabled: loopEnabled, loopEnd: loopEnd,
            controlsRevision: controlsRevision)
    }

    /// The period of a loop, at least `minimumLoopLength`; nil when not looping or when there is nothing to loop.
    var loopLength: Double? {
        guard loopEnabled else { return nil }
        let length = loopEnd > 0 ? loopEnd : duration
        return length > 0 ? max(length, Self.minimumLoopLength) : nil
    }

    /// The shortest loop period, in seconds: a shorter pattern (an `EventDuration` of 1e-300, say) repeats every
    /// millisecond, with silence after it. No motor follows anything faster, and the mix of a loop costs work
    /// per period, so a period of nanoseconds would keep the playback thread mixing for ever.
    static let minimumLoopLength = 0.001

    // MARK: Commands

    /// Queues `command` at engine time `time` (commands at the same time keep their order).
    mutating func schedule(_ command: PlayerCommand, at time: Double) {
        let index = pending.firstIndex { $0.time > time } ?? pending.endIndex
        pending.insert((time, command), at: index)
    }

    /// Makes the next start play the pattern from `seconds` (engine time) before its start offset: silence until
    /// then. A device that plays on frames starts a player on the frame its time falls in, the pattern at that time.
    mutating func leadIn(by seconds: Double) {
        startOffset -= Swift.max(seconds, 0) * rate
    }

    mutating func cancel() {
        pending.removeAll()
        phase = .cancelled
    }

    /// Stops at once without an event (the engine stopped or lost its device).
    mutating func halt() {
        pending.removeAll()
        if phase == .playing || phase == .paused { phase = .stopped }
    }

    /// A rate above 0 (at least `minimumRate`); any other value, infinite or not a number included, changes
    /// nothing, as Core Haptics ignores it.
    mutating func setRate(_ newRate: Double, now: Double) {
        guard newRate > 0, newRate.isFinite else { return }
        finishedAt = nil
        reanchor(at: now)
        rate = max(newRate, Self.minimumRate)
    }

    /// Moves to pattern offset `offset`; on a looping player, an offset at or past the loop's length goes to the
    /// loop's beginning, as Core Haptics' `seek(toOffset:)` does.
    mutating func seek(to offset: Double, now: Double) {
        finishedAt = nil
        var target = offset.isFinite ? max(offset, 0) : 0
        if let loopLength, target >= loopLength { target = 0 }
        switch phase {
        case .playing:
            anchorOffset = target
            anchorTime = now
        case .paused:
            pausedOffset = target
        default:
            startOffset = target
        }
    }

    // MARK: Time

    private func rawOffset(at time: Double) -> Double { anchorOffset + (time - anchorTime) * rate }

    /// The pattern offset at `time` before loop wrapping (while playing, or finished at `finishedAt`, as it played;
    /// otherwise where it stands).
    func unwrappedOffset(at time: Double) -> Double {
        phase == .playing || (phase == .finished && finishedAt != nil) ? rawOffset(at: time) : offset(at: time)
    }

    /// Whether the player played after engine time `origin`: it plays now, or it reached its end since. A pass
    /// that runs late (the machine stood still) plans from the instant the mix changed, which may lie before the
    /// end of a player that finished meanwhile: what it played from there on is part of that plan, so that a
    /// level the pass slept through whole is still written, late rather than never. A player stopped meanwhile
    /// is not: a stop asks for silence from its time on.
    func playsAfter(_ origin: Double) -> Bool {
        phase == .playing || (phase == .finished && finishedAt.map { $0 > origin + Self.epsilon } ?? false)
    }

    /// How many commands are queued.
    var pendingCount: Int { pending.count }

    /// The engine time of the next queued command or natural end (after `advance(to:)`, both are ahead):
    /// when the player's state, not only its levels, changes next.
    var nextStateChange: Double? {
        guard let queued = pending.first?.time else { return naturalEnd }
        return naturalEnd.map { min($0, queued) } ?? queued
    }

    /// The pattern offset at `time`: the raw offset, wrapped when looping.
    func offset(at time: Double) -> Double {
        switch phase {
        case .playing: return Self.wrapped(rawOffset(at: time), loopLength: loopLength)
        case .paused: return pausedOffset
        default: return startOffset
        }
    }

    /// A raw offset wrapped into a loop of `loopLength` (as it is without one).
    static func wrapped(_ raw: Double, loopLength: Double?) -> Double {
        guard let loopLength, loopLength > 0 else { return raw }
        return raw.truncatingRemainder(dividingBy: loopLength)
    }

    /// When a non-looping playing player reaches the end of its pattern.
    private var naturalEnd: Double? {
        guard phase == .playing, loopLength == nil else { return nil }
        return anchorTime + (duration - anchorOffset) / rate
    }

    /// Applies every command and end that falls at or before `now`, in time order; returns what happened.
    mutating func advance(to now: Double) -> [PlayerEvent] {
        var events: [PlayerEvent] = []
        while true {
            let commandTime = pending.first?.time
            if let end = naturalEnd, end <= now + Self.epsilon, end <= (commandTime ?? .infinity) {
                phase = .finished
                finishedAt = end
                events.append(.finished)
                continue
            }
            guard let commandTime, commandTime <= now else { break }
            let command = pending.removeFirst().command
            if let event = apply(command, at: commandTime) { events.append(event) }
        }
        return events
    }

    private mutating func apply(_ command: PlayerCommand, at time: Double) -> PlayerEvent? {
        switch command {
        case .start:
            finishedAt = nil
            anchorTime = time
            anchorOffset = startOffset
            startOffset = 0
            phase = .playing
        case .stop:
            guard phase == .playing || phase == .paused else { return nil }
            phase = .stopped
            return .stopped
        case .pause:
            guard phase == .playing else { return nil }
            pausedOffset = offset(at: time)
            phase = .paused
        case .resume:
            guard phase == .paused else { return nil }
            anchorTime = time
            anchorOffset = pausedOffset
            phase = .playing
        }
        return nil
    }

    // MARK: Sound

    /// The sounds the player makes from now on, for a player whose pattern has audio: the one it plays now (ended
    /// by its next queued command, if any) and the one a queued start or resume begins. Each is identified by
    /// its anchor, so a sound already playing for the same anchor is left alone, and a changed anchor (a seek,
    /// a new rate, a loop turned on, controls received) means a new sound.
    func soundCues() -> [SoundCue] {
        source?.audio != nil ? cues() : []
    }

    /// What the player plays from now on, as stretches on the engine's timeline: the one it plays now (ended by
    /// its next queued command, if any) and the one a queued start or resume begins, each identified by its
    /// anchor. Its sound follows them (`soundCues`), and so does its waveform on voice coils.
    func cues() -> [SoundCue] {
        guard source != nil else { return [] }
        var cues: [SoundCue] = []
        let loop = loopLength
        // What ends a cue that plays: the next command queued after it, but a resume, which does nothing to a
        // player that plays (`apply`). Ended there, the cue would come back unchanged after it, and its sound,
        // already ended, would not.
        func end(after commands: ArraySlice<(time: Double, command: PlayerCommand)>) -> Double? {
            commands.first { $0.command != .resume }?.time
        }
        if phase == .playing {
            cues.append(
                SoundCue(
                    anchor: SoundAnchor(
                        time: anchorTime, offset: anchorOffset, rate: rate, loopLength: loop,
                        revision: controlsRevision),
                    end: end(after: pending[...])))
        }
        if let next = pending.first, next.command == .start || (next.command == .resume && phase == .paused) {
            let offset = next.command == .start ? startOffset : pausedOffset
            cues.append(
                SoundCue(
                    anchor: SoundAnchor(
                        time: next.time, offset: offset, rate: rate, loopLength: loop, revision: controlsRevision),
                    end: end(after: pending.dropFirst())))
        }
        return cues
    }

    // MARK: Output

    /// The motor levels at `now` (after `advance(to: now)`).
    func levels(at now: Double) -> MotorMagnitudes {
        guard phase == .playing else { return .off }
        return timeline.levels(at: offset(at: now) + Self.epsilon).clamped()
    }

    /// The next engine time after `now` when this player's output or state changes, and whether the output
    /// moves continuously (a ramp) until then, so the scheduler samples it on the way.
    func nextChange(after now: Double) -> (time: Double, ramping: Bool)? {
        var best: (time: Double, ramping: Bool)? = pending.first.map { ($0.time, false) }
        func consider(_ candidate: (time: Double, ramping: Bool)?) {
            guard let candidate, candidate.time > now else { return }
            if best == nil || candidate.time < (best?.time ?? .infinity) {
                best = (candidate.time, candidate.ramping || (best?.ramping ?? false))
            } else if candidate.ramping {
                best?.ramping = true
            }
        }
        guard phase == .playing else { return best }
        let offset = self.offset(at: now) + Self.epsilon
        var boundary: Double
        var ramping = false
        if let segment = timeline.segment(at: offset) {
            boundary = segment.end
            ramping = !segment.isConstant
        } else {
            boundary = loopLength ?? duration
        }
        if let loop = loopLength { boundary = min(boundary, loop) }
        consider((now + max(boundary - offset + Self.epsilon, Self.epsilon) / rate, ramping))
        return best
    }
}
