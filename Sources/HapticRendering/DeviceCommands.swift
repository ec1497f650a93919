/// One update of a rumble device: from `time` on, the motors run at `levels` until the next command.
public struct RumbleCommand: Sendable, Hashable {
    /// Seconds from the start of the timeline.
    public var time: Double
    /// The quantised magnitudes (each an exact multiple of the profile's step), gain applied.
    public var levels: MotorMagnitudes
    /// How long this command holds: the time to the next command; `nil` for the last one, which is always off.
    /// The engine uses it as the effect's replay length so that output self-expires.
    public var holdDuration: Double?

    public init(time: Double, levels: MotorMagnitudes, holdDuration: Double?) {
        self.time = time
        self.levels = levels
        self.holdDuration = holdDuration
    }
}

/// Turns a motor timeline into the rumble updates a device needs under a profile.
///
/// Rules: the device starts off; a command is sent only when the quantised level (gain applied, rounded to the
/// profile's steps, absent motors at 0) differs from the last one sent; two commands are never closer than the
/// profile's minimum interval — a change that comes too soon is sent at the earliest allowed instant with the
/// level the timeline has *then* (so a level always lands, late rather than never); the last command is off.
/// Two refinements, both within those rules: when a jump (a step in the timeline, such as a transient's onset
/// or end) follows a pending update within one interval, the planner either sends now or waits for the jump,
/// whichever leaves less squared error over the two holds; and a rate-limited drift (a ramp crossing steps)
/// sends the level at the middle of its hold rather than at its start.
public struct DeviceCommandPlanner: Sendable {
    public var profile: RenderProfile

    public init(profile: RenderProfile) {
        self.profile = profile
    }

    /// The quantised levels the device should have for timeline levels `levels`.
    public func quantized(_ levels: MotorMagnitudes) -> MotorMagnitudes {
        MotorMagnitudes(
            strong: profile.hasStrongMotor
                ? Self.quantize(levels.strong * profile.gain, steps: profile.strongSteps) : 0,
            weak: profile.hasWeakMotor ? Self.quantize(levels.weak * profile.gain, steps: profile.weakSteps) : 0)
    }

    static func quantize(_ value: Double, steps: Int) -> Double {
        let clamped = Swift.min(Swift.max(value, 0), 1)
        return (clamped * Double(steps)).rounded(.toNearestOrAwayFromZero) / Double(steps)
    }

    /// Where a plan starts: the levels the device already holds and when they were sent. A player (the engine)
    /// that re-plans while a device runs resumes from here, so the rate limit and the "no change, no command"
    /// rule hold across plans.
    public struct Resumption: Sendable, Hashable {
        /// The quantised levels the device holds (the last command's).
        public var sent: MotorMagnitudes
        /// When they were sent, on the timeline's time axis; `-infinity` when nothing was.
        public var lastCommandTime: Double

        public init(sent: MotorMagnitudes, lastCommandTime: Double) {
            self.sent = sent
            self.lastCommandTime = lastCommandTime
        }

        /// A device that is off and has been sent nothing: how `commands(for:)` starts.
        public static let deviceOff = Resumption(sent: .off, lastCommandTime: -.infinity)
    }

    /// The commands for `timeline`.
    public func commands(for timeline: MotorTimeline) -> [RumbleCommand] {
        commands(for: timeline, from: 0, resuming: .deviceOff)
    }

    /// The commands for `timeline` from `start` on, for a device already in the state `resumption` describes:
    /// the same decisions `commands(for:)` makes, continued. Planning a timeline whole and planning it again
    /// from one of its command times (resuming with that command) give the same commands from there on. The
    /// first command's predecessor is not in the result, so no hold duration is set for it.
    public func commands(for timeline: MotorTimeline, from start: Double, resuming resumption: Resumption)
        -> [RumbleCommand]
    {
        var commands: [RumbleCommand] = []
        var sent = resumption.sent
        var lastTime = resumption.lastCommandTime
        var cursor = start
        let interval = profile.minimumUpdateInterval
        while let change = nextChange(in: timeline, after: cursor, from: sent) {
            let deadline = Swift.max(change, lastTime + interval)
            cursor = deadline
            var target = quantized(timeline.levels(at: deadline))
            if interval > 0 {
                if let jump = nextJump(in: timeline, after: deadline, before: deadline + interval) {
                    // Sending now would hold back the jump that follows by up to an interval. Wait for the jump
                    // instead when that costs less squared error over the two holds.
                    let after = quantized(timeline.levels(at: deadline + interval))
                    let sendNow =
                        holdCost(target, from: deadline, to: deadline + interval, in: timeline)
                        + holdCost(after, from: deadline + interval, to: jump + interval, in: timeline)
                    let wait =
                        holdCost(sent, from: deadline, to: jump, in: timeline)
                        + holdCost(quantized(timeline.levels(at: jump)), from: jump, to: jump + interval, in: timeline)
                    if wait <= sendNow {
                        cursor = jump
                        continue
                    }
                } else if deadline > change, !isJump(in: timeline, at: deadline) {
                    // A rate-limited drift (a ramp crossing steps) holds for about one interval: send the level at
                    // the middle of that hold, which halves a ramp's error against the level at its start.
                    target = quantized(timeline.levels(at: deadline + interval / 2))
                }
            }
            guard target != sent else { continue }
            if !commands.isEmpty { commands[commands.count - 1].holdDuration = deadline - lastTime }
            commands.append(
                RumbleCommand(time: deadline, levels: target, holdDuration: nil))
            sent = target
            lastTime = deadline
        }
        return commands
    }

