import HapticRendering
import Testing

/// Commands on a device's own frame grid (`DeviceCommandPlanner.frames`): one per frame at most, on the grid,
/// each the timeline's mean over its frame.
@Suite struct FramedCommandTests {
    let grid = FrameGrid(origin: 0, period: 0.030)!

    func planner() -> DeviceCommandPlanner { DeviceCommandPlanner(profile: .switchPro, frames: grid) }

    func step(_ start: Double, _ end: Double, _ level: Double) -> MotorTimeline.Segment {
        MotorTimeline.Segment(
            start: start, end: end, startLevels: MotorMagnitudes(strong: level, weak: level),
            endLevels: MotorMagnitudes(strong: level, weak: level))
    }

    func isOnGrid(_ time: Double) -> Bool {
        let periods = (time - grid.origin) / grid.period
        return abs(periods - periods.rounded()) < 1e-6
    }

    @Test func aPulseBetweenTwoInstantsIsItsMeanOverTheFrameThatHoldsIt() throws {
        // 20 ms at 0.9 from 40 ms: all of it inside the frame from 30 ms to 60 ms.
        let commands = planner().commands(for: MotorTimeline(segments: [step(0.040, 0.060, 0.9)]))
        try #require(commands.count == 2)
        #expect(abs(commands[0].time - 0.030) < 1e-9)
        #expect(commands[0].levels == MotorMagnitudes(strong: 0.6, weak: 0.6), "0.9 for 20 of 30 ms")
        #expect(abs(commands[1].time - 0.060) < 1e-9 && commands[1].levels == .off)
    }

    @Test func everyCommandFallsOnTheGridAWholeFrameApartAndTheLastIsOff() {
        let ramp = MotorTimeline(segments: [
            MotorTimeline.Segment(
                start: 0.013, end: 0.613, startLevels: MotorMagnitudes(strong: 0, weak: 1),
                endLevels: MotorMagnitudes(strong: 1, weak: 0)),
            step(0.613, 0.700, 0.5),
        ])
        let commands = planner().commands(for: ramp)
        #expect(commands.count > 15)
        #expect(commands.allSatisfy { isOnGrid($0.time) })
        #expect(zip(commands.dropFirst(), commands).allSatisfy { $0.time - $1.time >= grid.period - 1e-9 })
        #expect(commands.last?.levels == .off)
    }

    @Test func aLevelHeldOverManyFramesIsOneCommandAndOnlyChangesAreSent() {
        // 0.5 over whole frames: the frames inside it all hold 0.5, one command; the partial frames at the ends
        // are their means.
        let commands = planner().commands(for: MotorTimeline(segments: [step(0.030, 0.330, 0.5)]))
        #expect(commands.map(\.levels) == [MotorMagnitudes(strong: 0.5, weak: 0.5), .off])
        #expect(commands.map { ($0.time * 1000).rounded() } == [30, 330])
    }

    @Test func planningAgainFromAnyCommandGivesTheSameCommandsFromThere() {
        let timeline = MotorTimeline(segments: [
            step(0.000, 0.050, 0.3), step(0.050, 0.062, 1.0), step(0.062, 0.400, 0.2), step(0.500, 0.560, 0.8),
        ])
        let planner = planner()
        let whole = planner.commands(for: timeline)
        for (index, command) in whole.enumerated() {
            let resumed = planner.commands(
                for: timeline, from: command.time,
                resuming: planner.resumption(after: command, from: .deviceOff))
            #expect(resumed.map(\.time) == whole.dropFirst(index + 1).map(\.time))
            #expect(resumed.map(\.levels) == whole.dropFirst(index + 1).map(\.levels))
        }
    }

    @Test func whatAPlanHasBeforeItsFirstFrameGoesIntoThatFrame() {
        // Planned from 20 ms: the frame from 0 is under way, so the first command is the next frame's, and it
        // carries an 11 ms pulse at 20 ms (its mean over 20 to 60 ms), late rather than never.
        let commands = planner().commands(
            for: MotorTimeline(segments: [step(0.020, 0.031, 0.88)]), from: 0.020, resuming: .deviceOff)
        #expect(abs((commands.first?.time ?? 0) - 0.030) < 1e-9)
        #expect(commands.first?.levels == MotorMagnitudes(strong: 0.24, weak: 0.24), "0.88 for 11 of 40 ms")
    }

