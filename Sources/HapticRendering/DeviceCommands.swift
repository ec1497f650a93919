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

/// Turns a motor timeline into the rumble updates a device needs under a profile, spending the profile's write
/// budget (`WriteBudget`) where the pattern changes.
///
/// Rules: the device starts off; a command is sent only when the quantised level (gain applied, rounded to the
/// profile's steps, absent motors at 0) differs from the last one sent; two commands are never closer than the
/// profile's minimum interval; the writes (commands, and the renewals a held level needs) never exceed the
/// budget over any window; the last command is off. Where the commands go:
/// - **A jump** (a step in the timeline: a transient's onset or end, an event's start or end) is sent when it
///   happens, or as soon as the interval and the budget allow, so a level always lands, late rather than never.
///   When a jump follows a pending update within one interval, the planner either sends now or waits for the
///   jump, whichever leaves less squared error over the two holds.
/// - **A drift** (a ramp or curve crossing steps) is sent once holding the level sent has cost the budget's
///   `holdError` (squared error, integrated) since that level was sent. Every hold then costs about the same
///   error, which is where a fixed number of writes leaves the least error in total: a ramp of slope k gets a
///   write every (12·holdError/k²)^(1/3) seconds, so steep stretches get more writes than gentle ones, not one
///   per interval or per step whatever the slope. A drift also goes out when the renewal of the level held
///   falls due (`WriteBudget.renewalInterval`): that write is made either way, so it carries the level then.
/// - **Each level sent** is the timeline's mean over the hold it starts (the stretch, up to the next jump, whose
///   error about its mean stays within `holdError`): on a ramp, the level at the middle of the hold. A jump
///   inside the minimum interval does not end the hold, which lasts the interval at least: the level is then the
///   mean over the interval, across the jump.
public struct DeviceCommandPlanner: Sendable {
    public var profile: RenderProfile
    /// The device's own frame instants, where its driver paces what it sends and they are known: every command
    /// then falls on an instant of the grid and carries the timeline's mean over the frame it starts
    /// (`framedCommands`), in place of the budget's placement.
    public var frames: FrameGrid?

    public init(profile: RenderProfile, frames: FrameGrid? = nil) {
        self.profile = profile
        self.frames = frames
    }

    var budget: WriteBudget { profile.budget }

    /// The quantised levels the device should have for timeline levels `levels`.
    public func quantized(_ levels: MotorMagnitudes) -> MotorMagnitudes {
        MotorMagnitudes(
            strong: profile.hasStrongMotor
                ? Self.quantize(levels.strong * profile.gain, steps: profile.strongSteps) : 0,
            weak: profile.hasWeakMotor ? Self.quantize(levels.weak * profile.gain, steps: profile.weakSteps) : 0)
    }

    /// Device levels (gain already applied) rounded to the profile's steps, absent motors at 0.
    func stepped(_ levels: MotorMagnitudes) -> MotorMagnitudes {
        MotorMagnitudes(
            strong: profile.hasStrongMotor ? Self.quantize(levels.strong, steps: profile.strongSteps) : 0,
            weak: profile.hasWeakMotor ? Self.quantize(levels.weak, steps: profile.weakSteps) : 0)
    }

    static func quantize(_ value: Double, steps: Int) -> Double {
        (PureMath.unitClamped(value) * Double(steps)).rounded(.toNearestOrAwayFromZero) / Double(steps)
    }

    /// Where a plan starts: the levels the device already holds, when they were sent, and what is left of the
    /// write budget then. A player (the engine) that re-plans while a device runs resumes from here, so the
    /// interval, the budget and the "no change, no command" rule hold across plans.
    public struct Resumption: Sendable, Hashable {
        /// The quantised levels the device holds (the last command's).
        public var sent: MotorMagnitudes
        /// When they were sent, on the timeline's time axis; `-infinity` when nothing was. The minimum interval
        /// counts from it.
        public var lastCommandTime: Double
        /// The write the budget counts from: the last command, or a renewal of its level made later than due
        /// (`resumption(afterRenewalDueAt:madeAt:from:)`); renewals made on time are counted from the command.
        public var lastWriteTime: Double
        /// The budget's writes left just after that write (`WriteBudget.burst` when nothing was sent).
        public var writesLeft: Double

