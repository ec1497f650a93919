// A force-feedback device that plays periodic effects itself (a USB PID wheel or joystick, hid-pidff): patterns
// played as the device's own waveforms, not as motor levels. Each playing player's cues (PlayerState.cues, as on
// the voice coils) become sources on a `PeriodicEffectStream`; its thread turns them into effects on the
// engine's clock (`PeriodicSourceCursor`, pure) and keeps the device's effect slots in step:
// - an effect is uploaded (`EVIOCSFF`) `uploadLeadSeconds` before it starts and played (`EV_FF`) at its start:
//   the device then runs its sine (sharpness as the period), its attack and fade and its length on its own clock,
//   with nothing more from us;
// - an effect that follows its event by updates (changing controls, `NativePeriodicUpdate`) is uploaded again in
//   its slot at each update: hid-pidff sends only the changed parameter report;
// - an effect that ends by its own length needs nothing more; one whose player stopped first is stopped then;
//   either way its slot is kept for the next effect, which is stopped (if it was not) and uploaded into it:
//   hid-pidff then sends only the parameter reports that changed, without asking the device for a block. Once
//   nothing plays or waits, the slots kept are erased (the driver frees their blocks) but `readySlots` of them;
// - those ready slots are taken when the stream opens, with a silent effect each: a pattern started at once
//   plays its first effects without a round trip to the device for a block.
// The device decides how many effects it holds: an upload it refuses (ENOSPC, "full") makes the effect wait for
// one of our slots that comes free in time, or leaves it out (counted, logged once), and the stream plays on;
// for a while after a refusal, effects wait for our slots rather than ask the device again. The stream's work
// runs on a `HapticClock` timer (`MonotonicClock` outside tests: a thread of its own). The motor primitives write
// nothing (StreamedOutput).
import AHAP
package import HapticRendering
package import LinuxInput
@_spi(Internals) import LinuxSystem
package import Logging
import Synchronization

/// One player's cue as the stream plays it: its pattern compiled for the device, from a pattern offset on.
package struct PeriodicSource: Sendable {
    let program: NativePeriodicProgram
    /// The pattern time at the source's start (inside the loop, when it loops).
    let offset: Double
    /// Pattern seconds per second.
    let rate: Double
    /// The pattern time a loop goes back to 0 at; nil when the player does not loop.
    let loopLength: Double?

    package init(program: NativePeriodicProgram, offset: Double, rate: Double = 1, loopLength: Double? = nil) {
        self.program = program
        self.offset = max(offset, 0)
        self.rate = rate > 0 && rate.isFinite ? rate : 1
        self.loopLength = loopLength.flatMap { $0 > 0 ? $0 : nil }
    }
}

/// An effect placed on the engine's clock: it starts at `start` and its last instant is `end` (seconds).
package struct PlacedPeriodicEffect: Sendable, Hashable {
    package var start: Double
    package var end: Double
    /// Its delay is 0 and its times are seconds from `start`.
    package var effect: NativePeriodicEffect
}

/// What a force device was told to play over the last second, effect by effect: each from its play to its end
/// on the engine's clock (the device runs it for its length; a stop cuts it), its level and period changed from
/// each update on. Effects playing together are summed, as the device sums their forces, the frequency the
/// strongest one's; each at its magnitude, its attack and fade left out. (Read as the last effect played, until
/// 7 December a stronger tap over a tone was read on after it ended, a gap between effects read as the effect
/// before it, and an effect under an intensity curve at its first level throughout.)
struct PlayedEffects: Sendable {
    private struct Span {
        var slot: Int16
        var from: Double
        var to: Double
        var activity: ActuatorActivity
    }
    private var spans: [Span] = []

    private static func activity(_ effect: NativePeriodicEffect) -> ActuatorActivity {
        ActuatorActivity(left: effect.magnitude, right: effect.magnitude, frequency: 1 / effect.period)
    }

    /// `effect` played in `slot` from `from` until `to`, in place of what the slot played.
    mutating func play(slot: Int16, _ effect: NativePeriodicEffect, from: Double, to: Double) {
        stop(slot: slot, at: from)
        spans.removeAll { $0.to <= from - ActivityHistory.span }
        spans.append(Span(slot: slot, from: from, to: max(to, from), activity: Self.activity(effect)))
    }