    @Test func aGridMovedByHalfAFrameSinceTheLastCommandStartsAWholeFrameAfterIt() throws {
        // 0.4 sent at 0 on the grid from 0; the plan made at 5 ms is on a grid that moved onto the other report
        // (from 15 ms). Its instant at 15 ms is half a frame after the call at 0: the driver would queue both, and
        // send each later frame a frame late. The first command is the frame after, at 45 ms, and carries the
        // pattern from 5 ms.
        let moved = DeviceCommandPlanner(profile: .switchProOnFrames, frames: FrameGrid(origin: 0.015, period: 0.030)!)
        let command = RumbleCommand(time: 0, levels: MotorMagnitudes(strong: 0.4, weak: 0.4), holdDuration: nil)
        let commands = moved.commands(
            for: MotorTimeline(segments: [step(0, 0.2, 0.8)]), from: 0.005,
            resuming: moved.resumption(after: command, from: .deviceOff))
        let first = try #require(commands.first)
        #expect(abs(first.time - 0.045) < 1e-9, "first command at \(first.time)")
        #expect(first.levels == MotorMagnitudes(strong: 0.8, weak: 0.8))
    }

    @Test func aGridMovedSinceARenewalStartsAWholeFrameAfterTheRenewal() throws {
        // 0.4 sent at 0 and renewed every frame on the grid from 0 (30 and 60 ms); the plan made at 65 ms is on
        // the grid from 15 ms. Its instant at 75 ms is half a frame after the renewal at 60 ms: the first command
        // is at 105 ms.
        let moved = DeviceCommandPlanner(profile: .switchProOnFrames, frames: FrameGrid(origin: 0.015, period: 0.030)!)
        let renewal = try #require(RenderProfile.switchProOnFrames.budget.renewalInterval)
        #expect(abs(renewal - grid.period) < 1e-6, "each frame renews the level")
        let command = RumbleCommand(time: 0, levels: MotorMagnitudes(strong: 0.4, weak: 0.4), holdDuration: nil)
        let commands = moved.commands(
            for: MotorTimeline(segments: [step(0, 0.065, 0.4), step(0.065, 0.3, 0.8)]), from: 0.065,
            resuming: moved.resumption(after: command, from: .deviceOff))
        let first = try #require(commands.first)
        #expect(abs(first.time - 0.105) < 1e-9, "first command at \(first.time)")
    }

    @Test func aPlanMadeAtARenewalsOwnInstantTakesThatRenewalsPlace() throws {
        // 0.4 sent at 0 and renewed every 30 ms exactly (the renewal interval a frame, with no margin); the plan
        // made at 60 ms, the second renewal's instant, is on the grid from 15 ms. The renewal at 60 ms is not made
        // yet: the last call is the one at 30 ms, and the first command goes out at 75 ms in the renewal's place,
        // not a frame later.
        var profile = RenderProfile.switchProOnFrames
        profile.budget.renewalInterval = 0.030
        let moved = DeviceCommandPlanner(profile: profile, frames: FrameGrid(origin: 0.015, period: 0.030)!)
        let command = RumbleCommand(time: 0, levels: MotorMagnitudes(strong: 0.4, weak: 0.4), holdDuration: nil)
        let start = 2 * 0.030
        let commands = moved.commands(
            for: MotorTimeline(segments: [step(0, start, 0.4), step(start, 0.3, 0.8)]), from: start,
            resuming: moved.resumption(after: command, from: .deviceOff))
        let first = try #require(commands.first)
        #expect(abs(first.time - 0.075) < 1e-9, "first command at \(first.time)")
    }

    @Test func theGridsInstantsAreWholePeriodsFromItsOrigin() {
        let grid = FrameGrid(origin: 0.004, period: 0.030)!
        #expect(abs(grid.instant(atOrAfter: 0.004) - 0.004) < 1e-12)
        #expect(abs(grid.instant(atOrAfter: 0.0041) - 0.034) < 1e-12)
        #expect(abs(grid.instant(atOrAfter: -0.03) - (-0.026)) < 1e-12)
        #expect(FrameGrid(origin: 0, period: 0) == nil)
    }
}
