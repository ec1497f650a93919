// The renderer, the device command planner and the native periodic compiler, on every pattern that loads.
import AHAP
import HapticRendering
import HapticTestDevices
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Renders what loads under a built-in profile and locality picked by the input, then checks the timeline
/// (contiguous, finite, levels 0...1), the planned commands (time-ordered, rate-limited, within the profile's
/// write budget over every window, quantised, hold durations that match, ending off, resumable from any command
/// with the budget left then) and the native periodic effects (fields the kernel structure can hold, levels
/// 0...1).
package enum RenderFuzzing {
    package static func run(_ bytes: UnsafeRawBufferPointer) {
        guard let pattern = try? HapticPattern(data: Data(bytes)) else { return }
        let profiles = RenderProfile.builtIn
        let localities = HapticLocality.allCases
        let profile = profiles[bytes.count % profiles.count]
        let locality = localities[bytes.count / profiles.count % localities.count]
        let timeline = PatternRenderer(profile: profile, locality: locality).render(pattern)
        checkTimeline(timeline)
        let planner = DeviceCommandPlanner(profile: profile)
        let commands = planner.commands(for: timeline)
        checkCommands(commands, profile: profile)
        checkResumption(commands, timeline: timeline, planner: planner)
        checkNativeProgram(NativePeriodicProgram(pattern: pattern, profile: profile))
    }

    static func checkTimeline(_ timeline: MotorTimeline) {
        var previousEnd = 0.0
        for segment in timeline.segments {
            expect(segment.start == previousEnd, "segments are not contiguous at \(segment.start)")
            expect(segment.end > segment.start && segment.end.isFinite, "segment \(segment)")
            expect(isLevel(segment.startLevels) && isLevel(segment.endLevels), "levels outside 0...1: \(segment)")
            previousEnd = segment.end
        }
    }

    static func checkCommands(_ commands: [RumbleCommand], profile: RenderProfile) {
        for (index, command) in commands.enumerated() {
            expect(command.time.isFinite && command.time >= 0, "command time \(command.time)")
            expect(isQuantised(command.levels, profile: profile), "levels not on the profile's steps: \(command)")
            guard index > 0 else {
                expect(!command.levels.isOff, "the first command repeats the device's initial off")
                continue
            }
            let previous = commands[index - 1]
            let gap = command.time - previous.time
            expect(gap > 0, "commands \(index - 1) and \(index) are not in time order: \(previous), \(command)")
            // Times are sums of the interval: allow their rounding, nothing more.
            let slack = 1e-9 * Swift.max(1, command.time)
            expect(gap >= profile.minimumUpdateInterval - slack, "commands \(gap) s apart under \(profile.name)")
            expect(previous.holdDuration == gap, "hold \(String(describing: previous.holdDuration)) != gap \(gap)")
            expect(command.levels != previous.levels, "command \(index) repeats the levels before it")
        }
        if let overdraw = profile.budget.overdraw(of: commands) {
            expect(false, "\(overdraw.writes) writes from \(overdraw.from) s to \(overdraw.to) s under \(profile.name)")
        }
        if let last = commands.last {
            expect(last.holdDuration == nil && last.levels.isOff, "the last command is not a final off: \(last)")
        }
    }

    /// Planning again from a command's time, resuming with that command, gives the commands after it.
    static func checkResumption(_ commands: [RumbleCommand], timeline: MotorTimeline, planner: DeviceCommandPlanner) {
        guard commands.count >= 2 else { return }
        let middle = commands[commands.count / 2 - 1]
        var resumption = DeviceCommandPlanner.Resumption.deviceOff
        for command in commands[..<(commands.count / 2)] {
            resumption = planner.resumption(after: command, from: resumption)
        }
        let resumed = planner.commands(for: timeline, from: middle.time, resuming: resumption)
        expect(resumed == Array(commands[(commands.count / 2)...]), "resuming at \(middle.time) plans differently")
    }

    static func checkNativeProgram(_ program: NativePeriodicProgram) {
        for effect in program.effects {
            let times = [effect.delay, effect.length, effect.period, effect.attackLength, effect.fadeLength]
            expect(times.allSatisfy { $0.isFinite && $0 >= 0 }, "effect times \(effect)")
            let levels = [effect.magnitude, effect.attackLevel, effect.fadeLevel]
            expect(levels.allSatisfy { $0 >= 0 && $0 <= 1 }, "effect levels \(effect)")
            // The kernel structure's fields: each conversion traps if its value does not fit.
            _ = (effect.delayMilliseconds, effect.lengthMilliseconds, effect.periodMilliseconds)
            _ = (effect.attackLengthMilliseconds, effect.fadeLengthMilliseconds)
            _ = (effect.magnitudeUnits, effect.attackLevelUnits, effect.fadeLevelUnits)
            for time in [effect.delay, effect.delay + effect.length / 2] {
                let level = program.level(at: time)
                expect(level >= 0 && level <= 1, "program level \(level) at \(time)")
            }
        }
    }

    private static func isLevel(_ levels: MotorMagnitudes) -> Bool {
        (0...1).contains(levels.strong) && (0...1).contains(levels.weak)
    }

    private static func isQuantised(_ levels: MotorMagnitudes, profile: RenderProfile) -> Bool {
        func onSteps(_ level: Double, steps: Int, present: Bool) -> Bool {
            guard present else { return level == 0 }
            let scaled = level * Double(steps)
            return (0...1).contains(level) && abs(scaled - scaled.rounded()) <= 1e-9 * Double(steps)
        }
        return onSteps(levels.strong, steps: profile.strongSteps, present: profile.hasStrongMotor)
            && onSteps(levels.weak, steps: profile.weakSteps, present: profile.hasWeakMotor)
    }
}
