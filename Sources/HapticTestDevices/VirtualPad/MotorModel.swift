// The strong/weak motor output a rumble gamepad would produce for what the virtual pad was asked, computed
// the way the kernel's ff-memless (drivers/input/ff-memless.c) computes it for xpad, hid-playstation,
// hid-sony... Pure: no I/O, no clock; time comes from the records. See docs/virtual-pad.md for the sources.

public import HapticRendering
import LinuxInput

/// A point where the motor output changes, and the output from then on.
public struct MotorChange: Equatable, Hashable, Sendable {
    public var time: PadTimestamp
    public var levels: MotorMagnitudes

    public init(time: PadTimestamp, levels: MotorMagnitudes) {
        self.time = time
        self.levels = levels
    }
}

/// Replays pad records through ff-memless's algorithm, in kernel ticks (jiffies).
///
/// Kept faithful on purpose, quirks included: output changes only when ff-memless would recompute it
/// (a play, stop, gain change, replay start/end, or an envelope step every 50 ms during attack and fade);
/// periodic effects drive both motors with |magnitude| scaled 0x7fff -> 0xffff, whatever the waveform;
/// sums saturate at 0xffff; gain scales every effect. Constant, ramp and condition effects do not reach
/// rumble motors (ff-memless rejects them on a rumble-only device), so they are ignored here.
public struct MotorModel: Sendable {
    /// The kernel's `CONFIG_HZ`; Debian's kernels use 250. Only rates that divide a second into whole
    /// milliseconds are offered, so `msecs_to_jiffies` and `jiffies_to_msecs` are exact integer maths.
    public enum TickRate: Int64, Sendable, CaseIterable {
        case hz100 = 100, hz250 = 250, hz1000 = 1000

        var millisecondsPerTick: Int64 { 1000 / rawValue }
        package var microsecondsPerTick: Int64 { 1_000_000 / rawValue }
    }

    public let tickRate: TickRate
    private var simulation: Simulation
    /// The time of the last record fed: what the output was before it is history, what comes after projected.
    private var lastRecordTime: PadTimestamp?

    public init(tickRate: TickRate = .hz250) {
        self.tickRate = tickRate
        self.simulation = Simulation(tickRate: tickRate)
    }

    /// Builds the model from a whole record (records must be in time order, as the pad writes them).
    public init(records: [PadRecord], tickRate: TickRate = .hz250) {
        self.init(tickRate: tickRate)
        for record in records { apply(record) }
    }

    /// Feeds one record; records must arrive in time order.
    public mutating func apply(_ record: PadRecord) {
        let tick = tickIndex(record.time)
        simulation.advance(through: tick)
        lastRecordTime = record.time
        simulation.handle(record, at: tick)
    }

    /// The output at `time`, including what timers would do after the last record.
    public func output(at time: PadTimestamp) -> MotorMagnitudes {
        if let lastRecordTime, time.microseconds < lastRecordTime.microseconds {
            return simulation.output.levels(at: time.seconds)
        }
        var projected = projection()
        projected.advance(through: tickIndex(time))
        return projected.output.holds.last?.levels ?? simulation.levels
    }

    /// Every change point up to and including `time`.
    public func timeline(until time: PadTimestamp) -> [MotorChange] {
        let end = time.seconds
        var projected = projection()
        projected.advance(through: tickIndex(time))
        return (simulation.output.holds + projected.output.holds).filter { $0.time <= end }.map(Self.change)
    }

    /// The first change point strictly after `time`, if the effects running now will cause one.
    public func nextChange(after time: PadTimestamp) -> MotorChange? {
        if let recorded = simulation.output.nextHold(after: time.seconds) { return Self.change(from: recorded) }
        var projected = projection()
        var steps = 0
        while let timer = projected.pendingTimer, steps < Self.maximumTimerSteps {
            projected.advance(through: timer)
            if let next = projected.output.nextHold(after: time.seconds) { return Self.change(from: next) }
            steps += 1
        }
        return nil
    }