    /// The first forward step, in seconds, when rounding at an exact threshold still gives the old step (a
    /// picosecond: far below any clock, above the rounding noise of times in the tens of seconds).
    static let smallestNudge = 1e-12

    /// Samples per minimum interval when comparing two schedules (16: errors resolved to ~1 ms at 20 ms).
    static let costSamplesPerInterval = 16.0
    /// The most samples one hold's cost takes (64 intervals' worth).
    static let maximumCostSamples = 1024.0

    /// The squared error, per motor and integrated over `from..<to`, of holding `levels` against the timeline.
    func holdCost(_ levels: MotorMagnitudes, from: Double, to: Double, in timeline: MotorTimeline) -> Double {
        guard to > from else { return 0 }
        let step = Swift.max(profile.minimumUpdateInterval, 1e-6) / Self.costSamplesPerInterval
        // At most `maximumCostSamples`: the spans compared are a few intervals long, and a timeline built by hand
        // with times near the limits of a Double must not turn one into billions of samples (or an infinite count).
        let count = Int(Swift.min(Swift.max(((to - from) / step).rounded(.up), 1), Self.maximumCostSamples))
        let width = (to - from) / Double(count)
        var total = 0.0
        for index in 0..<count {
            let target = timeline.levels(at: from + (Double(index) + 0.5) * width)
            let strong = levels.strong - (profile.hasStrongMotor ? target.strong * profile.gain : 0)
            let weak = levels.weak - (profile.hasWeakMotor ? target.weak * profile.gain : 0)
            total += (strong * strong + weak * weak) * width
        }
        return total
    }

    /// Whether the quantised level jumps at `time` (a segment boundary where the levels before and after differ).
    func isJump(in timeline: MotorTimeline, at time: Double) -> Bool {
        guard let index = timeline.segmentIndex(at: time) else {
            // At or after the end: a jump when the last segment ends above zero.
            guard let last = timeline.segments.last, time == timeline.endTime else { return false }
            return quantized(last.endLevels) != .off
        }
        let segment = timeline.segments[index]
        guard segment.start == time else { return false }
        let before = index > 0 ? timeline.segments[index - 1].endLevels : .off
        return quantized(before) != quantized(segment.startLevels)
    }

    /// The first jump strictly after `time` and before `limit`, `nil` if none.
    func nextJump(in timeline: MotorTimeline, after time: Double, before limit: Double) -> Double? {
        var index = (timeline.segmentIndex(at: time) ?? timeline.segments.endIndex) + 1
        while index < timeline.segments.count, timeline.segments[index].start < limit {
            if isJump(in: timeline, at: timeline.segments[index].start) { return timeline.segments[index].start }
            index += 1
        }
        let end = timeline.endTime
        if end > time, end < limit, isJump(in: timeline, at: end) { return end }
        return nil
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
    private func firstCrossing(in segment: MotorTimeline.Segment, after from: Double, from sent: MotorMagnitudes)
        -> Double?
    {
        let span = segment.end - segment.start
        guard span > 0 else { return nil }
        var earliest: Double?
        let motors: [(start: Double, end: Double, present: Bool, steps: Int, current: Double)] = [
            (
                segment.startLevels.strong, segment.endLevels.strong, profile.hasStrongMotor, profile.strongSteps,
                sent.strong
            ),
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
            var nudge = Self.smallestNudge
            while crossing < segment.end, quantized(segment.levels(at: crossing)) == sent, nudge < span {
                crossing += nudge
                nudge *= 4
            }
            if crossing < segment.end, earliest.map({ crossing < $0 }) ?? true { earliest = crossing }
        }
        return earliest
    }
}
