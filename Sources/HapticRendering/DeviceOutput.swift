/// What a rumble device's motors do over time, given what it was told: the one "output at time t" model.
///
/// A device runs one held level at a time (the latest `hold`, until the next one or until it expires, as an
/// effect's replay length runs out) plus any pulses playing on slots of their own; whatever runs at one instant
/// is summed per motor and clamped (`MotorMagnitudes.summed`), as ff-memless combines started effects. Past
/// the last hold's expiry, and before the first hold, the motors are off.
///
/// The planner's commands (`init(commands:)`), the built-in virtual output (held mixes that self-expire, and
/// triggered pulses) and the virtual pad's ff-memless replay (its change points) all answer "what do the motors
/// do at t" through this type. `MotorTimeline` is the other side: what the motors *should* do.
public struct DeviceOutput: Sendable, Hashable {
    /// Levels from `time` on, until the next hold or `expiry`, whichever comes first.
    public struct Hold: Sendable, Hashable {
        public var time: Double
        public var levels: MotorMagnitudes
        /// When the device stops on its own (`infinity`: never, the level holds until the next one).
        public var expiry: Double

        public init(time: Double, levels: MotorMagnitudes, expiry: Double = .infinity) {
            self.time = time
            self.levels = levels
            self.expiry = expiry
        }
    }

    /// Levels for `start..<end`, on top of whatever else runs.
    public struct Pulse: Sendable, Hashable {
        public var start: Double
        public var end: Double
        public var levels: MotorMagnitudes
        /// The effect slot it plays on, if any: playing that slot again restarts it, stopping it cuts it short.
        public var slot: Int?

        public init(start: Double, end: Double, levels: MotorMagnitudes, slot: Int? = nil) {
            self.start = start
            self.end = end
            self.levels = levels
            self.slot = slot
        }
    }

    /// In time order (`hold(_:at:expiry:)` keeps it so).
    public private(set) var holds: [Hold] = []
    public private(set) var pulses: [Pulse] = []

    /// A device that was told nothing: off at every time.
    public init() {}

    /// The output of planned commands: each command's levels held until the next (the last one is off).
    public init(commands: [RumbleCommand]) {
        for command in commands { hold(command.levels, at: command.time) }
    }

    /// From `time` on, the held level is `levels`, until the next hold or `expiry`. A hold earlier than the last
    /// one replaces the history from `time` on (the device cannot be told something in the past).
    public mutating func hold(_ levels: MotorMagnitudes, at time: Double, expiry: Double = .infinity) {
        if let last = holds.last, last.time > time { holds.removeSubrange(holdCount(atOrBefore: time)...) }
        if let last = holds.last, last.time == time { holds.removeLast() }
        holds.append(Hold(time: time, levels: levels, expiry: expiry))
    }

    /// A pulse of `levels` from `time` for `duration` seconds, on effect slot `slot` if it has one (a pulse
    /// still running there restarts: one effect plays once at a time).
    public mutating func pulse(_ levels: MotorMagnitudes, at time: Double, duration: Double, slot: Int? = nil) {
        if let slot { stopPulse(slot: slot, at: time) }
        pulses.append(Pulse(start: time, end: time + Swift.max(duration, 0), levels: levels, slot: slot))
    }

    /// The pulse running on `slot` at `time` ends there (its effect was stopped).
    public mutating func stopPulse(slot: Int, at time: Double) {
        for index in pulses.indices where pulses[index].slot == slot {
            if pulses[index].start <= time, time < pulses[index].end { pulses[index].end = time }
        }
    }

    /// Drops what no longer matters at or after `time` (earlier holds, pulses that ended), so a live output's
    /// history stays bounded. Levels asked for before `time` afterwards may be wrong.
    public mutating func forget(before time: Double) {
        let current = holdCount(atOrBefore: time)
        if current > 1 { holds.removeFirst(current - 1) }
        pulses.removeAll { $0.end <= time }
    }

    /// The hold in force at `time` (the latest that started at or before it), expired or not.
    public func hold(at time: Double) -> Hold? {
        let count = holdCount(atOrBefore: time)
        return count > 0 ? holds[count - 1] : nil
    }

    /// The first hold that starts strictly after `time`.
    public func nextHold(after time: Double) -> Hold? {
        let count = holdCount(atOrBefore: time)
        return count < holds.count ? holds[count] : nil
    }

    /// What the motors run at `time`: the held level unless it has expired, plus the pulses running then.
    public func levels(at time: Double) -> MotorMagnitudes {
        var held = MotorMagnitudes.off
        if let current = hold(at: time), time < current.expiry { held = current.levels }
        let running = pulses.filter { $0.start <= time && time < $0.end }
        return running.isEmpty ? held : MotorMagnitudes.summed([held] + running.map(\.levels))
    }

    /// How many holds start at or before `time` (binary search: holds are in time order).
    private func holdCount(atOrBefore time: Double) -> Int {
        var low = 0
        var high = holds.count
        while low < high {
            let middle = (low + high) / 2
            if holds[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