        /// `lastWriteTime`: the last command's time unless given.
        public init(
            sent: MotorMagnitudes, lastCommandTime: Double, writesLeft: Double = .infinity, lastWriteTime: Double? = nil
        ) {
            self.sent = sent
            self.lastCommandTime = lastCommandTime
            self.lastWriteTime = lastWriteTime ?? lastCommandTime
            self.writesLeft = writesLeft
        }

        /// A device that is off and has been sent nothing: how `commands(for:)` starts.
        public static let deviceOff = Resumption(sent: .off, lastCommandTime: -.infinity)
    }

    /// The state after `command` was sent to a device that was in `resumption`: its levels, its time, and the
    /// budget left (renewals of the level held before it counted).
    public func resumption(after command: RumbleCommand, from resumption: Resumption) -> Resumption {
        self.resumption(after: command, madeAt: command.time, from: resumption)
    }

    /// The state after `command`, due at its time, was sent late, at `time`, to a device in `resumption` that was
    /// sent nothing since its time: the renewals due before then counted, none from then on (the command takes the
    /// place of the one due with it, and nothing was written after), the budget's refill up to `time` counted. The
    /// minimum interval and the renewals after it count from `time`, when the device saw it. One sent early counts
    /// at its time, as `resumption(after:from:)` counts it.
    public func resumption(after command: RumbleCommand, madeAt time: Double, from resumption: Resumption)
        -> Resumption
    {
        var bucket = WriteBucket(budget: budget, resumption: resumption)
        bucket.spend(dueAt: command.time, madeAt: Swift.max(time, command.time), holding: command.levels)
        return Resumption(sent: command.levels, lastCommandTime: bucket.time, writesLeft: bucket.left)
    }

    /// The state after the renewal of the level a device in `resumption` holds, due at `due` (the first renewal not
    /// made), was made late, at `time`: its writes taken then, and the renewals the budget counts from there on.
    /// The renewals a stall skipped were never written, so they take nothing. The minimum interval still counts
    /// from the last command: a renewal repeats the level held, as one made on time does.
    public func resumption(afterRenewalDueAt due: Double, madeAt time: Double, from resumption: Resumption)
        -> Resumption
    {
        var bucket = WriteBucket(budget: budget, resumption: resumption)
        bucket.renew(dueAt: due, madeAt: time)
        return Resumption(
            sent: resumption.sent, lastCommandTime: resumption.lastCommandTime, writesLeft: bucket.left,
            lastWriteTime: time)
    }

    /// The earliest time from `time` on at which a device in `resumption` takes a change: the minimum interval
    /// after its last command, and the write budget (where a level is held, a change at a renewal's instant takes
    /// that renewal's place), as `commands(for:from:resuming:)` places one.
    public func earliestChange(after resumption: Resumption, from time: Double) -> Double {
        WriteBucket(budget: budget, resumption: resumption).earliest(
            from: Swift.max(time, resumption.lastCommandTime + profile.minimumUpdateInterval))
    }

    /// Whether a device in `resumption` is at rest by `time`: off, past the minimum interval since the last
    /// command, and with its whole write budget back, so that a plan from there is the plan from rest.
    public func isAtRest(_ resumption: Resumption, at time: Double) -> Bool {
        guard resumption.sent.isOff, resumption.lastCommandTime <= time - profile.minimumUpdateInterval else {
            return false
        }
        return WriteBucket(budget: budget, resumption: resumption).isFull(at: time)
    }

    /// The earliest time from which a device in `resumption` is at rest (`isAtRest`), so that a plan from rest
    /// made ahead holds for a start then; nil while it holds a level (it is at rest only once told off).
    public func restsFrom(_ resumption: Resumption) -> Double? {
        guard resumption.sent.isOff else { return nil }
        let last = resumption.lastCommandTime
        guard last.isFinite else { return -.infinity }
        return Swift.max(
            last + profile.minimumUpdateInterval, WriteBucket(budget: budget, resumption: resumption).fullFrom)
    }

    /// The commands for `timeline`.
    public func commands(for timeline: MotorTimeline) -> [RumbleCommand] {
        commands(for: timeline, from: 0, resuming: .deviceOff)
    }

