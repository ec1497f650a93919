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
    var duration: Double { duration(motorsEnd: timeline.endTime, soundEnd: soundEnd) }
    /// The pattern and renderer, for players made from a pattern (nil for a timeline made elsewhere).
    private(set) var source: PatternSource?
    /// Parameters and curves sent while it runs, in pattern time (the renderer's form).
    private(set) var controls = RuntimeControls.none
    /// Bumped whenever `controls` change, or its pattern is rendered again for another device: its sound and its
    /// planned opening, made from them, must be made again.
    private(set) var controlsRevision = 0
    /// Controls sent for a later engine time, rendered ahead, in time order: each taken (`adopt`) when the player
    /// reaches its time (`advance(to:)`), so that the one in effect acts until then. (Rendered in at once, a control
    /// for a later pass of a loop would act in this one too: one pattern time holds every pass.)
    private(set) var heldControls: [HeldControl] = []
    /// Bumped by every change to `controls` or `heldControls` made through `take`: a change worked out from an
    /// older count was overtaken (`ControlsChange.basis`).
    private(set) var controlChanges = 0
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
    /// Silenced (Core Haptics' `isMuted`): it plays on, in time, to its end, and is neither mixed nor heard.
    var isMuted = false
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

    /// The change `parameters`, received at engine time `now` for engine time `time`, make to the player's controls
    /// (placed in pattern time as the player will play then: `projectedOffset(at:)`); nil for a player without a
    /// pattern, which has nothing to apply them to. Rendering it is the caller's, outside the engine's lock, and
    /// `take` makes it.
    func controlsChange(sending parameters: [HapticDynamicParameter], at time: Double, now: Double) -> ControlsChange? {
        guard source != nil else { return nil }
        return change(
            .parameters(parameters, patternTime: projectedOffset(at: time), fromEachPassStart: loopLength != nil),
            at: time, now: now)
    }

    /// The change `curve`, scheduled at engine time `now` from engine time `time` (which takes the place of the
    /// curve's own relative time, as Core Haptics' `scheduleParameterCurve` overrides it), makes to the player's
    /// controls; nil for a player without a pattern.
    func controlsChange(scheduling curve: HapticParameterCurve, at time: Double, now: Double) -> ControlsChange? {
        guard source != nil else { return nil }
        return change(.curve(curve, patternTime: projectedOffset(at: time)), at: time, now: now)
    }

    /// The change `sent` makes from engine time `time` on: acting at once when that is now, otherwise held until
    /// then after the controls held for that time or before it, with the controls held for later applied again on
    /// top of it (sent before it, each still acts from its own time). Up to the first whose controls come out as
    /// they were (it sends again what `sent` sends: a player steered ahead with one control), from which every later
    /// one's do too: those stay as they were rendered.
    private func change(_ sent: SentControl, at time: Double, now: Double) -> ControlsChange {
        let held = time > now + Self.epsilon
        let index = held ? heldControls.firstIndex { $0.time > time } ?? heldControls.endIndex : 0
        var controls = [sent.applied(to: index > 0 ? heldControls[index - 1].rendered.controls : self.controls)]
        for later in heldControls[index...] {
            let rebuilt = later.sent.applied(to: controls[controls.count - 1])
            if rebuilt == later.rendered.controls { break }
            controls.append(rebuilt)
        }
        return ControlsChange(
            basis: controlChanges, time: held ? time : nil, sent: sent, index: index,
            held: heldControls[index..<(index + controls.count - 1)].map(\.sent), controls: controls)
    }

    /// The held controls placed again where the player will be at their times as it stands now, when a command
    /// queued, a seek, a new rate or a loop changed since they were sent moved that: a control sent for a time
    /// acts at that time, at the pattern time the player is at then. Nil when each is where it was placed.
    func heldControlsPlacedAgain() -> ControlsChange? {
        guard source != nil, !heldControls.isEmpty else { return nil }
        let loops = loopLength != nil
        let placed = heldControls.map { $0.sent.placed(at: projectedOffset(at: $0.time), loops: loops) }
        // Moved by more than rounding, or turned into a loop's (or back).
        let moved = zip(placed, heldControls).contains { again, held in
            abs(again.patternTime - held.sent.patternTime) > Self.epsilon
                || again != held.sent.placed(at: again.patternTime, loops: loops)
        }
        guard moved else { return nil }
        var controls: [RuntimeControls] = []
        for sent in placed { controls.append(sent.applied(to: controls.last ?? self.controls)) }
        return ControlsChange(basis: controlChanges, time: nil, sent: nil, index: 0, held: placed, controls: controls)
    }

    /// Makes `change` at engine time `now`, its controls rendered (`rendered`, one for each of `change.controls`):
    /// a control for now is taken at once, one for later held until its time (`advance(to:)`), and those held for
    /// after it take their rebuilt controls (and their new places). False, changing nothing, when another change
    /// reached the player since `change` was worked out: it must be worked out again.
    mutating func take(_ change: ControlsChange, rendered: [RenderedControls], at now: Double) -> Bool {
        guard change.basis == controlChanges, rendered.count == change.controls.count,
            change.held.count <= heldControls.count - change.index
        else { return false }
        controlChanges += 1
        var rendered = rendered[...]
        var first = change.index
        if let sent = change.sent, let controls = rendered.popFirst() {
            if let time = change.time {
                heldControls.insert(HeldControl(time: time, sent: sent, rendered: controls), at: change.index)
                first += 1
            } else {
                adopt(controls, at: now)
            }
        }
        for (index, (sent, controls)) in zip(first..., zip(change.held, rendered)) {
            heldControls[index].sent = sent
            heldControls[index].rendered = controls
        }
        return true
    }

    /// What rendering the player's pattern by `renderer` takes (`Rerendering`); nil for a player without a pattern,
    /// or one `renderer` rendered already.
    func rendering(with renderer: PatternRenderer) -> Rerendering? {
        guard let source, source.renderer != renderer else { return nil }
        return Rerendering(
            basis: controlChanges, source: source.rendered(by: renderer),
            controls: [controls] + heldControls.map(\.rendered.controls))
    }

    /// Takes its pattern rendered again (`rerendering`, its controls then each held control's rendered: `rendered`)
    /// where it is: it plays on from the same offset, its controls as they were. False, changing nothing, when a
    /// change of its controls reached it since `rerendering` was worked out: it must be worked out again.
    mutating func take(_ rerendering: Rerendering, rendered: [RenderedControls]) -> Bool {
        guard rerendering.basis == controlChanges, rendered.count == heldControls.count + 1,
            rendered.first?.controls == controls
        else { return false }
        controlChanges += 1
        controlsRevision += 1
        source = rerendering.source
        timeline = rendered[0].timeline
        soundEnd = rendered[0].soundEnd
        for (index, held) in zip(heldControls.indices, rendered.dropFirst()) { heldControls[index].rendered = held }
        return true
    }

    /// The pattern offset the player will be at at engine time `time` (now or later): its queued commands and
    /// held controls up to then applied (a start, a pause, a resume), as `advance(to:)` will apply them. A control
    /// sent for a moment after a queued start acts where the pattern will be then, not at the offset the player
    /// waits at. A player that will have ended or stopped by then is placed as it runs now (past its end, where a
    /// control changes nothing it plays), not at the offset a later start would begin from.
    func projectedOffset(at time: Double) -> Double {
        // Nothing queued (a player steered as it plays): it runs as it does now.
        guard !pending.isEmpty || !heldControls.isEmpty else { return offset(at: time) }
        var projected = self
        _ = projected.advance(to: time)
        guard projected.phase == .playing || projected.phase == .paused else { return offset(at: time) }
        return projected.offset(at: time)
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
        var controlChanges: Int
        var isMuted: Bool
    }

    var startSettings: StartSettings? {
        guard !isActive else { return nil }
        return StartSettings(
            phase: phase, startOffset: startOffset, rate: rate, loopEnabled: loopEnabled, loopEnd: loopEnd,
            controlChanges: controlChanges, isMuted: isMuted)
    }

    /// The period of a loop, at least `minimumLoopLength`; nil when not looping or when there is nothing to loop.
    var loopLength: Double? { loopLength(lasting: duration) }

    /// The period of a loop over a pattern that lasts `duration`.
    private func loopLength(lasting duration: Double) -> Double? {
        guard loopEnabled else { return nil }
        let length = loopEnd > 0 ? loopEnd : duration
        return length > 0 ? max(length, Self.minimumLoopLength) : nil
    }

    /// How long the pattern lasts when its motors end at `motorsEnd` and its sound at `soundEnd` (`duration`).
    private func duration(motorsEnd: Double, soundEnd: Double) -> Double {
        max(motorsEnd, soundEnd, source?.eventsEnd ?? 0)
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
        dropQueue()
        phase = .cancelled
    }

    /// Stops at once without an event (the engine stopped or lost its device).
    mutating func halt() {
        dropQueue()
        if phase == .playing || phase == .paused { phase = .stopped }
    }

    /// Drops the queued commands and the controls held for later.
    private mutating func dropQueue() {
        pending.removeAll()
        guard !heldControls.isEmpty else { return }
        heldControls.removeAll()
        controlChanges += 1
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

    /// Held to what a `Double` holds: a looping player at a rate of 1e308 passes it within seconds (as does any
    /// rate above 1 projected to a time near 1e308), and the phase of an infinite offset is not a number. That far
    /// out, a pass is finer than the offset's precision: the phase of the largest offset stands for it.
    private func rawOffset(at time: Double) -> Double {
        let raw = anchorOffset + (time - anchorTime) * rate
        return raw.isFinite ? raw : raw > 0 ? .greatestFiniteMagnitude : -.greatestFiniteMagnitude
    }

    /// The pattern offset at `time` before loop wrapping (while playing, or finished at `finishedAt`, as it played;
    /// otherwise where it stands).
    func unwrappedOffset(at time: Double) -> Double {
        phase == .playing || (phase == .finished && finishedAt != nil) ? rawOffset(at: time) : offset(at: time)
    }

    /// Whether the mix counts the player after engine time `origin`: it is not muted, and it plays now or it
    /// reached its end since. A pass
    /// that runs late (the machine stood still) plans from the instant the mix changed, which may lie before the
    /// end of a player that finished meanwhile: what it played from there on is part of that plan, so that a
    /// level the pass slept through whole is still written, late rather than never. A player stopped meanwhile
    /// is not: a stop asks for silence from its time on.
    func playsAfter(_ origin: Double) -> Bool {
        guard !isMuted else { return false }
        return phase == .playing || (phase == .finished && finishedAt.map { $0 > origin + Self.epsilon } ?? false)
    }

    /// How many commands are queued.
    var pendingCount: Int { pending.count }

    /// How many commands and held controls are queued: a change in it is a change in what the player plays.
    var queuedCount: Int { pending.count + heldControls.count }

    /// The engine time of the next queued command, held control or natural end (after `advance(to:)`, all are
    /// ahead): when the player's state, not only its levels, changes next.
    var nextStateChange: Double? {
        [pending.first?.time, heldControls.first?.time, naturalEnd].compactMap { $0 }.min()
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

    /// Applies every command, held control and end that falls at or before `now`, in time order (a control held
    /// for the time of a command before the command); returns what happened.
    mutating func advance(to now: Double) -> [PlayerEvent] {
        var events: [PlayerEvent] = []
        while true {
            let commandTime = pending.first?.time
            let heldTime = heldControls.first?.time
            if let end = naturalEnd, end <= now + Self.epsilon,
                end <= min(commandTime ?? .infinity, heldTime ?? .infinity)
            {
                phase = .finished
                finishedAt = end
                events.append(.finished)
                continue
            }
            if let heldTime, heldTime <= now, heldTime <= commandTime ?? .infinity {
                adopt(heldControls.removeFirst().rendered, at: heldTime)
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
    /// its next queued command or held control, if any) and the next one: from a held control it plays on with,
    /// or from a queued start or resume. Each is identified by its anchor and carries the controls it plays with.
    /// Its sound follows them (`soundCues`), and so does its waveform on voice coils. A muted player makes none,
    /// unless `evenMuted`: what it would play, for a stream that must know where it is when it is heard again.
    func cues(evenMuted: Bool = false) -> [SoundCue] {
        guard source != nil, evenMuted || !isMuted else { return [] }
        // What ends a cue that plays: the next command queued after it, but a resume, which does nothing to a
        // player that plays (`apply`). Ended there, the cue would come back unchanged after it, and its sound,
        // already ended, would not. Or the next control held for after its start, which it does not play with.
        func end(after commands: ArraySlice<(time: Double, command: PlayerCommand)>, taken: Int) -> Double? {
            let command = commands.first { $0.command != .resume }?.time
            let control = taken < heldControls.count ? heldControls[taken].time : nil
            return [command, control].compactMap { $0 }.min()
        }
        // A cue from `time` on, the first `taken` held controls taken by then, as the player will be anchored
        // there (`adopt`, `apply`).
        func cue(from time: Double, offset: Double, taken: Int, end: Double?) -> SoundCue {
            let rendered = taken > 0 ? heldControls[taken - 1].rendered : nil
            let loop = rendered.map {
                loopLength(lasting: duration(motorsEnd: $0.timeline.endTime, soundEnd: $0.soundEnd))
            }
            return SoundCue(
                anchor: SoundAnchor(
                    time: time, offset: offset, rate: rate, loopLength: loop ?? loopLength,
                    revision: controlsRevision + taken),
                end: end, controls: rendered?.controls ?? controls)
        }
        var cues: [SoundCue] = []
        if phase == .playing {
            cues.append(cue(from: anchorTime, offset: anchorOffset, taken: 0, end: end(after: pending[...], taken: 0)))
            let stop = pending.first { $0.command != .resume }?.time ?? .infinity
            if let held = heldControls.first, held.time < stop {
                // It plays on from there with the controls held for then.
                cues.append(
                    cue(
                        from: held.time, offset: rawOffset(at: held.time), taken: 1,
                        end: end(after: pending[...], taken: 1)))
                return cues
            }
        }
        if let next = pending.first, next.command == .start || (next.command == .resume && phase == .paused) {
            let taken = heldControls.prefix { $0.time <= next.time }.count
            cues.append(
                cue(
                    from: next.time, offset: next.command == .start ? startOffset : pausedOffset, taken: taken,
                    end: end(after: pending.dropFirst(), taken: taken)))
        }
        return cues
    }

    // MARK: Output

    /// The motor levels at `now` (after `advance(to: now)`).
    func levels(at now: Double) -> MotorMagnitudes {
        guard phase == .playing, !isMuted else { return .off }
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
