/// One update of a rumble device: from `time` on, the motors run at `levels` until the next command.
public struct RumbleCommand: Sendable, Hashable {
    /// Seconds from the start of the timeline.
    public var time: Double
    /// The quantised magnitudes (each an exact multiple of the profile's step), gain applied.
    public var levels: MotorMagnitudes
    /// The same levels in `FF_RUMBLE` units (0...0xffff), chosen so that the driver's own division lands on
    /// exactly the intended step (`level * 0xffff / steps`, rounded).
    public var strongMagnitude: UInt16
    public var weakMagnitude: UInt16
    /// How long this command holds: the time to the next command; `nil` for the last one, which is always off.
    /// The engine uses it as the effect's replay length so that output self-expires.
    public var holdDuration: Double?

    public init(time: Double, levels: MotorMagnitudes, strongMagnitude: UInt16, weakMagnitude: UInt16, holdDuration: Double?) {
        self.time = time
        self.levels = levels
        self.strongMagnitude = strongMagnitude
        self.weakMagnitude = weakMagnitude
        self.holdDuration = holdDuration
    }
}

/// Turns a motor timeline into the rumble updates a device needs under a profile.
///
/// Rules: the device starts off; a command is sent only when the quantised level (gain applied, rounded to the
/// profile's steps, absent motors at 0) differs from the last one sent; two commands are never closer than the
/// profile's minimum interval — a change that comes too soon is sent at the earliest allowed instant with the
/// level the timeline has *then* (so a level always lands, late rather than never); the last command is off.
public struct DeviceCommandPlanner: Sendable {
    public var profile: RenderProfile

    public init(profile: RenderProfile) {
        self.profile = profile
    }

    /// The quantised levels the device should have for timeline levels `levels`.
    public func quantized(_ levels: MotorMagnitudes) -> MotorMagnitudes {
        MotorMagnitudes(
            strong: profile.hasStrongMotor ? Self.quantize(levels.strong * profile.gain, steps: profile.strongSteps) : 0,
            weak: profile.hasWeakMotor ? Self.quantize(levels.weak * profile.gain, steps: profile.weakSteps) : 0)
    }

    static func quantize(_ value: Double, steps: Int) -> Double {
        let clamped = Swift.min(Swift.max(value, 0), 1)
        return (clamped * Double(steps)).rounded(.toNearestOrAwayFromZero) / Double(steps)
    }

    static func rumbleUnits(_ level: Double) -> UInt16 {
        UInt16((Swift.min(Swift.max(level, 0), 1) * Double(UInt16.max)).rounded())
    }

    /// The commands for `timeline`.
    public func commands(for timeline: MotorTimeline) -> [RumbleCommand] {
        var commands: [RumbleCommand] = []
        var sent = MotorMagnitudes.off
        var lastTime = -Double.infinity
        var cursor = 0.0
        while let change = nextChange(in: timeline, after: cursor, from: sent) {
            let deadline = Swift.max(change, lastTime + profile.minimumUpdateInterval)
            let target = quantized(timeline.levels(at: deadline))
            cursor = deadline
            guard target != sent else { continue }
            if !commands.isEmpty { commands[commands.count - 1].holdDuration = deadline - lastTime }
            commands.append(RumbleCommand(
                time: deadline, levels: target, strongMagnitude: Self.rumbleUnits(target.strong),
                weakMagnitude: Self.rumbleUnits(target.weak), holdDuration: nil))
            sent = target
            lastTime = deadline
        }
        return commands
    }

    /// The first instant at or after `time` where the quantised level differs from `sent`, `nil` if never.
    func nextChange(in timeline: MotorTimeline, after time: Double, from sent: MotorMagnitudes) -> Double? {
        if quantized(timeline.levels(at: time)) != sent { return time }
        var index = timeline.segmentIndex(at: time) ?? timeline.segments.firstIndex { $0.start > time }
        while let current = index, current < timeline.segments.count {
            let segment = timeline.segments[current]
            let from = Swift.max(segment.start, time)
            if quantized(segment.levels(at: from)) != sent { return from }
            if let crossing = firstCrossing(in: segment, after: from, from: sent) { return crossing }
            index = current + 1
        }
        // Past the end the output is off.
        return sent.isOff ? nil : Swift.max(timeline.endTime, time)
    }

    /// Where, inside `segment` after `from`, either motor's quantised level first leaves `sent`.
    private func firstCrossing(in segment: MotorTimeline.Segment, after from: Double, from sent: MotorMagnitudes) -> Double? {
        let span = segment.end - segment.start
        guard span > 0 else { return nil }
        var earliest: Double?
        let motors: [(start: Double, end: Double, present: Bool, steps: Int, current: Double)] = [
            (segment.startLevels.strong, segment.endLevels.strong, profile.hasStrongMotor, profile.strongSteps, sent.strong),
            (segment.startLevels.weak, segment.endLevels.weak, profile.hasWeakMotor, profile.weakSteps, sent.weak),
        ]
        for motor in motors where motor.present && motor.start != motor.end && profile.gain > 0 {
            let slope = (motor.end - motor.start) * profile.gain / span
            // The gained level at which rounding moves one step away from the level sent.
            let threshold = (motor.current * Double(motor.steps) + (slope > 0 ? 0.5 : -0.5)) / Double(motor.steps)
            var crossing = segment.start + (threshold - motor.start * profile.gain) / slope
            guard crossing < segment.end else { continue }
            crossing = Swift.max(crossing, from)
            // Rounding at the exact threshold may still give the old step: nudge forward until it moves.
            var nudge = 1e-12
            while crossing < segment.end, quantized(segment.levels(at: crossing)) == sent, nudge < span {
                crossing += nudge
                nudge *= 4
            }
            if crossing < segment.end, earliest.map({ crossing < $0 }) ?? true { earliest = crossing }
        }
        return earliest
    }
}

/// A device's output as its commands produce it: each command's levels held until the next.
public struct DeviceOutput: Sendable {
    public let commands: [RumbleCommand]

    public init(commands: [RumbleCommand]) {
        self.commands = commands
    }

    /// The levels the device runs at `time` (off before the first command).
    public func levels(at time: Double) -> MotorMagnitudes {
        var low = 0
        var high = commands.count
        while low < high {
            let middle = (low + high) / 2
            if commands[middle].time <= time { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? .off : commands[low - 1].levels
    }
}