    /// The commands for `timeline` from `start` on, for a device already in the state `resumption` describes:
    /// the same decisions `commands(for:)` makes, continued. Planning a timeline whole and planning it again
    /// from one of its command times (resuming with the state after that command, `resumption(after:from:)`)
    /// give the same commands from there on. The first command's predecessor is not in the result, so no hold
    /// duration is set for it. `levelsBefore`, for a timeline cut at `start` from a longer one (a long mix
    /// planned a stretch at a time), are the longer one's levels just before the cut: a step at `start` is then a
    /// jump only where the longer timeline jumps, so the plan goes on as the longer one's would. `until`: the
    /// planning stops after the first command at or after it; the commands up to there are the whole plan's.
    public func commands(
        for timeline: MotorTimeline, from start: Double, resuming resumption: Resumption,
        levelsBefore: MotorMagnitudes? = nil, until: Double = .infinity
    ) -> [RumbleCommand] {
        if let frames {
            return framedCommands(for: timeline, on: frames, from: start, resuming: resumption, until: until)
        }
        var commands: [RumbleCommand] = []
        var sent = resumption.sent
        var lastTime = resumption.lastCommandTime
        // Renewals fall due from the last write: the command, or a renewal of its level made late.
        var lastWrite = resumption.lastWriteTime
        var bucket = WriteBucket(budget: budget, resumption: resumption)
        var cursor = start
        // The error of holding `sent` counts from here: its command, or the start of this plan.
        var holdStart = Swift.max(start, lastTime)
        // A decision that kept the level: at that instant a jump no longer decides (it was weighed).
        var kept = -Double.infinity
        let interval = profile.minimumUpdateInterval
        while let change = nextChange(in: timeline, after: cursor, from: sent) {
            var decision = change
            let jump =
                if let levelsBefore, change == start {
                    quantized(levelsBefore) != quantized(timeline.levels(at: start))
                } else {
                    isJump(in: timeline, at: change)
                }
            if change <= kept || !jump {
                // A drift: worth a write once holding `sent` has cost a hold's error (a jump decides first), or
                // at the renewal a held level costs anyway, which may as well carry the level then.
                let limit = nextJump(in: timeline, after: change, before: .infinity) ?? timeline.endTime
                let due = errorDue(holding: sent, from: holdStart, before: limit, in: timeline)
                let renewal = renewalDue(holding: sent, since: lastWrite, from: change, after: kept)
                // A decision that kept the level chose it for a hold of an interval at least: the drift is weighed
                // again once that has passed, not every time the error of a far-off level comes due again (a
                // pattern swinging faster than the interval, or a motor with few steps, would otherwise be weighed
                // every few microseconds of its time). A command since then counts the interval from itself.
                let weighed = kept > lastTime ? kept + interval : -Double.infinity
                decision = Swift.max(change, Swift.min(Swift.max(due, weighed), renewal))
            }
            let deadline = bucket.earliest(from: Swift.max(decision, lastTime + interval))
            cursor = deadline
            let target = holdLevel(from: deadline, in: timeline)
            if interval > 0, let jump = nextJump(in: timeline, after: deadline, before: deadline + interval) {
                // Sending now would hold back the jump that follows by up to an interval. Wait for the jump
                // instead when that costs less squared error over the two holds.
                let after = quantized(timeline.levels(at: deadline + interval))
                let sendNow =
                    holdError(target, from: deadline, to: deadline + interval, in: timeline)
                    + holdError(after, from: deadline + interval, to: jump + interval, in: timeline)
                let wait =
                    holdError(sent, from: deadline, to: jump, in: timeline)
                    + holdError(quantized(timeline.levels(at: jump)), from: jump, to: jump + interval, in: timeline)
                if wait <= sendNow {
                    cursor = jump
                    continue
                }
            }
            guard target != sent else {
                // The level that suits the hold from here is the one held: keep it, and count its error anew.
                holdStart = deadline
                kept = deadline
                continue
            }
            if !commands.isEmpty { commands[commands.count - 1].holdDuration = deadline - lastTime }
            commands.append(RumbleCommand(time: deadline, levels: target, holdDuration: nil))
            bucket.spend(at: deadline, holding: target)
            sent = target
            lastTime = deadline
            lastWrite = deadline
            holdStart = deadline
            if deadline >= until { break }
        }
        return commands
    }

