import AHAP
import HapticRendering
import HapticTestDevices
import Testing

/// Every fixture (and every real-world pattern, when `AHAP_CORPUS` names the corpus) renders on every profile, and
/// the properties of `docs/rendering.md` hold.
@Suite struct CorpusPropertyTests {
    typealias Patterns = [(name: String, pattern: HapticPattern)]

    @Test func everyFixtureRendersWithinRangeAndTimeIncreases() throws {
        Self.expectRendersWithinRange(try RenderCorpus.fixtures())
    }

    @Test(.corpus) func everyCorpusPatternRendersWithinRangeAndTimeIncreases() throws {
        Self.expectRendersWithinRange(try RenderCorpus.patterns())
    }

    @Test func fixtureCommandsStayWithinTheBudgetAndRespectTheProfile() throws {
        Self.expectCommandsWithinBudgetAndProfile(try RenderCorpus.fixtures())
    }

    @Test(.corpus) func corpusCommandsStayWithinTheBudgetAndRespectTheProfile() throws {
        Self.expectCommandsWithinBudgetAndProfile(try RenderCorpus.patterns())
    }

    @Test func everyFixtureHasANativeProgramThatMatchesWhereExact() throws {
        Self.expectNativeProgramsMatch(try RenderCorpus.fixtures())
    }

    @Test(.corpus) func everyCorpusPatternHasANativeProgramThatMatchesWhereExact() throws {
        Self.expectNativeProgramsMatch(try RenderCorpus.patterns())
    }

    /// Release and DecayTime are at most `EnvelopeTiming.longest` each; a transient adds its pulse.
    static func latestSilence(_ pattern: HapticPattern, profile: RenderProfile) -> Double {
        pattern.duration + profile.transientPulse.length + 2 * EnvelopeTiming.longest
    }

    static func expectRendersWithinRange(_ patterns: Patterns) {
        for (name, pattern) in patterns {
            for profile in RenderProfile.builtIn {
                let timeline = PatternRenderer(profile: profile).render(pattern)
                var previousEnd = 0.0
                for segment in timeline.segments {
                    #expect(segment.start == previousEnd, "\(name): segments contiguous from 0")
                    #expect(segment.end > segment.start, "\(name): time increases")
                    for levels in [segment.startLevels, segment.endLevels] {
                        #expect((0...1).contains(levels.strong) && (0...1).contains(levels.weak), "\(name): \(levels)")
                    }
                    previousEnd = segment.end
                }
                #expect(timeline.endTime <= Self.latestSilence(pattern, profile: profile), "\(name)")
                for after in [0.0, 0.001, 1, 100] {
                    #expect(timeline.levels(at: timeline.endTime + after) == .off, "\(name): silent after the end")
                }
            }
        }
    }

    /// Whether every two jumps of `timeline` (its end included) are at least the profile's minimum interval apart.
    static func stepsAreAnIntervalApart(_ timeline: MotorTimeline, planner: DeviceCommandPlanner) -> Bool {
        let jumps = (timeline.segments.map(\.start) + [timeline.endTime]).filter {
            planner.isJump(in: timeline, at: $0)
        }
        return zip(jumps, jumps.dropFirst()).allSatisfy {
            $1 - $0 >= planner.profile.minimumUpdateInterval - 1e-12
        }
    }

    static func expectCommandsWithinBudgetAndProfile(_ patterns: Patterns) {
        var comparedWithFixedInterval = 0
        defer {
            #expect(
                comparedWithFixedInterval > 0, "no plan was compared with the fixed interval's: that check never ran")
        }
        for (name, pattern) in patterns {
            for profile in RenderProfile.builtIn {
                let timeline = PatternRenderer(profile: profile).render(pattern)
                let planner = DeviceCommandPlanner(profile: profile)
                let commands = planner.commands(for: timeline)
                if let overdraw = profile.budget.overdraw(of: commands) {
                    Issue.record(
                        "\(name) on \(profile.name): \(overdraw.writes) writes from \(overdraw.from) to \(overdraw.to)")
                }
                if timeline.segments.allSatisfy({ $0.startLevels == $0.endLevels }),
                    Self.stepsAreAnIntervalApart(timeline, planner: planner)
                {
                    // Nothing drifts and every step can be sent on its own: the budget leaves the plan as a fixed
                    // interval made it, where it binds nowhere. (Two steps closer than the interval cannot both be
                    // followed: there the fixed interval held the level of the first, the planner holds the mean
                    // over the interval.)
                    let fixed = FixedIntervalPlanner(profile: profile).commands(for: timeline)
                    if profile.budget.overdraw(of: fixed) == nil {
                        comparedWithFixedInterval += 1
                        #expect(commands == fixed, "\(name) on \(profile.name): a flat timeline planned differently")
                    }
                }
                var previous: RumbleCommand?
                for command in commands {
                    let levels = command.levels
                    #expect(planner.quantized(levels) == levels, "\(name): on the profile's steps")
                    if let previous {
                        #expect(
                            command.time - previous.time >= profile.minimumUpdateInterval - 1e-12,
                            "\(name) on \(profile.name): too close at \(command.time)")
                        #expect(command.levels != previous.levels, "\(name): a command that changes nothing")
                        #expect(abs((previous.holdDuration ?? -1) - (command.time - previous.time)) < 1e-12)
                    }
                    previous = command
                }
                if let last = commands.last {
                    #expect(last.levels == .off && last.holdDuration == nil, "\(name): the last command is off")
                    // Within an interval of the end, or as soon as the budget has a change's writes again (at the
                    // latest where a renewal would have taken them).
                    let budget = profile.budget
                    let refill =
                        budget.isLimited
                        ? Swift.max(budget.writesPerChange / budget.writesPerSecond, budget.renewalInterval ?? 0) : 0
                    #expect(
                        last.time <= timeline.endTime + profile.minimumUpdateInterval + refill + 1e-9,
                        "\(name): off lands within one interval of the end")
                }
            }
        }
    }

    static func expectNativeProgramsMatch(_ patterns: Patterns) {
        var matched = 0
        defer { #expect(matched > 0, "no pattern compiled to an exact program: the envelope match never ran") }
        for (name, pattern) in patterns {
            let program = NativePeriodicProgram(pattern: pattern, profile: .genericRumble)
            let haptic = pattern.events.indices.filter { pattern.events[$0].isHaptic }
            #expect(program.inexactEvents.allSatisfy(haptic.contains), "\(name)")
            #expect(program.effects.count <= haptic.count, "\(name): at most one effect per haptic event")
            guard program.isExact else { continue }
            matched += 1
            let envelope = PatternRenderer().intensityEnvelope(pattern)
            let worst =
                stride(from: 0.0, through: envelope.endTime, by: 0.001)
                .map { abs(program.level(at: $0) - envelope.levels(at: $0).strong) }.max() ?? 0
            #expect(worst < 1e-6, "\(name): native program strays \(worst) from the envelope")
        }
    }
}
