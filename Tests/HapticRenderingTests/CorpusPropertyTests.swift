import AHAP
import HapticRendering
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

    @Test func fixtureCommandsAreNoMoreThanTheChangesNeededAndRespectTheProfile() throws {
        Self.expectCommandsNeededAndWithinProfile(try RenderCorpus.fixtures())
    }

    @Test(.corpus) func corpusCommandsAreNoMoreThanTheChangesNeededAndRespectTheProfile() throws {
        Self.expectCommandsNeededAndWithinProfile(try RenderCorpus.patterns())
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

    static func expectCommandsNeededAndWithinProfile(_ patterns: Patterns) {
        for (name, pattern) in patterns {
            for profile in RenderProfile.builtIn {
                let timeline = PatternRenderer(profile: profile).render(pattern)
                let planner = DeviceCommandPlanner(profile: profile)
                let commands = planner.commands(for: timeline)
                // The changes needed: what the same planner sends with no rate limit. (Skipped for the 16-bit
                // virtual pad, where every 1/65535 step of a ramp is a change and the count only costs time.)
                if profile.strongSteps <= RenderProfile.genericRumble.strongSteps {
                    var unlimited = profile
                    unlimited.minimumUpdateInterval = 0
                    let changes = DeviceCommandPlanner(profile: unlimited).commands(for: timeline)
                    #expect(
                        commands.count <= changes.count,
                        "\(name) on \(profile.name): \(commands.count) > \(changes.count)")
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
                    #expect(
                        last.time <= timeline.endTime + profile.minimumUpdateInterval + 1e-9,
                        "\(name): off lands within one interval of the end")
                }
            }
        }
    }

    static func expectNativeProgramsMatch(_ patterns: Patterns) {
        for (name, pattern) in patterns {
            let program = NativePeriodicProgram(pattern: pattern, profile: .genericRumble)
            let haptic = pattern.events.indices.filter { pattern.events[$0].isHaptic }
            #expect(program.inexactEvents.allSatisfy(haptic.contains), "\(name)")
            #expect(program.effects.count + program.inexactEvents.count <= haptic.count, "\(name)")
            guard program.isExact else { continue }
            let envelope = PatternRenderer().intensityEnvelope(pattern)
            let worst =
                stride(from: 0.0, through: envelope.endTime, by: 0.001)
                .map { abs(program.level(at: $0) - envelope.levels(at: $0).strong) }.max() ?? 0
            #expect(worst < 1e-6, "\(name): native program strays \(worst) from the envelope")
        }
    }
}
