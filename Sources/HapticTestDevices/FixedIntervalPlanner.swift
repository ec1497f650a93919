// The device command planner as it was before the write budget: the baseline the bench measures the budgeted
// planner against, and the reference it must agree with where the budget changes nothing.
package import HapticRendering

/// Plans a timeline at the profile's fixed minimum interval, with no budget: a change is sent when the quantised
/// level moves (at the earliest instant the interval allows, with the level then); a jump that follows a pending
/// update within one interval is waited for when that leaves less squared error over the two holds; a
/// rate-limited drift (a ramp crossing steps faster than the interval) sends the level at the middle of the
/// interval it holds for. A ramp therefore gets one write per interval, or one per step where it crosses steps
/// more slowly, whatever its slope. (Its squared errors are the budgeted planner's exact ones.)
package struct FixedIntervalPlanner: Sendable {
    package let planner: DeviceCommandPlanner

    package init(profile: RenderProfile) {
        planner = DeviceCommandPlanner(profile: profile)
    }

    package var profile: RenderProfile { planner.profile }

    package func commands(for timeline: MotorTimeline) -> [RumbleCommand] {
        var commands: [RumbleCommand] = []
        var sent = MotorMagnitudes.off
        var lastTime = -Double.infinity
        var cursor = 0.0
        let interval = profile.minimumUpdateInterval
        while let change = planner.nextChange(in: timeline, after: cursor, from: sent) {
            let deadline = Swift.max(change, lastTime + interval)
            cursor = deadline
            var target = planner.quantized(timeline.levels(at: deadline))
            if interval > 0 {
                if let jump = planner.nextJump(in: timeline, after: deadline, before: deadline + interval) {
                    let after = planner.quantized(timeline.levels(at: deadline + interval))
                    let sendNow =
                        planner.holdError(target, from: deadline, to: deadline + interval, in: timeline)
                        + planner.holdError(after, from: deadline + interval, to: jump + interval, in: timeline)
                    let wait =
                        planner.holdError(sent, from: deadline, to: jump, in: timeline)
                        + planner.holdError(
                            planner.quantized(timeline.levels(at: jump)), from: jump, to: jump + interval,
                            in: timeline)
                    if wait <= sendNow {
                        cursor = jump
                        continue
                    }
                } else if deadline > change, !planner.isJump(in: timeline, at: deadline) {
                    target = planner.quantized(timeline.levels(at: deadline + interval / 2))
                }
            }
            guard target != sent else { continue }
            if !commands.isEmpty { commands[commands.count - 1].holdDuration = deadline - lastTime }
            commands.append(RumbleCommand(time: deadline, levels: target, holdDuration: nil))
            sent = target
            lastTime = deadline
        }
        return commands
    }
}

extension WriteBudget {
    /// The first pair of writes of a plan (commands and renewals, `writeTimes(of:)`) between which more writes go
    /// out than the budget allows over that window, `burst + writesPerSecond · window`; nil when none does.
    package func overdraw(of commands: [RumbleCommand]) -> (from: Double, to: Double, writes: Double)? {
        guard isLimited else { return nil }
        let times = writeTimes(of: commands)
        for first in times.indices {
            for last in times.indices where last >= first {
                let writes = Double(last - first + 1) * writesPerChange
                let allowed = burst + writesPerSecond * (times[last] - times[first])
                if writes > allowed + 1e-6 { return (times[first], times[last], writes) }
            }
        }
        return nil
    }
}