    /// Keeps at least the last `seconds` of output history before `now` and forgets what is older, in batches (once
    /// the history spans twice that), so the cost per call stays constant. A model fed for days (a long-running
    /// pad) then holds a bounded history; asked about a time before what it kept, it may answer wrong.
    public mutating func keepHistory(seconds kept: Double, before now: PadTimestamp) {
        let window = Int64(kept * 1_000_000)
        guard let oldest = simulation.output.holds.first.map({ PadTimestamp(seconds: $0.time) }),
            now.microseconds - oldest.microseconds > 2 * window
        else { return }
        simulation.output.forget(before: seconds(tickIndex(PadTimestamp(microseconds: now.microseconds - window))))
    }

    /// The simulation as it stands, without its history: looking ahead copies the effect slots, never the
    /// (growing) record of past output.
    private func projection() -> Simulation {
        var projected = simulation
        projected.output = DeviceOutput()
        return projected
    }

    /// Bounds the look-ahead of `nextChange`: a long repeat count of silent replays would otherwise spin.
    private static let maximumTimerSteps = 100_000

    private func tickIndex(_ time: PadTimestamp) -> Int64 {
        // Floor division, so times before zero (never seen from the kernel) stay ordered.
        let perTick = tickRate.microsecondsPerTick
        let quotient = time.microseconds / perTick
        return time.microseconds % perTick < 0 ? quotient - 1 : quotient
    }

    /// The start of `tick`, in seconds: the time axis of the recorded output.
    private func seconds(_ tick: Int64) -> Double {
        PadTimestamp(microseconds: tick * tickRate.microsecondsPerTick).seconds
    }

    private static func change(from hold: DeviceOutput.Hold) -> MotorChange {
        MotorChange(time: PadTimestamp(seconds: hold.time), levels: hold.levels)
    }
}

// MARK: - ff-memless, step by step

/// ff-memless's per-device state (`struct ml_device`) restricted to what reaches rumble motors.
private struct Simulation: Sendable {
    /// `struct ml_effect_state`: the flags and the three times ff-memless keeps per effect slot.
    struct Slot: Sendable {
        var effect: ForceFeedbackEffect
        var started = false
        var playing = false
        var aborting = false
        var count: Int32 = 0
        var playAt: Int64 = 0
        var stopAt: Int64 = 0
        var adjustedAt: Int64 = 0
    }

    /// ff-memless's envelope update interval (`FF_ENVELOPE_INTERVAL`), in milliseconds.
    static let envelopeIntervalMilliseconds: Int64 = 50
    /// Full gain (`ml->gain` starts at 0xffff).
    static let fullGain: Int64 = 0xffff
    /// Highest rumble magnitude, where sums saturate.
    static let maximumMagnitude: Int64 = 0xffff
    /// Highest periodic magnitude and envelope level (`s16` max); periodic is scaled from it to 0xffff.
    static let maximumLevel: Int64 = 0x7fff

    let tickRate: MotorModel.TickRate
    var slots: [Int16: Slot] = [:]
    var gain = fullGain
    var pendingTimer: Int64?
    /// The motor output so far: one hold per change point, at the time of the call that made it (a play, stop or
    /// gain change) or at the start of the tick whose timer made it.
    var output = DeviceOutput()
    var levels = MotorMagnitudes.off

    init(tickRate: MotorModel.TickRate) { self.tickRate = tickRate }

    func ticks(milliseconds: UInt16) -> Int64 {
        let perTick = tickRate.millisecondsPerTick
        return (Int64(milliseconds) + perTick - 1) / perTick
    }

    func milliseconds(ticks: Int64) -> Int64 { ticks * tickRate.millisecondsPerTick }

    /// Runs the timer for every expiry up to and including `tick`.
    mutating func advance(through tick: Int64) {
        while let timer = pendingTimer, timer <= tick {
            pendingTimer = nil
            playEffects(now: timer)
        }
    }