    /// The effect playing in `slot` takes `effect`'s level and period from `time` on, to its end; nothing when
    /// none plays there (an update before its play is the effect it plays).
    mutating func update(slot: Int16, _ effect: NativePeriodicEffect, at time: Double) {
        guard let index = spans.lastIndex(where: { $0.slot == slot && $0.from <= time && time < $0.to }) else {
            return
        }
        let to = spans[index].to
        spans[index].to = time
        spans.append(Span(slot: slot, from: time, to: to, activity: Self.activity(effect)))
    }

    /// What plays in `slot` ends at `time`.
    mutating func stop(slot: Int16, at time: Double) {
        for index in spans.indices where spans[index].slot == slot && spans[index].to > time {
            spans[index].to = max(time, spans[index].from)
        }
    }

    /// Everything ends at `time`.
    mutating func stopAll(at time: Double) {
        for index in spans.indices where spans[index].to > time { spans[index].to = max(time, spans[index].from) }
    }

    /// What the device played at `time`: at rest when nothing did.
    func activity(at time: Double) -> ActuatorActivity {
        let playing = spans.filter { $0.from <= time && time < $0.to }
        guard let strongest = playing.max(by: { $0.activity.left < $1.activity.left }) else { return .atRest }
        let level = min(1, playing.reduce(0) { $0 + $1.activity.left })
        return ActuatorActivity(left: level, right: level, frequency: strongest.activity.frequency)
    }
}

/// The effects of a source started at `start`, in start order, one at a time: a looping source has no end, so the
/// stream takes them only as they come near.
package struct PeriodicSourceCursor: Sendable {
    private let source: PeriodicSource
    private let start: Double
    /// The program's effects by delay.
    private let order: [Int]
    private var loop = 0
    private var index = 0
    /// Where in the effect at `index` (seconds from its start) its next piece begins, when the piece before did
    /// not reach its end: an effect longer than a device takes (`NativePeriodicEffect.maximumLength`, once the
    /// rate has stretched it) is placed as pieces one after the other.
    private var pieceFrom: Double?

    package init(_ source: PeriodicSource, start: Double) {
        self.source = source
        self.start = start
        order = source.program.effects.indices.sorted {
            source.program.effects[$0].delay < source.program.effects[$1].delay
        }
    }

    /// The next effect that starts before `limit` (seconds), or nil when there is none (yet, for a loop).
    package mutating func next(startingBefore limit: Double) -> PlacedPeriodicEffect? {
        next { $0 < limit }
    }

    /// The next effect whose start less `lead` is `now` or earlier: due for its upload at `now`, by the same sum
    /// as the time its upload is due at (`start - lead`), so that a timer woken exactly then finds it due.
    package mutating func next(lead: Double, dueBy now: Double) -> PlacedPeriodicEffect? {
        next { $0 - lead <= now }
    }

    /// The next effect whose start `isNear` says is near, in start order.
    private mutating func next(_ isNear: (Double) -> Bool) -> PlacedPeriodicEffect? {
        let effects = source.program.effects
        while true {
            if index == order.count {
                guard let loopLength = source.loopLength, !order.isEmpty else { return nil }
                // A loop whose effects all start beyond its length plays nothing: never spin on it.
                guard effects[order[0]].delay < loopLength else { return nil }
                loop += 1
                index = 0
            }
            let effect = effects[order[index]]
            if let loopLength = source.loopLength, effect.delay >= loopLength {
                // Past the loop's end, as every effect after it (they are in delay order): the next loop is next,
                // not held back until this effect's start would have come.
                index = order.count
                continue
            }
            let base = Double(loop) * (source.loopLength ?? 0)
            let patternStart = base + effect.delay
            let from = max(source.offset - patternStart, pieceFrom ?? 0)
            let engineStart = start + (max(patternStart + from, source.offset) - source.offset) / source.rate
            if !isNear(engineStart) { return nil }
            var patternEnd = patternStart + effect.length
            if let loopLength = source.loopLength { patternEnd = min(patternEnd, base + loopLength) }
            var to = patternEnd - patternStart
            let longest = NativePeriodicEffect.maximumLength * source.rate
            if to - max(from, 0) > longest {
                to = max(from, 0) + longest
                pieceFrom = to
            } else {
                pieceFrom = nil
                index += 1
            }
            guard patternEnd > source.offset, let section = effect.section(from: from, to: to, rate: source.rate)
            else { continue }
            return PlacedPeriodicEffect(start: engineStart, end: engineStart + section.length, effect: section)
        }
    }
}