    /// The commands for `timeline` on a device that sends one frame per instant of `frames`: at each instant from
    /// `start` on (and a whole period after the last command at least), the timeline's mean over the frame that
    /// starts there, quantised, whenever it differs from the level the device holds; off once the timeline ends.
    /// A frame that began before `start` is the device's already: what the timeline has from `start` to the first
    /// instant goes into the first frame (its mean is taken from `start`), late rather than never, so that a
    /// pattern started between two frames keeps its opening. Each instant decides from the level held alone, so
    /// planning again from any command time (resuming after it) gives the same commands from there on.
    func framedCommands(
        for timeline: MotorTimeline, on frames: FrameGrid, from start: Double, resuming resumption: Resumption,
        until: Double
    ) -> [RumbleCommand] {
        var commands: [RumbleCommand] = []
        var sent = resumption.sent
        var lastTime = resumption.lastCommandTime
        let period = frames.period
        // The device's last call before `start`: the last command, or a renewal of its level since (one every
        // renewal interval from the command, on the grid it was planned on). The driver queues a frame for every
        // call and sends one a frame: two calls less than a frame apart leave every frame after them a frame late
        // until the queue empties at rest. So the first instant is a frame after that call, less the small
        // corrections the grid may have had since (it follows the pad's clock): a grid that moved by half a frame,
        // onto the other report, starts a frame later. A renewal due at `start` itself (within the grid's
        // tolerance) is not a call yet: the plan's first command goes out in its place.
        var lastCall = lastTime
        let before = start - FrameGrid.tolerance
        if !sent.isOff, let interval = budget.renewalInterval, interval > 0, lastTime.isFinite, before > lastTime {
            lastCall += ((before - lastTime) / interval).rounded(.down) * interval
        }
        let earliest = lastCall.isFinite ? lastCall + period * Self.framesBetweenCalls : -Double.infinity
        // An instant a little before `start` is its frame still (a player started on a frame the grid has since
        // moved by a fraction of a millisecond): written that little late, it is on time for the device.
        var instant = frames.instant(atOrAfter: Swift.max(start - period / 4, earliest))
        // Resumed from a command, the device's frames covered everything up to the next; planned from a change
        // after it (or from rest), what the change brings before the first instant goes into that frame.
        var from = lastTime < start - FrameGrid.tolerance ? Swift.min(start, instant) : instant
        while instant < timeline.endTime || !sent.isOff {
            let end = instant + period
            let target = stepped(integrals(from: from, to: end, in: timeline).mean(over: end - from))
            from = end
            if target != sent {
                if !commands.isEmpty { commands[commands.count - 1].holdDuration = instant - lastTime }
                commands.append(RumbleCommand(time: instant, levels: target, holdDuration: nil))
                sent = target
                lastTime = instant
                if instant >= until { break }
            }
            // From the origin each time, so that long plans do not drift off the grid by rounding.
            let next = frames.instant(atOrAfter: instant + period / 2)
            // Times so large that a frame no longer moves them (a timeline built by hand): nothing more to plan.
            guard next > instant, next.isFinite else { break }
            instant = next
            // The frames within a steady stretch at the level sent change nothing: the next looked at is the last
            // frame that ends within the stretch, whatever its length (each was looked at, and a timeline built
            // by hand to hold a level for 1e20 s was planned for ever). A stretch that outlasts the frames a
            // `Double` counts (to 1e308 s, or for ever) holds the level to the end: no command comes after it.
            if let index = timeline.segmentIndex(at: from), case let segment = timeline.segments[index],
                segment.startLevels == segment.endLevels, stepped(segment.startLevels) == sent
            {
                let last = frames.instant(atOrAfter: segment.end - period)
                guard last.isFinite else { break }
                if last > instant {
                    instant = last
                    from = last
                }
            }
        }
        return commands
    }

    /// When the renewal of `levels`, last written at `lastTime` (its command, or a renewal made late), falls due at
    /// or after `time` and after `kept` (a decision there kept the level: its renewal was that instant's): one
    /// every `renewalInterval` after that write.
    /// Infinity where nothing is renewed (an off level, no renewals counted, nothing sent).
    func renewalDue(holding levels: MotorMagnitudes, since lastTime: Double, from time: Double, after kept: Double)
        -> Double
    {
        guard let interval = budget.renewalInterval, !levels.isOff, lastTime.isFinite, time.isFinite else {
            return .infinity
        }
        var due = lastTime + interval * Swift.max(1, ((time - lastTime) / interval).rounded(.up))
        if due <= kept { due += interval }
        // Times so large that an interval no longer moves them: no renewal to wait for.
        return due > kept && due >= time ? due : .infinity
    }