    mutating func handle(_ record: PadRecord, at now: Int64) {
        switch record.event {
        case .upload:
            guard record.retval == 0, let effect = record.effect, Self.drivesRumble(effect) else { return }
            upload(effect, now: now)
        case .erase:
            // The kernel always delivers a stop before the erase; the slot just goes away.
            if record.retval == 0, let id = record.id { slots[id] = nil }
        case .play:
            guard let id = record.id, var slot = slots[id] else { return }
            slot.started = true
            slot.count = record.count ?? 1
            slot.playAt = now + ticks(milliseconds: slot.effect.replayDelay)
            slot.stopAt = slot.playAt + ticks(milliseconds: slot.effect.replayLength)
            slot.adjustedAt = slot.playAt
            slots[id] = slot
            playEffects(now: now, calledAt: record.time)
        case .stop:
            guard let id = record.id, var slot = slots[id] else { return }
            if slot.playing { slot.aborting = true } else { slot.started = false }
            slots[id] = slot
            playEffects(now: now, calledAt: record.time)
        case .gain:
            gain = Int64(record.value ?? UInt16.max)
            for id in slots.keys { slots[id]?.playing = false }
            playEffects(now: now, calledAt: record.time)
        case .autocenter, .output:
            // Autocenter moves no rumble motor; output records come from emulated controllers, which report
            // their motor levels themselves.
            return
        }
    }

    static func drivesRumble(_ effect: ForceFeedbackEffect) -> Bool {
        switch effect.kind {
        case .rumble, .periodic: true
        default: false
        }
    }

    /// `ml_ff_upload`: a started effect restarts its replay, timed (a kernel quirk) from the *old* effect,
    /// because the kernel copies the new effect into the slot only after the driver's upload returns.
    mutating func upload(_ effect: ForceFeedbackEffect, now: Int64) {
        guard var slot = slots[effect.id] else {
            slots[effect.id] = Slot(effect: effect)
            return
        }
        if slot.started {
            slot.playing = false
            slot.playAt = now + ticks(milliseconds: slot.effect.replayDelay)
            slot.stopAt = slot.playAt + ticks(milliseconds: slot.effect.replayLength)
            slot.adjustedAt = slot.playAt
        }
        slot.effect = effect
        slots[effect.id] = slot
        if slot.started { scheduleTimer(now: now) }
    }

    /// `ml_play_effects` for the rumble group: `ml_get_combo_effect`, the driver's `play_effect`, then
    /// `ml_schedule_timer`, at tick `now`. A play, stop or gain change (`calledAt`: the record's time) calls it
    /// at once, so the driver gets the new levels then, inside the tick; the timer (nil) calls it as the tick
    /// begins.
    mutating func playEffects(now: Int64, calledAt call: PadTimestamp? = nil) {
        var strong: Int64 = 0
        var weak: Int64 = 0
        var comboActive = false
        for id in slots.keys.sorted() {
            guard var slot = slots[id], slot.started, now >= slot.playAt else { continue }
            comboActive = true
            if slot.aborting {
                slot.aborting = false
                slot.playing = false
                slot.started = false
            } else if slot.effect.replayLength > 0 && now >= slot.stopAt {
                slot.playing = false
                slot.count -= 1
                if slot.count <= 0 {
                    slot.started = false
                } else {
                    slot.playAt = now + ticks(milliseconds: slot.effect.replayDelay)
                    slot.stopAt = slot.playAt + ticks(milliseconds: slot.effect.replayLength)
                }
            } else {
                slot.playing = true
                slot.adjustedAt = now
                let (s, w) = contribution(of: slot, now: now)
                strong = min(strong + s, Self.maximumMagnitude)
                weak = min(weak + w, Self.maximumMagnitude)
            }
            slots[id] = slot
        }
        // ff-memless calls the driver only when some started effect has reached its play time; otherwise
        // the motors keep what they were last given.
        if comboActive {
            let next = MotorMagnitudes(rumbleStrong: UInt16(strong), rumbleWeak: UInt16(weak))
            if next != levels {
                levels = next
                output.hold(next, at: (call ?? PadTimestamp(microseconds: now * tickRate.microsecondsPerTick)).seconds)
            }
        }
        scheduleTimer(now: now)
    }

