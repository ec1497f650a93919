// A playback thread the machine wakes late, at random, under every built-in profile: no tap that a stall covered
// whole is lost.
import AHAP
import HapticRendering
import LinuxHaptics
import LinuxHapticsTesting
import Testing

@Suite struct LateWakeTests {
    /// Runs the rig's clock from 10 s to `end`, in steps of 1 to 30 ms, one in four a late wake-up after a stall
    /// of 5 to 120 ms; then a second more, on time.
    static func runWithStalls(_ rig: Rig, until end: Double, _ random: inout SeededGenerator) {
        var time = rig.clock.now
        while time < end {
            time += Double.random(in: 0.001...0.03, using: &random)
            if Int.random(in: 0..<4, using: &random) == 0 {
                time += Double.random(in: 0.005...0.12, using: &random)
                rig.clock.wakeLate(at: time)
            } else {
                rig.clock.set(to: time)
            }
        }
        rig.clock.advance(by: 1)
    }

    @Test(arguments: RenderProfile.builtIn)
    func everyTapAStallCoveredWholeStillReachesTheDevice(profile: RenderProfile) throws {
        // Taps of a pulse length each, 250 ms apart, at distinct levels: a stall of up to 120 ms covers one at most.
        var random = SeededGenerator(seed: 0x7A95)
        let length = profile.transientPulse.length
        for round in 0..<20 {
            let levels = (0..<4).map { index in 0.4 + 0.15 * Double(index) }.shuffled(using: &random)
            let taps = MotorTimeline(
                segments: levels.enumerated().map { index, level in
                    let start = 0.05 + 0.25 * Double(index)
                    let levels = MotorMagnitudes(strong: level, weak: level)
                    return MotorTimeline.Segment(
                        start: start, end: start + length, startLevels: levels, endLevels: levels)
                })
            let rig = try Rig(renderProfile: profile)
            try rig.engine.makeAdvancedPlayer(timeline: taps).start(atTime: 0)
            Self.runWithStalls(rig, until: 10 + taps.endTime + 0.2, &random)
            let planner = DeviceCommandPlanner(profile: profile)
            let planned = planner.commands(for: taps).filter { !$0.levels.isOff }.map(\.levels)
            let sent = rig.recorder.appliedMixes().filter { !$0.mix.isOff }.map(\.mix)
            #expect(sent == planned, "round \(round) under \(profile.name)")
        }
    }
}