    /// The least spacing of two calls on a device's frames, in frames (`framedCommands`): a whole frame, less a
    /// quarter for the corrections the grid takes from the pad's clock.
    public static let framesBetweenCalls = 0.75

    /// The first forward step, in seconds, when rounding at an exact threshold still gives the old step (a
    /// picosecond: far below any clock, above the rounding noise of times in the tens of seconds).
    static let smallestNudge = 1e-12

    /// How far ahead the level of a hold looks at most: far longer than any hold a pattern changing within it
    /// gets, short enough that the bisection for its end stays finer than a microsecond.
    static let longestHoldLookahead = 60.0

    /// The quantised level for a hold starting at `time`: the timeline's mean over the longest stretch from there
    /// (never past the next jump) whose squared error about its own mean stays within the budget's hold error, or
    /// over the minimum interval when the next jump falls inside it.
    func holdLevel(from time: Double, in timeline: MotorTimeline) -> MotorMagnitudes {
        guard time < timeline.endTime, var index = timeline.segmentIndex(at: time) else { return .off }
        let next = nextJump(in: timeline, after: time, before: .infinity) ?? timeline.endTime
        // Times near the limits of a Double (timelines built by hand) leave no mean to take: the level then.
        guard next.isFinite, (next - time).isFinite else { return quantized(timeline.levels(at: time)) }
        let interval = profile.minimumUpdateInterval
        if next < time + interval, interval.isFinite {
            // The next command comes an interval later at the soonest, so a jump inside the interval cannot end
            // the hold before it does: the level is the mean over the whole interval, across the jump (and past
            // the end, where the output is off).
            let mean = integrals(from: time, to: time + interval, in: timeline).mean(over: interval)
            guard mean.strong.isFinite, mean.weak.isFinite else { return quantized(timeline.levels(at: time)) }
            return stepped(mean)
        }
        // A hold that starts in a silence lasting the minimum interval is off: what follows the silence is sent when
        // its own error comes due. Averaged with a gentle rise after the silence (an attack from 0), the level held
        // the motors a little on through it, in place of the stop before it, renewed every renewal interval.
        if isSilent(timeline, from: time, until: time + interval) { return .off }
        let limit = Swift.min(next, time + Self.longestHoldLookahead)
        // A hold lasts at least the minimum interval: its level is for that long.
        let shortest = Swift.min(limit, time + interval)
        let segments = timeline.segments
        var sums = MotionSums()
        var end = time
        while index < segments.count, segments[index].start < shortest {
            let segment = segments[index]
            end = Swift.min(segment.end, shortest)
            sums = sums.adding(piece(of: segment, from: Swift.max(segment.start, time), to: end))
            if segment.end > shortest { break }
            index += 1
        }
        // Then whole pieces while the spread about the mean stays within the error, and a bisection inside the
        // one that passes it: the spread only grows with the stretch.
        if sums.spread(over: end - time) <= budget.holdError {
            while index < segments.count, segments[index].start < limit {
                let segment = segments[index]
                let from = Swift.max(segment.start, end)
                let pieceEnd = Swift.min(segment.end, limit)
                guard pieceEnd > from else {
                    index += 1
                    continue
                }
                let whole = sums.adding(piece(of: segment, from: from, to: pieceEnd))
                if whole.spread(over: pieceEnd - time) <= budget.holdError {
                    sums = whole
                    end = pieceEnd
                    index += 1
                    continue
                }
                var low = from
                var high = pieceEnd
                for _ in 0..<48 {
                    let middle = (low + high) / 2
                    let partial = sums.adding(piece(of: segment, from: from, to: middle))
                    if partial.spread(over: middle - time) > budget.holdError { high = middle } else { low = middle }
                }
                sums = sums.adding(piece(of: segment, from: from, to: low))
                end = low
                break
            }
        }
        guard end > time else { return quantized(timeline.levels(at: time)) }
        if let first = timeline.segmentIndex(at: time), end <= timeline.segments[first].end {
            // Inside one linear segment the mean is the level at the middle, exactly (a flat level stays itself).
            return quantized(timeline.segments[first].levels(at: (time + end) / 2))
        }
        let mean = sums.mean(over: end - time)
        guard mean.strong.isFinite, mean.weak.isFinite else { return quantized(timeline.levels(at: time)) }
        return stepped(mean)
    }

