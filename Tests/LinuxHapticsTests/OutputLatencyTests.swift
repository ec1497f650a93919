// An output whose driver holds changes back (`RenderProfile.outputLatency`, hid-nintendo's frames): the engine
// writes each change that far ahead of its time, and a start now starts that far from now, so the device plays
// the plan on the pattern's time line.
import AHAP
import HapticRendering
import LinuxAudio
import LinuxHaptics
import LinuxHapticsTesting
@_spi(Internals) import LinuxSystem
import Testing

@Suite struct OutputLatencyTests {
    static let latency = 0.05

    /// The generic profile on a device whose changes arrive `latency` after their write.
    static var slowProfile: RenderProfile {
        var profile = RenderProfile.genericRumble
        profile.outputLatency = latency
        return profile
    }

    static let steps = timeline(pulse(0.5, 0.5, to: 0.1), pulse(0.8, 0.2, from: 0.1, to: 0.3))

    @Test func aStartAheadHasEveryChangeWrittenTheLatencyBeforeItsTime() throws {
        let rig = try Rig(renderProfile: Self.slowProfile)
        try rig.engine.makeAdvancedPlayer(timeline: Self.steps).start(atTime: 10.2)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(Self.steps, start: 0.2 - Self.latency))
    }

    @Test func aStartNowIsWrittenAtOnceAndKeepsThePlansSpacing() throws {
        let rig = try Rig(renderProfile: Self.slowProfile)
        try rig.engine.makeAdvancedPlayer(timeline: Self.steps).start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(Self.steps))
    }

    @Test func aStartSoonerThanTheLatencyBeginsAtOnce() throws {
        // Asked for 20 ms from now, the earliest the device can play it is 50 ms from now: written now.
        let rig = try Rig(renderProfile: Self.slowProfile)
        #expect(rig.engine.outputLatency == Self.latency)
        try rig.engine.makeAdvancedPlayer(timeline: Self.steps).start(atTime: 10.02)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(Self.steps))
    }

    @Test func aStopNowIsWrittenAtOnce() throws {
        let rig = try Rig(renderProfile: Self.slowProfile)
        let player = try rig.engine.makeAdvancedPlayer(timeline: Self.steps)
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.15)
        try player.stop(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.applied().last == Change(at: 0.15, .off))
    }

    @Test func theLatencyIsTheDevicesEvenUnderAnotherProfileOption() throws {
        // The option chooses how patterns are planned; the device's driver still holds its changes back.
        var options = HapticEngineOptions()
        options.renderProfile = .genericRumble
        let rig = try Rig(options: options, renderProfile: Self.slowProfile)
        try rig.engine.makeAdvancedPlayer(timeline: Self.steps).start(atTime: 10.2)
        rig.clock.advance(by: 1)
        #expect(rig.applied() == planned(Self.steps, start: 0.2 - Self.latency))
    }

    @Test func aPlayersSoundIsHeardWhenItsRumbleIsFeltTheLatencyAfterItsWrite() throws {
        // A latency longer than the null sound output's, so the start waits for the motors, not for the sound.
        var profile = RenderProfile.genericRumble
        profile.outputLatency = 0.2
        let scheduled = Lock<[Double]>([])
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in NullAudioOutput(bufferSeconds: 0.02) }
        options.soundScheduleObserver = { nanoseconds, patternTime in
            scheduled.withLock { $0.append(Double(nanoseconds) / 1e9 - patternTime) }
        }
        let rig = try Rig(options: options, renderProfile: profile)
        let pattern = HapticPattern(
            events: [
                HapticEvent(type: .audioContinuous, parameters: [], relativeTime: 0, duration: 0.3),
                HapticEvent(
                    type: .hapticContinuous,
                    parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)], relativeTime: 0,
                    duration: 0.3),
            ], parameters: [])
        try rig.engine.makePlayer(with: pattern).start(atTime: 0)
        let soundStart = try #require(scheduled.withLock { $0.first }, "no sound was scheduled")
        let firstWrite = try #require(rig.recorder.appliedMixes().first { !$0.mix.isOff }?.time)
        #expect(abs(firstWrite - 10) < 1e-9, "the rumble is written at once")
        #expect(abs(soundStart - (firstWrite + 0.2)) < 1e-6, "the sound starts as the rumble is felt")
    }

    @Test func theSwitchProfileCarriesHidNintendosLatencyAndNoOtherBuiltInProfileHasOne() {
        #expect(RenderProfile.switchPro.outputLatency == RenderProfile.switchOutputLatency)
        #expect(RenderProfile.switchOutputLatency > 0.03 && RenderProfile.switchOutputLatency < 0.1)
        for profile in RenderProfile.builtIn where profile.name != RenderProfile.switchPro.name {
            #expect(profile.outputLatency == 0, "\(profile.name)")
        }
    }
}