    /// `ml_combine_effects` for one rumble or periodic effect: what it adds to each motor.
    func contribution(of slot: Slot, now: Int64) -> (strong: Int64, weak: Int64) {
        switch slot.effect.kind {
        case .rumble(let strong, let weak):
            return (Int64(strong) * gain / Self.fullGain, Int64(weak) * gain / Self.fullGain)
        case .periodic(_, _, let magnitude, _, _, let envelope):
            let level = applyEnvelope(abs(Int64(magnitude)), envelope, slot: slot, now: now)
            let scaled = level * gain / Self.maximumLevel
            return (scaled, scaled)
        default:
            return (0, 0)
        }
    }

    /// `apply_envelope`: the envelope rule (`AttackFadeEnvelope`) in the kernel's integers, with the times
    /// since the replay started and until it stops converted from ticks to milliseconds as the kernel does.
    func applyEnvelope(_ value: Int64, _ envelope: ForceFeedbackEnvelope, slot: Slot, now: Int64) -> Int64 {
        let rule = AttackFadeEnvelope<Int64>(
            attackLength: Int64(envelope.attackLength),
            attackLevel: min(Int64(envelope.attackLevel), Self.maximumLevel),
            fadeLength: Int64(envelope.fadeLength),
            fadeLevel: min(Int64(envelope.fadeLevel), Self.maximumLevel))
        let remaining = slot.effect.replayLength > 0 ? milliseconds(ticks: slot.stopAt - now) : nil
        return rule.level(of: value, elapsed: milliseconds(ticks: now - slot.playAt), remaining: remaining)
    }

    /// `calculate_next_time`: when a playing effect next needs the timer.
    func nextTime(of slot: Slot) -> Int64 {
        let envelope: ForceFeedbackEnvelope
        if case .periodic(_, _, _, _, _, let periodicEnvelope) = slot.effect.kind {
            envelope = periodicEnvelope
        } else {
            envelope = ForceFeedbackEnvelope()
        }
        let interval = ticks(milliseconds: UInt16(Self.envelopeIntervalMilliseconds))
        if envelope.attackLength > 0 && slot.adjustedAt < slot.playAt + ticks(milliseconds: envelope.attackLength) {
            return slot.adjustedAt + interval
        }
        guard slot.effect.replayLength > 0 else { return slot.playAt }
        if envelope.fadeLength > 0 {
            let fadeStart = slot.stopAt - ticks(milliseconds: envelope.fadeLength)
            if slot.adjustedAt < fadeStart { return fadeStart }
            let nextFade = slot.adjustedAt + interval
            if nextFade < slot.stopAt { return nextFade }
        }
        return slot.stopAt
    }

    /// `ml_schedule_timer`: the earliest future point any started effect needs. A timer due now fires on
    /// the next tick, as `mod_timer` with an expiry of `jiffies` does.
    mutating func scheduleTimer(now: Int64) {
        var earliest: Int64?
        for slot in slots.values where slot.started {
            let next = slot.playing ? nextTime(of: slot) : slot.playAt
            if now <= next, next < (earliest ?? .max) { earliest = next }
        }
        pendingTimer = earliest.map { max($0, now + 1) }
    }
}

extension MotorModel.TickRate {
    /// How long before its deadline the engine writes a change whose requests the pad recorded as `requests`, in
    /// milliseconds: half a tick for an update alone (one upload into the playing effect, beside the keeper), which
    /// ff-memless applies on its next tick (`MotorOutput.changeLead`); nothing for a play, a stop or two requests.
    package func writeLeadMilliseconds(ofChange requests: [PadRecord]) -> Double {
        requests.count == 1 && requests[0].event == .upload ? Double(microsecondsPerTick) / 2000 : 0
    }
}

extension MotorMagnitudes {
    /// Levels given in the kernel's `FF_RUMBLE` units (0...0xffff per motor), as ff-memless hands them to a
    /// driver.
    package init(rumbleStrong: UInt16, rumbleWeak: UInt16) {
        self.init(strong: ForceFeedbackEffect.fraction(rumbleStrong), weak: ForceFeedbackEffect.fraction(rumbleWeak))
    }
}
