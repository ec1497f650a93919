// A player's opening, planned ahead, is what a start due now writes before any planning: it must be exactly the
// command the pass would send, and a start where it would not be (another player playing, the rate limit
// holding the device, a timeline changed since) must go through the pass as before.
import AHAP
import HapticRendering
import Testing

@_spi(Internals) import LinuxSystem

@testable import LinuxHaptics

@Suite struct OpeningTests {
    static let planner = DeviceCommandPlanner(profile: .genericRumble)

    /// What a lone start of `timeline` writes first, as the engine works it out when the player is made.
    static func opening(of timeline: MotorTimeline, locality: HapticLocality = .all) -> MotorMagnitudes? {
        PlayerOpening(plan: PlaybackScheduler.soloPlan(of: timeline, planner: planner, locality: locality)).levels
    }

    @Test(arguments: [
        timeline(pulse(1, 0.5, to: 0.05)),
        timeline(pulse(0.3, 0, to: 0.01), pulse(0.9, 0.9, from: 0.01, to: 0.2)),
        MotorTimeline(segments: [
            MotorTimeline.Segment(
                start: 0, end: 0.5, startLevels: MotorMagnitudes(strong: 0.2, weak: 0),
                endLevels: MotorMagnitudes(strong: 1, weak: 0.4))
        ]),
    ])
    func theOpeningIsThePlansFirstCommandAtTheStart(_ played: MotorTimeline) throws {
        let first = try #require(Self.planner.commands(for: played).first)
        let opening = Self.opening(of: played)
        #expect(first.time == 0 ? opening == first.levels : opening == nil)
    }

    /// A lone start on a device at rest takes its solo commands, planned when the player was made, as the
    /// engine's plan: what reaches the device must be exactly the planner's commands for the pattern.
    @Test func aLoneStartSendsThePlannersCommandsForItsPattern() throws {
        let rig = try Rig()
        let played = MotorTimeline(segments: [
            MotorTimeline.Segment(
                start: 0, end: 0.3, startLevels: MotorMagnitudes(strong: 0.2, weak: 0.1),
                endLevels: MotorMagnitudes(strong: 1, weak: 0.6)),
            MotorTimeline.Segment(
                start: 0.3, end: 0.5, startLevels: MotorMagnitudes(strong: 0.4, weak: 0),
                endLevels: MotorMagnitudes(strong: 0.4, weak: 0)),
        ])
        let player = try rig.engine.makeAdvancedPlayer(timeline: played)
        let planner = DeviceCommandPlanner(profile: rig.engine.renderProfile)
        let expected = planner.commands(for: played).map { Change(at: $0.time, $0.levels) }
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(expected.count > 3, "a ramp then a step: several commands")
        #expect(rig.applied(since: 10) == expected)
    }

    @Test func aPatternThatOpensWithSilenceHasNoOpening() {
        let late = timeline(pulse(1, 1, from: 0.1, to: 0.2))
        #expect(Self.opening(of: late) == nil)
    }

    @Test func theOpeningFollowsTheLocality() {
        let both = timeline(pulse(1, 1, to: 0.05))
        let left = Self.opening(of: both, locality: .leftHandle)
        #expect(left == MotorMagnitudes(strong: 1, weak: 0))
    }

    @Test func aStartBesideAPlayingPlayerWritesTheMixNotItsOpening() throws {
        let rig = try Rig()
        let held = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.25, 0, to: 1)))
        try held.start(atTime: 0)
        rig.clock.advance(by: 0.1)
        let tap = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.05)))
        try tap.start(atTime: 0)
        let mixes = rig.recorder.appliedMixes().map(\.mix)
        #expect(mixes.first == MotorMagnitudes(strong: q(0.25), weak: 0))
        #expect(mixes.last == MotorMagnitudes(strong: q(0.75), weak: 0), "the sum, not the tap's own 0.5")
    }

    @Test func aStartInsideTheRateLimitWaitsAsThePlannerSays() throws {
        let rig = try Rig()
        let first = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 0, to: 0.05)))
        try first.start(atTime: 0)
        rig.clock.advance(by: 0.05)
        #expect(rig.recorder.appliedMixes().map(\.mix) == [MotorMagnitudes(strong: 1, weak: 0), .off])
        let second = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.5, 0, to: 0.05)))
        try second.start(atTime: 0)
        #expect(rig.recorder.appliedMixes().count == 2, "the device was sent off just now: the start waits")
        rig.clock.advance(by: rig.engine.renderProfile.minimumUpdateInterval)
        #expect(rig.recorder.appliedMixes().map(\.mix).last == MotorMagnitudes(strong: q(0.5), weak: 0))
    }

    @Test func anOpeningPlannedBeforeAChangeIsNotWritten() throws {
        let rig = try Rig()
        let pattern = continuousPattern(intensity: 0.8, seconds: 1)
        let plain = try rig.engine.makeAdvancedPlayer(with: pattern)
        try plain.start(atTime: 0)
        try plain.cancel()
        rig.clock.advance(by: 1)
        let full = try #require(rig.recorder.appliedMixes().first).mix
        // Made (and its opening planned) at full intensity, then halved before it starts.
        let halved = try rig.engine.makeAdvancedPlayer(with: pattern)
        try halved.sendParameters(
            intensityControl(0.5), atTime: 0)
        let before = rig.recorder.appliedMixes().count
        try halved.start(atTime: 0)
        let written = try #require(rig.recorder.appliedMixes().dropFirst(before).first).mix
        #expect(full.strong > 0 && abs(written.strong - full.strong / 2) < 1.0 / 255)
    }

    @Test func anOpeningPlannedWithOtherControlsThanThePlayersIsNotWritten() throws {
        // A control held for 10.1 and taken by the scheduler's advance while the player waits, as a pass takes it,
        // made here without the call that would drop the opening: the opening planned when the player was made, at
        // full, is not what its start writes.
        let rig = try Rig()
        let player = try rig.engine.makeAdvancedPlayer(with: continuousPattern(intensity: 1, seconds: 1))
        let half = intensityControl(0.5)
        try rig.engine.core.state.withLock { state in
            let id = try #require(state.scheduler.players.keys.first)
            var waiting = try #require(state.scheduler.players[id])
            try waiting.send(half, at: 10.1, now: 10)
            state.scheduler.players[id] = waiting
            _ = state.scheduler.advance(to: 10.1)
            #expect(state.openings[id] != nil)
        }
        try player.start(atTime: 0)
        #expect(rig.applied().first == Change(at: 0, strong: q(0.5), weak: q(0.5)))
    }
}
