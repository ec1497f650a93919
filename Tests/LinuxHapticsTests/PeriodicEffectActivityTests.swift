// What a force device's periodic effects played at a moment just past (`PeriodicEffectStream.activity(at:)`, behind
// `HapticEngine.actuatorActivity(atTime:)` on a PID device), driven on a stepped clock with a recording device: each
// test asks for a moment once it has passed, as `haptics feedback` and `replay` do, and checks it against what the
// device was told then.
import AHAP
import Foundation
import HapticRendering
import Testing

@testable import LinuxHaptics

@Suite struct PeriodicEffectActivityTests {
    typealias Work = PeriodicEffectStreamWorkTests

    static func magnitude(_ pattern: HapticPattern, effect: Int) -> Double {
        NativePeriodicProgram(pattern: pattern, profile: .periodicForce).effects[effect].magnitude
    }

    /// A tone A (0-0.5 s, 0.3) with a shorter, stronger tone B over it (0.1-0.2 s, 0.9): at 0.15 s both play,
    /// summed as the device sums their forces; at 0.3 s B has ended (the device ran it for its length) and the
    /// moment reads A's level (it read B's, the last played, until 7 December).
    @Test func afterAnOverlappingEffectEndsTheMomentReadsTheOneStillPlaying() throws {
        let pattern = HapticPattern(
            events: [
                Work.tone(at: 0, for: 0.5, intensity: 0.3),
                Work.tone(at: 0.1, for: 0.1, intensity: 0.9),
            ], parameters: [])
        let stepped = try Work.Stepped()
        stepped.play(pattern)
        stepped.clock.advance(by: 0.4)
        try #require(NativePeriodicProgram(pattern: pattern, profile: .periodicForce).effects.count == 2)
        let a = Self.magnitude(pattern, effect: 0)
        let b = Self.magnitude(pattern, effect: 1)
        try #require(abs(a - b) > 0.2)
        let during = stepped.stream.activity(at: stepped.origin + 0.15)
        #expect(abs(during.left - min(1, a + b)) < 1e-9, "both play at 0.15 s, summed: \(during)")
        let after = stepped.stream.activity(at: stepped.origin + 0.3)
        #expect(abs(after.left - a) < 1e-9, "only A (\(a)) plays at 0.3 s; read \(after) (B is \(b))")
        stepped.stream.close()
    }

    /// Tone A (0-0.1 s) then tone B (0.15-0.25 s): between them (0.12 s) the device plays nothing, A having run
    /// its length, and the moment reads rest. B is uploaded 80 ms before its start, so it waits in the stream when
    /// A ends (read as A until 7 December).
    @Test func inAGapShorterThanTheUploadLeadTheMomentReadsRest() throws {
        let pattern = HapticPattern(
            events: [
                Work.tone(at: 0, for: 0.1, intensity: 0.5),
                Work.tone(at: 0.15, for: 0.1, intensity: 0.6),
            ], parameters: [])
        let stepped = try Work.Stepped()
        stepped.play(pattern)
        stepped.clock.advance(by: 0.5)
        let gap = stepped.stream.activity(at: stepped.origin + 0.12)
        #expect(gap == .atRest, "nothing plays between the tones; read \(gap)")
        #expect(stepped.stream.activity(at: stepped.origin + 0.4) == .atRest)
        stepped.stream.close()
    }

    /// One tone of a second whose intensity curve falls from 1 to 0: the device is sent updates of its level
    /// (about every 20 ms). 0.9 s in, its level is about 0.1, not the 1 it started at (which it read until 7
    /// December).
    @Test func anEffectFollowedByUpdatesReadsItsUpdatedLevel() throws {
        let pattern = HapticPattern(
            events: [Work.tone(at: 0, for: 1, intensity: 1)], parameters: [],
            parameterCurves: [
                HapticParameterCurve(
                    parameterID: .hapticIntensityControl,
                    controlPoints: [.init(relativeTime: 0, value: 1), .init(relativeTime: 1, value: 0)],
                    relativeTime: 0)
            ])
        let program = NativePeriodicProgram(pattern: pattern, profile: .periodicForce)
        try #require(program.effects.count == 1 && !program.effects[0].updates.isEmpty)
        let stepped = try Work.Stepped()
        stepped.play(pattern)
        stepped.clock.advance(by: 0.95)
        try #require(
            stepped.device.calls.filter { $0.kind == .update }.count > 10, "the level updates reached the device")
        let sent = program.effects[0].level(at: 0.9)
        let late = stepped.stream.activity(at: stepped.origin + 0.9)
        #expect(abs(late.left - sent) < 0.05, "the device holds \(sent) at 0.9 s; read \(late)")
        stepped.stream.close()
    }
}