extension ForceFeedbackEffect {
    /// The `FF_PERIODIC` sine of `effect` (its delay is not sent: the stream plays effects at their start). An
    /// attack or fade of no length sends level 0, which it does not use: an effect followed by updates keeps the
    /// same (empty) envelope through them, so the driver sends only the changed magnitude or period.
    package init(periodic effect: NativePeriodicEffect, id: Int16 = -1) {
        let attack = effect.attackLengthMilliseconds
        let fade = effect.fadeLengthMilliseconds
        self.init(
            id: id,
            kind: .periodic(
                waveform: .sine, period: effect.periodMilliseconds, magnitude: effect.magnitudeUnits, offset: 0,
                phase: 0,
                envelope: ForceFeedbackEnvelope(
                    attackLength: attack, attackLevel: attack > 0 ? effect.attackLevelUnits : 0, fadeLength: fade,
                    fadeLevel: fade > 0 ? effect.fadeLevelUnits : 0)),
            replayLength: max(effect.lengthMilliseconds, 1))
    }
}

/// What the periodic effect stream asks of a force device (an `EventDevice`): effects in its slots, named by the
/// kernel's ids.
package protocol ForceEffectSlots: Sendable {
    /// The event node.
    var node: String { get }
    /// Uploads `effect` (`EVIOCSFF`): into a new slot when its id is -1, else into that slot. Returns the id.
    func upload(_ effect: ForceFeedbackEffect) throws(EventDeviceError) -> Int16
    func play(effectID: Int16, count: Int32) throws(EventDeviceError)
    func stop(effectID: Int16) throws(EventDeviceError)
    /// Frees the slot (`EVIOCRMFF`); the device stops its effect first.
    func erase(effectID: Int16) throws(EventDeviceError)
}

extension EventDevice: ForceEffectSlots {}