    /// Whether the device's level (quantised) is off over all of `from...until`: every linear piece of the timeline
    /// there begins and ends off, so that nothing between rounds to a step.
    func isSilent(_ timeline: MotorTimeline, from: Double, until: Double) -> Bool {
        guard var index = timeline.segmentIndex(at: from) else { return from >= timeline.endTime }
        let segments = timeline.segments
        while index < segments.count, segments[index].start <= until {
            let segment = segments[index]
            let first = segment.levels(at: Swift.max(segment.start, from))
            let last = segment.end <= until ? segment.endLevels : segment.levels(at: until)
            guard quantized(first) == .off, quantized(last) == .off else { return false }
            index += 1
        }
        return true
    }

    /// The first instant after `start` at which holding `levels` since `start` has cost the budget's hold error,
    /// or `limit` if it has not by then. Never `start` itself: a hold always lasts a little.
    func errorDue(holding levels: MotorMagnitudes, from start: Double, before limit: Double, in timeline: MotorTimeline)
        -> Double
    {
        guard limit > start else { return limit }
        let target = budget.holdError
        var accrued = 0.0
        var from = start
        // Whole pieces first (segments, then the silence after the end), then a bisection inside the one that
        // reaches the error: the error only grows with time.
        while from < limit {
            let index = timeline.segmentIndex(at: from)
            let pieceEnd = Swift.min(limit, index.map { timeline.segments[$0].end } ?? .infinity)
            let piece = holdError(levels, from: from, to: pieceEnd, in: timeline)
            if accrued + piece >= target {
                var low = from
                var high = pieceEnd.isFinite ? pieceEnd : from + Swift.max(1, (target - accrued) * 1e6)
                for _ in 0..<60 {
                    let middle = (low + high) / 2
                    if accrued + holdError(levels, from: from, to: middle, in: timeline) >= target {
                        high = middle
                    } else {
                        low = middle
                    }
                }
                return Swift.max(high, start + Self.smallestNudge)
            }
            accrued += piece
            guard pieceEnd.isFinite else { break }
            from = pieceEnd
        }
        return limit
    }

    /// The squared error, per present motor (gain applied) and integrated over `from..<to`, of holding `levels`
    /// against the timeline. Exact: the timeline is linear inside each segment and off after its end.
    package func holdError(_ levels: MotorMagnitudes, from: Double, to: Double, in timeline: MotorTimeline) -> Double {
        guard to > from else { return 0 }
        return integrals(from: from, to: to, in: timeline).error(holding: levels, over: to - from)
    }

    /// ∫f and ∫f² per motor over `from..<to`, of the timeline as the device should play it (gain applied,
    /// absent motors 0, clipped to 1 as quantisation clips it); off outside the timeline.
    func integrals(from: Double, to: Double, in timeline: MotorTimeline) -> MotionSums {
        var sums = MotionSums()
        guard to > from, var index = timeline.segmentIndex(at: Swift.max(from, 0)) else { return sums }
        while index < timeline.segments.count, timeline.segments[index].start < to {
            let segment = timeline.segments[index]
            sums = sums.adding(piece(of: segment, from: Swift.max(segment.start, from), to: Swift.min(segment.end, to)))
            index += 1
        }
        return sums
    }

    /// The sums of one linear piece of `segment`, as the device should play it.
    func piece(of segment: MotorTimeline.Segment, from: Double, to: Double) -> MotionSums {
        guard to > from else { return MotionSums() }
        let strongGain = profile.hasStrongMotor ? profile.gain : 0
        let weakGain = profile.hasWeakMotor ? profile.gain : 0
        let first = segment.levels(at: from)
        let last = segment.levels(at: to)
        return MotionSums(
            strong: .init(
                from: Swift.min(first.strong * strongGain, 1), to: Swift.min(last.strong * strongGain, 1),
                span: to - from),
            weak: .init(
                from: Swift.min(first.weak * weakGain, 1), to: Swift.min(last.weak * weakGain, 1), span: to - from))
    }

    /// Whether the quantised level jumps at `time` (a segment boundary where the levels before and after differ).
    package func isJump(in timeline: MotorTimeline, at time: Double) -> Bool {
        guard let index = timeline.segmentIndex(at: time) else {
            // At or after the end: a jump when the last segment ends above zero.
            guard let last = timeline.segments.last, time == timeline.endTime else { return false }
            return quantized(last.endLevels) != .off
        }
        guard timeline.segments[index].start == time else { return false }
        return isJump(in: timeline, atStartOf: index)
    }