/// The effects a PID device runs for the engine's players: sources on the `CLOCK_MONOTONIC` timeline (the
/// clock's), whose effects the work of a timer uploads, plays, updates and erases.
package final class PeriodicEffectStream: PatternStream, CueStream {
    /// How long before its start an effect is uploaded: an upload is a round trip to the device (a block is
    /// asked for and its index read back) and a few reports, which must be over before the play is due.
    package static let uploadLeadSeconds = 0.080
    /// How many of the device's blocks the stream holds ready, even while nothing plays: a pattern's opening
    /// (most real patterns start with one or two events together, a transient over a continuous) is uploaded into
    /// them, which sends only parameter reports, rather than asking the device for a block and waiting for its
    /// answer, once per effect. The device lends them to no one else while the engine runs; they go back when the
    /// stream closes (or the kernel frees them with the descriptor).
    package static let readySlots = 2
    /// What a ready slot holds until an effect is uploaded into it: a sine at 0, never played.
    static let restingEffect = ForceFeedbackEffect(
        id: -1,
        kind: .periodic(
            waveform: .sine, period: 100, magnitude: 0, offset: 0, phase: 0,
            envelope: ForceFeedbackEnvelope(attackLength: 0, attackLevel: 0, fadeLength: 0, fadeLevel: 0)),
        replayLength: 1)

    private struct Placed {
        var cursor: PeriodicSourceCursor
        var stopAt: Double?
        /// Its cursor reached the stop: it has no more effects to hand out.
        var exhausted = false
    }

    /// An effect the stream has taken from its source: waiting for its upload, uploaded, or playing. Only the
    /// thread reads and changes these, so a step decided under the lock is done before the next is decided.
    private struct Live {
        var source: Int
        var placed: PlacedPeriodicEffect
        /// The kernel's id of its slot, once uploaded.
        var slot: Int16?
        var played = false
        /// The next of `placed.effect.updates` to send.
        var nextUpdate = 0

        /// Whether it ends before the length it was uploaded with (its player stopped it): it is stopped then.
        var isCut: Bool { placed.end < placed.start + placed.effect.length - cutTolerance }
        /// When its slot may take the next effect once it has played: at its end when it is cut there; after
        /// `lateEndMargin` when it ends by its length, so that new parameters never reach the end of an effect
        /// whose play came late.
        var slotFreeFrom: Double { isCut ? placed.end : placed.end + lateEndMargin }
    }

    private struct State {
        var sources: [Int: Placed] = [:]
        var live: [Int: Live] = [:]
        var nextSourceID = 0
        var nextLiveID = 0
        /// Slots whose effect is over, kept for the next effect to be uploaded into from `from` on; `stopped` when
        /// a stop was sent (or it never played).
        var idle: [(slot: Int16, from: Double, stopped: Bool)] = []
        /// Until when the device counts as full: it answered "full" to an upload `fullRetrySeconds` before. An
        /// effect then waits for one of our slots to come free before its end, rather than ask for a new block.
        var fullUntil = -Double.infinity
        var uploads = 0
        var updates = 0
        /// Effects left out: the device was full and none of our slots came free before their end.
        var leftOut = 0
        /// The first effect left out was logged.
        var leftOutLogged = false
        var closing = false
        var played = PlayedEffects()

        func isFull(at now: Double) -> Bool { now < fullUntil }

        /// Whether one of our slots may take a new effect before `time`: one kept for reuse, or one whose effect
        /// ends (`Live.slotFreeFrom`) by then.
        func slotComesFree(before time: Double) -> Bool {
            idle.contains { $0.from < time } || live.values.contains { $0.slot != nil && $0.slotFreeFrom < time }
        }
    }

    package let deviceName: String
    private let device: any ForceEffectSlots
    private let profile: RenderProfile
    private let logger: Logger
    /// The time of every source and effect, in seconds; what its timer calls `service()` by.
    private let clock: any HapticClock
    private let state = Lock(State())
    private let firstFailure = Lock<OutputFailure?>(nil)
    private let timer = Lock<(any HapticTimer)?>(nil)
    private let sounds = Lock(CueSounds<PeriodicEffectStream>())
    /// The programs compiled so far, by pattern and controls: at most `programsKept`, all dropped when full.
    private let programs = Lock<[ProgramKey: NativePeriodicProgram]>([:])
    private static let programsKept = 32

    private struct ProgramKey: Hashable {
        var pattern: HapticPattern
        var controls: RuntimeControls
    }

    /// Plays on `device` (opened for writing), compiling each pattern with `profile` (its gain the engine's),
    /// after taking its ready slots: as many of `readySlots` as the device gives (a device that is full, or
    /// refuses, gets its effects uploaded as they come, as without them). `clock` is `CLOCK_MONOTONIC` outside
    /// tests: the timeline of `play(_:atNanoseconds:)` and of the engine's cues.
    package init(
        device: any ForceEffectSlots, profile: RenderProfile, clock: any HapticClock = MonotonicClock(),
        logger: Logger
    ) throws(HapticEngineError) {
        self.device = device
        self.profile = profile
        self.clock = clock
        self.logger = logger
        deviceName = device.node
        var ready: [Int16] = []
        for _ in 0..<Self.readySlots {
            do throws(EventDeviceError) {
                ready.append(try device.upload(Self.restingEffect))
            } catch {
                logger.debug(
                    "a ready slot was not taken", metadata: ["node": "\(device.node)", "error": "\(error)"])
                break
            }
        }
        state.withLock { state in state.idle = ready.map { (slot: $0, from: 0, stopped: true) } }
        do throws(HapticEngineError) {
            // Held weakly: a stream its owner lets go without `close()` is closed by its `deinit`, timer and all.
            let started = try clock.makeTimer { [weak self] in self?.service() }
            timer.withLock { $0 = started }
        } catch {
            for slot in ready { try? device.erase(effectID: slot) }
            throw error
        }
    }

    deinit { close() }

    var failure: OutputFailure? { firstFailure.withLock { $0 } }
    /// Uploads (new effects and updates) so far; the device keeps time itself, so nothing can underrun.
    var counts: (reports: Int, underruns: Int) { state.withLock { ($0.uploads + $0.updates, 0) } }
    var activity: ActuatorActivity { activity(at: clock.now) }
    func activity(at time: Double) -> ActuatorActivity { state.withLock { $0.played.activity(at: time) } }
    /// Effects left out so far: the device was full, and none of our slots came free before their end.
    var leftOut: Int { state.withLock { $0.leftOut } }
    /// Nothing is queued ahead: an effect due now is uploaded and played at once, before the effects that are not
    /// due yet are uploaded.
    var startLead: Double { 0 }

    // MARK: Sources

    package func play(_ source: PeriodicSource, atNanoseconds startNanoseconds: UInt64) -> Int {
        let id = state.withLock { state in
            defer { state.nextSourceID += 1 }
            let start = Double(startNanoseconds) / 1e9
            state.sources[state.nextSourceID] = Placed(cursor: PeriodicSourceCursor(source, start: start))
            return state.nextSourceID
        }
        wakeTimer()
        return id
    }

    /// Has the timer's work run now: what it plays changed.
    private func wakeTimer() { timer.withLock { $0 }?.wake() }

    package func stop(_ id: Int) {
        state.withLock { $0.sources[id]?.stopAt = 0 }
        wakeTimer()
    }

    package func stop(_ id: Int, atNanoseconds nanoseconds: UInt64) {
        state.withLock { $0.sources[id]?.stopAt = Double(nanoseconds) / 1e9 }
        wakeTimer()
    }

    /// Makes the stream play what `players` ask for from `now`, as the voice coils' stream does.
    func sync(_ players: [PlayerID: WaveformPlayer], now: Double) {
        guard !state.withLock({ $0.closing }) else { return }
        sounds.follow(players, now: now, on: self) { waveform, cue, start in
            PeriodicSource(
                program: program(waveform.pattern, controls: cue.controls),
                offset: cue.anchor.offset(at: start), rate: cue.anchor.rate, loopLength: cue.anchor.loopLength)
        }
    }

    /// Compiles `pattern` (a player was made with it) and keeps the program, so that its start finds it made:
    /// compiling a pattern whose events follow changing controls plans each such event, which took a few
    /// milliseconds under emulation.
    func prepare(_ pattern: HapticPattern) {
        _ = program(pattern, controls: .none)
    }

    /// `pattern` compiled for the device under `controls`: the one kept, or compiled now and kept.
    private func program(_ pattern: HapticPattern, controls: RuntimeControls) -> NativePeriodicProgram {
        let key = ProgramKey(pattern: pattern, controls: controls)
        if let kept = programs.withLock({ $0[key] }) { return kept }
        let compiled = NativePeriodicProgram(pattern: pattern, profile: profile, controls: controls)
        programs.withLock { programs in
            if programs.count >= Self.programsKept { programs.removeAll() }
            programs[key] = compiled
        }
        return compiled
    }

    // MARK: The thread

    /// Ends the stream: the timer is stopped (after its last call), then every effect it holds is erased (the
    /// device stops it). The first call does this; later ones find nothing left to do.
    package func close() {
        state.withLock { $0.closing = true }
        let running = timer.withLock { timer -> (any HapticTimer)? in
            defer { timer = nil }
            return timer
        }
        guard let running else { return }
        running.cancel()
        // A device that went away has nothing left to erase.
        for step in state.withLock({ Self.closingSteps(&$0) }) { try? perform(step) }
        let now = clock.now
        state.withLock { $0.played.stopAll(at: now) }
        sounds.withLock { $0 = CueSounds() }
    }

    /// One step of the work, decided under the lock and done outside it.
    private enum Step {
        case erase(Int16)
        /// An effect cut before its end.
        case stop(Int16)
        /// Into a new slot, or into `reusing`.
        case upload(Int, NativePeriodicEffect, reusing: Int16?)
        case play(Int, Int16)
        case update(Int16, NativePeriodicEffect)
    }

    /// The timer's work: every step due now, in rounds until none is left, then when the next is due (in the
    /// clock's seconds); nil once closing, and after the device went away.
    private func service() -> Double? {
        guard failure == nil else { return nil }
        while true {
            let now = clock.now
            let round = state.withLock { state -> (steps: [Step], due: Double?, notice: Bool)? in
                guard !state.closing else { return nil }
                let steps = Self.steps(&state, now: now)
                let notice = state.leftOut > 0 && !state.leftOutLogged
                state.leftOutLogged = state.leftOutLogged || notice
                return (steps, Self.due(state, now: now), notice)
            }
            guard let round else { return nil }
            if round.notice {
                logger.notice(
                    "the device holds no more effects; an effect is left out", metadata: ["node": "\(deviceName)"])
            }
            for step in Self.thisRound(round.steps) {
                do throws(EventDeviceError) {
                    try perform(step)
                } catch {
                    if error.kind == .deviceGone {
                        firstFailure.withLock { $0 = $0 ?? OutputFailure(.deviceGone, "\(error)") }
                        logger.debug("the periodic effect stream ended", metadata: ["error": "\(error)"])
                        return nil
                    }
                    logger.warning("a periodic effect failed", metadata: ["error": "\(error)"])
                }
            }
            if round.steps.isEmpty { return round.due }
        }
    }

    /// The steps to take before deciding again: every step that sends reports the driver queues (an erase, a stop,
    /// a play, an update, an upload into a kept slot), in order, and then the earliest upload into a new slot alone.
    /// That one waits for the device to answer (a block asked for and its index read back, several milliseconds),
    /// so it waits for a round with no upload into a kept slot: the plays of those, which come in the next round,
    /// go out before it, and a play that falls due meanwhile goes out before the next one.
    private static func thisRound(_ steps: [Step]) -> [Step] {
        func waits(_ step: Step) -> Bool {
            if case .upload(_, _, reusing: nil) = step { true } else { false }
        }
        func fillsKeptSlot(_ step: Step) -> Bool {
            if case .upload(_, _, reusing: .some) = step { true } else { false }
        }
        let queued = steps.filter { !waits($0) }
        if queued.contains(where: fillsKeptSlot) { return queued }
        return queued + (steps.first(where: waits).map { [$0] } ?? [])
    }

    private func perform(_ step: Step) throws(EventDeviceError) {
        switch step {
        case .erase(let slot):
            try device.erase(effectID: slot)
        case .stop(let slot):
            try device.stop(effectID: slot)
            let now = clock.now
            state.withLock { $0.played.stop(slot: slot, at: now) }
        case .upload(let id, let effect, reusing: let kept?):
            do throws(EventDeviceError) {
                _ = try device.upload(ForceFeedbackEffect(periodic: effect, id: kept))
            } catch {
                state.withLock { $0.live[id] = nil }
                try? device.erase(effectID: kept)
                throw error
            }
            state.withLock { state in
                state.uploads += 1
                state.live[id]?.slot = kept
            }
        case .upload(let id, let effect, reusing: nil):
            let slot: Int16
            do throws(EventDeviceError) {
                slot = try device.upload(ForceFeedbackEffect(periodic: effect))
            } catch  where error.kind == .noEffectSlot {
                let now = clock.now
                state.withLock { state in
                    state.fullUntil = now + Self.fullRetrySeconds
                    // One of our slots coming free before the effect's end takes it; with none, it is left out.
                    if let end = state.live[id]?.placed.end, state.slotComesFree(before: end) { return }
                    state.live[id] = nil
                    state.leftOut += 1
                }
                return
            } catch {
                state.withLock { $0.live[id] = nil }
                throw error
            }
            state.withLock { state in
                state.uploads += 1
                state.live[id]?.slot = slot
            }
        case .play(let id, let slot):
            try device.play(effectID: slot, count: 1)
            let now = clock.now
            state.withLock { state in
                if let placed = state.live[id]?.placed {
                    // The device runs it for its length from the play, unless its end on the engine's clock,
                    // where it is stopped, comes first.
                    state.played.play(
                        slot: slot, placed.effect, from: now, to: min(now + placed.effect.length, placed.end))
                }
            }
        case .update(let slot, let effect):
            _ = try device.upload(ForceFeedbackEffect(periodic: effect, id: slot))
            let now = clock.now
            state.withLock { state in
                state.updates += 1
                state.played.update(slot: slot, effect, at: now)
            }
        }
    }

    /// What is due at `now`: erasures of ended or stopped effects, uploads of effects starting within the lead,
    /// plays of uploaded effects whose start has come, updates whose time has come.
    private static func steps(_ state: inout State, now: Double) -> [Step] {
        var steps: [Step] = []
        // Sources stopped: their waiting effects go, their playing ones end at the stop.
        for (id, placed) in state.sources {
            guard let stopAt = placed.stopAt else { continue }
            // An effect that would have started at or after the stop ends at its start: it is erased unplayed.
            for (liveID, live) in state.live where live.source == id && live.placed.end > stopAt {
                state.live[liveID]?.placed.end = max(stopAt, live.placed.start)
            }
            if stopAt <= now { state.sources[id] = nil }
        }
        // New effects from every source, as they come within the lead.
        for id in state.sources.keys.sorted() {
            guard var placed = state.sources[id], !placed.exhausted else { continue }
            while let next = placed.cursor.next(lead: uploadLeadSeconds, dueBy: now) {
                if let stopAt = placed.stopAt, next.start >= stopAt {
                    placed.exhausted = true
                    break
                }
                var cut = next
                if let stopAt = placed.stopAt, stopAt < cut.end { cut.end = stopAt }
                state.live[state.nextLiveID] = Live(source: id, placed: cut)
                state.nextLiveID += 1
            }
            state.sources[id] = placed
        }
        // An effect due already was uploaded this round: the uploads of those not due yet wait for the next one,
        // so that its play goes out before their reports (a start now's first effects, a late one's rest).
        var uploadedDue = false
        for (id, live) in state.live.sorted(by: { $0.value.placed.start < $1.value.placed.start }) {
            let placed = live.placed
            let orphaned = state.sources[live.source] == nil && !live.played
            if placed.end <= now || placed.end <= placed.start || orphaned {
                state.live[id] = nil
                guard let slot = live.slot else {
                    // Its end came while it waited on a full device for a slot of ours.
                    if placed.end > placed.start, !orphaned, state.isFull(at: now) { state.leftOut += 1 }
                    continue
                }
                // Played and cut before the length it was uploaded with: the device would play on. An effect that
                // ends by its length may still play for as long as its play came late: its slot is taken again
                // only after that (`slotFreeFrom`), so that new parameters never reach the end of the old effect.
                let cut = live.played && live.isCut
                if cut { steps.append(.stop(slot)) }
                state.idle.append((slot, cut || !live.played ? now : live.slotFreeFrom, cut || !live.played))
                continue
            }
            guard let slot = live.slot else {
                if placed.start > now, uploadedDue { continue }
                // Uploaded well after its start (an effect that waited for a slot, a thread held), an effect is
                // uploaded as what is left of it from now. Either way it is played as soon as the upload is done,
                // before the effects not due yet are uploaded.
                var upload = placed
                let late = now - placed.start
                if late > Self.playsWholeWithin {
                    guard let rest = placed.effect.section(from: late, to: placed.effect.length) else {
                        state.live[id] = nil
                        continue
                    }
                    upload = PlacedPeriodicEffect(start: now, end: placed.end, effect: rest)
                }
                let kept = state.idle.firstIndex { $0.from <= now }.map { state.idle.remove(at: $0) }
                // A full device has no block to give: wait for one of our slots to come free (`due` wakes for it).
                if kept == nil, state.isFull(at: now), state.slotComesFree(before: placed.end) { continue }
                state.live[id]?.placed = upload
                // An effect that ended by its length is stopped before its slot takes new parameters: a device
                // that kept it playing (its firmware's choice) would otherwise play them at once.
                if let kept, !kept.stopped { steps.append(.stop(kept.slot)) }
                steps.append(.upload(id, upload.effect, reusing: kept?.slot))
                uploadedDue = uploadedDue || upload.start <= now
                continue
            }
            if !live.played {
                guard placed.start <= now else { continue }
                state.live[id]?.played = true
                // A play a little late plays the effect as uploaded: its length, attack and updates run from the
                // play, and it is stopped at its end on the engine's clock if it would run past it. One much later
                // (the thread was held) plays what is left of it, updated first.
                let late = now - placed.start
                if late > Self.playsWholeWithin {
                    guard let rest = placed.effect.section(from: late, to: placed.effect.length) else { continue }
                    // From now on it is that rest: its updates, a cut and the slot's next use read it.
                    state.live[id]?.placed = PlacedPeriodicEffect(start: now, end: placed.end, effect: rest)
                    steps.append(.update(slot, rest))
                } else {
                    state.live[id]?.placed.start = now
                }
                steps.append(.play(id, slot))
                continue
            }
            let updates = placed.effect.updates
            var next = live.nextUpdate
            while next < updates.count, placed.start + updates[next].time <= now { next += 1 }
            guard next > live.nextUpdate else { continue }
            var updated = placed.effect
            updated.magnitude = updates[next - 1].magnitude
            updated.period = updates[next - 1].period
            updated.attackLength = 0
            updated.attackLevel = updated.magnitude
            updated.fadeLength = 0
            updated.fadeLevel = updated.magnitude
            state.live[id]?.nextUpdate = next
            steps.append(.update(slot, updated))
        }
        // Nothing plays or waits: the kept slots go back to the device, but `readySlots` of them. Those kept are
        // the last to come free: an effect whose play came late may still be playing in one, and an erase would
        // cut it short.
        if state.live.isEmpty, state.sources.isEmpty {
            if state.idle.count > readySlots {
                state.idle.sort { $0.from < $1.from }
                steps += state.idle.dropLast(readySlots).map { Step.erase($0.slot) }
                state.idle.removeFirst(state.idle.count - readySlots)
            }
            state.fullUntil = -.infinity
        }
        return steps
    }

    /// How much sooner than its uploaded length an effect must end to be stopped: under a millisecond is the
    /// rounding of its length to the kernel's milliseconds.
    static let cutTolerance = 0.001
    /// How late an effect may start and still play as uploaded, from its late start (stopped at its end on the
    /// engine's clock): cutting it to what is left of it takes an upload before its play or at it, and an upload
    /// into a kept slot held the thread 5-13 ms under TCG, to save at most this much of its opening. A start now
    /// is uploaded and played whole.
    static let playsWholeWithin = 0.010
    /// How late a play may have reached the device: the slot of an effect that ended by its length is taken again
    /// this long after its end.
    static let lateEndMargin = 0.020
    /// How long after the device refused an upload for want of room the stream counts it as full: effects wait
    /// for our own slots meanwhile, then the device is asked again (another program may have let a block go).
    static let fullRetrySeconds = 1.0

    /// Every effect erased, at the end.
    private static func closingSteps(_ state: inout State) -> [Step] {
        let steps = (state.live.values.compactMap(\.slot) + state.idle.map(\.slot)).map(Step.erase)
        state.live = [:]
        state.sources = [:]
        state.idle = []
        return steps
    }

    /// When the work is next due at `now`: the earliest upload (a lead before a start), play, update, end or stop.
    private static func due(_ state: State, now: Double) -> Double? {
        var times: [Double] = []
        let full = state.isFull(at: now)
        for live in state.live.values {
            // An effect waiting for its upload is uploaded at the next step, and played at its start; one waiting
            // on a full device for a slot of ours is woken for by that slot, by the device's retry or by its end
            // (below), never by its start, which has passed or changes nothing: woken for it, the work would spin
            // until a slot came.
            if !live.played, !(live.slot == nil && full) { times.append(live.placed.start) }
            if live.played, live.nextUpdate < live.placed.effect.updates.count {
                times.append(live.placed.start + live.placed.effect.updates[live.nextUpdate].time)
            }
            times.append(live.placed.end)
        }
        if full, state.live.values.contains(where: { $0.slot == nil }) {
            times += state.idle.map(\.from)
            times.append(state.fullUntil)
        }
        for placed in state.sources.values {
            if let stopAt = placed.stopAt { times.append(stopAt) }
            guard !placed.exhausted else { continue }
            var cursor = placed.cursor
            if let next = cursor.next(startingBefore: .infinity) { times.append(next.start - uploadLeadSeconds) }
        }
        return times.min()
    }
}