    /// Whether the quantised level jumps at the start of the segment at `index`.
    private func isJump(in timeline: MotorTimeline, atStartOf index: Int) -> Bool {
        let before = index > 0 ? timeline.segments[index - 1].endLevels : .off
        return quantized(before) != quantized(timeline.segments[index].startLevels)
    }

    /// The first jump strictly after `time` and before `limit`, `nil` if none.
    package func nextJump(in timeline: MotorTimeline, after time: Double, before limit: Double) -> Double? {
        // A timeline's segments are never empty and each starts where the one before ends, so the segment at an
        // index is the one `isJump(at:)` would find for its start: no search is needed on the way.
        let segments = timeline.segments
        var index = (timeline.segmentIndex(at: time) ?? segments.endIndex) + 1
        while index < segments.count, segments[index].start < limit {
            if isJump(in: timeline, atStartOf: index) { return segments[index].start }
            index += 1
        }
        let end = timeline.endTime
        if end > time, end < limit, isJump(in: timeline, at: end) { return end }
        return nil
    }

    /// The first instant at or after `time` where the quantised level differs from `sent`, `nil` if never.
    package func nextChange(in timeline: MotorTimeline, after time: Double, from sent: MotorMagnitudes) -> Double? {
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

/// ∫f and ∫f² of each motor's level over a stretch of a timeline: what the error of holding one level there, and
/// the best level to hold, follow from.
struct MotionSums: Sendable {
    struct Motor: Sendable {
        var level = 0.0
        var square = 0.0

        init() {}

        /// One linear piece from `y0` to `y1` over `span` seconds.
        init(from y0: Double, to y1: Double, span: Double) {
            level = span * (y0 + y1) / 2
            square = span * (y0 * y0 + y0 * y1 + y1 * y1) / 3
        }

        func adding(_ other: Motor) -> Motor {
            var sum = self
            sum.level += other.level
            sum.square += other.square
            return sum
        }

        /// ∫(L - f)² = L²·span - 2L∫f + ∫f².
        func error(holding value: Double, over span: Double) -> Double {
            value * value * span - 2 * value * level + square
        }

        /// ∫(f - mean)² = span · (mean of f² - (mean of f)²), in that order so that long spans do not overflow.
        func spread(over span: Double) -> Double {
            let mean = level / span
            return span * (square / span - mean * mean)
        }
    }

    var strong = Motor()
    var weak = Motor()

    func adding(_ other: MotionSums) -> MotionSums {
        MotionSums(strong: strong.adding(other.strong), weak: weak.adding(other.weak))
    }

    func error(holding levels: MotorMagnitudes, over span: Double) -> Double {
        guard span > 0 else { return 0 }
        return Swift.max(
            strong.error(holding: levels.strong, over: span) + weak.error(holding: levels.weak, over: span), 0)
    }

    func spread(over span: Double) -> Double {
        guard span > 0 else { return 0 }
        return Swift.max(strong.spread(over: span) + weak.spread(over: span), 0)
    }

    func mean(over span: Double) -> MotorMagnitudes {
        MotorMagnitudes(strong: strong.level / span, weak: weak.level / span)
    }
}

/// The write budget as a token bucket: `burst` writes available at rest, refilled at `writesPerSecond`; a
/// change takes `writesPerChange` and goes out only when that many are left; while a non-zero level holds,
/// each renewal (one every `renewalInterval` after the last write) takes as many. A budget whose renewals fit
/// its rate (checked by `WriteBudget`) always has a renewal's writes left when one is due, so the writes in any
/// window of T seconds never pass `burst + writesPerSecond · T`.
struct WriteBucket: Sendable {
    let budget: WriteBudget
    /// Writes left at `time`, just after the write then.
    private(set) var left: Double
    /// The last write (a command or a renewal).
    private(set) var time: Double
    /// The levels held since then.
    private(set) var holding: MotorMagnitudes

    init(budget: WriteBudget, resumption: DeviceCommandPlanner.Resumption) {
        self.budget = budget
        left = Swift.min(resumption.writesLeft, budget.burst)
        time = resumption.lastWriteTime
        holding = resumption.sent
    }

    /// Writes left at `instant` (after `time`), renewals before it taken.
    private func left(at instant: Double) -> (left: Double, lastWrite: Double) {
        guard budget.isLimited, time.isFinite else { return (budget.burst, time) }
        var left = self.left
        var last = time
        if let renewal = budget.renewalInterval, !holding.isOff {
            // Renewals at last + k·renewal before `instant`, each after a refill since the previous write.
            // A renewal due within a nanosecond of `instant` is the write at `instant` (as in `writeTimes(of:)`).
            let count = ((instant - last - WriteBudget.sameInstant) / renewal).rounded(.up) - 1
            if count >= 1 {
                let refill = budget.writesPerSecond * renewal
                // Once full, every renewal takes its writes and the refill gives them back: the level settles.
                for _ in 0..<Int(Swift.min(count, 64)) {
                    left = Swift.min(left + refill, budget.burst) - budget.writesPerChange
                }
                last += count * renewal
            }
        }
        return (Swift.min(left + budget.writesPerSecond * (instant - last), budget.burst), last)
    }

    /// Whether the whole burst is back by `instant`.
    func isFull(at instant: Double) -> Bool { left(at: instant).left >= budget.burst - Self.slack }

    /// The earliest instant at which the whole burst is back, with nothing held (no renewals to take).
    var fullFrom: Double {
        guard budget.isLimited, time.isFinite else { return -.infinity }
        return time + Swift.max(budget.burst - Self.slack - left, 0) / budget.writesPerSecond
    }

    /// Writes the bucket may be short by and still count as enough: the rounding of sums of times and rates.
    static let slack = 1e-6

    /// The earliest instant from `instant` on at which a change may go out. While a level is held, that is the
    /// next renewal's instant at the latest: a change then takes the renewal's place and costs the budget nothing
    /// more than keeping the level would. (The plans made from rest in the tests, pinned command by command, are
    /// the same with and without this; a plan resumed where the budget ran low, after a playback thread woke late,
    /// would otherwise hold the level while its renewals spent what came back: most of a second where renewals
    /// take most of the budget.)
    func earliest(from instant: Double) -> Double {
        guard budget.isLimited, time.isFinite else { return instant }
        let renewal = nextRenewal(from: instant)
        var candidate = instant
        for _ in 0..<64 {
            guard candidate < renewal else { return renewal }
            let state = left(at: candidate)
            if state.left >= budget.writesPerChange - Self.slack { return candidate }
            candidate += (budget.writesPerChange - state.left) / budget.writesPerSecond
        }
        return Swift.min(candidate, renewal)
    }

    /// The first renewal of the level held, at or after `instant` (within `WriteBudget.sameInstant`); infinity
    /// when nothing is renewed.
    private func nextRenewal(from instant: Double) -> Double {
        guard let interval = budget.renewalInterval, !holding.isOff, instant.isFinite else { return .infinity }
        let count = Swift.max(1, ((instant - time - WriteBudget.sameInstant) / interval).rounded(.up))
        let due = time + count * interval
        return due.isFinite && due >= instant - WriteBudget.sameInstant ? Swift.max(due, instant) : .infinity
    }

    /// Takes the writes of a renewal due at `due` (the renewals before it made on time) but made at `instant`; the
    /// renewals after it count from `instant`.
    mutating func renew(dueAt due: Double, madeAt instant: Double) {
        take(dueAt: due, madeAt: instant)
    }

    /// Takes a change's writes at `instant`; `levels` are held from then on.
    mutating func spend(at instant: Double, holding levels: MotorMagnitudes) {
        spend(dueAt: instant, madeAt: instant, holding: levels)
    }

    /// Takes the writes of a change due at `due` but made at `instant`, nothing written between them: the renewals
    /// due before `due` taken, none after (the change takes the place of the one due with it). `levels` are held,
    /// and the renewals after it count, from `instant`.
    mutating func spend(dueAt due: Double, madeAt instant: Double, holding levels: MotorMagnitudes) {
        take(dueAt: due, madeAt: instant)
        holding = levels
    }

    /// Takes one write due at `due` (no earlier than the last write) and made at `instant`: what was left then, the
    /// renewals before it taken, and the refill from then to `instant`.
    private mutating func take(dueAt due: Double, madeAt instant: Double) {
        defer { time = instant }
        guard budget.isLimited else { return left = budget.burst }
        let counted = time.isFinite ? Swift.max(Swift.min(due, instant), time) : Swift.min(due, instant)
        let before = left(at: counted).left
        left =
            Swift.min(before + budget.writesPerSecond * Swift.max(instant - counted, 0), budget.burst)
            - budget.writesPerChange
    }
}
