// The engine's sound follows its players: which sounds a player asks for (PlayerState.soundCues) as it is
// started, stopped, paused, sought, sped up, looped and sent controls; a pattern's timeline lasting until its
// last sound ends; the mutes and the audio-only engine. The sound itself, through a real card, is the kernel
// tests' (engine-audio/).
import AHAP
import AudioRendering
import HapticRendering
import LinuxAudio
import LinuxHapticsTesting
@_spi(Internals) import LinuxSystem
import Testing

@testable import LinuxHaptics

@Suite struct EngineAudioTests {
    /// A tone from 0.1 s to 0.6 s and a transient at 0.1 s.
    static let pattern = HapticPattern(
        events: [
            HapticEvent(type: .audioContinuous, parameters: [], relativeTime: 0.1, duration: 0.5),
            HapticEvent(
                type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
                relativeTime: 0.1),
        ], parameters: [])

    static func player(audio: Bool = true) -> PlayerState {
        let renderer = PatternRenderer(profile: .genericRumble, locality: .all)
        let sound = audio ? PatternAudio(clips: [:], sampleRate: 48_000) : nil
        return PlayerState(source: PatternSource(pattern: pattern, renderer: renderer, audio: sound))
    }

    /// A player with sound, started at `time` and playing since.
    static func playing(since time: Double) -> PlayerState {
        var player = player()
        player.schedule(.start, at: time)
        _ = player.advance(to: time)
        return player
    }

    @Test func aPatternWithSoundPlaysUntilItsLastSoundEnds() {
        #expect(abs(Self.player().duration - 0.6) < 1e-9)
        #expect(Self.player().timeline.endTime < 0.2, "the motors' timeline is the haptics' alone")
        #expect(Self.player(audio: false).duration < 0.2)
    }

    @Test func aPlayerWithoutSoundAsksForNone() {
        var player = Self.player(audio: false)
        player.schedule(.start, at: 5)
        #expect(player.soundCues().isEmpty)
    }

    @Test func aMutedPlayerAsksForNoSoundAndUnmutedForItsSoundFromWhereItIs() throws {
        var player = Self.player()
        player.schedule(.start, at: 5)
        _ = player.advance(to: 5.2)
        let playing = try #require(player.soundCues().first)
        player.isMuted = true
        #expect(player.soundCues().isEmpty)
        player.isMuted = false
        #expect(player.soundCues() == [playing])
    }

    @Test func aQueuedStartAsksForItsSoundAheadAndPlayingKeepsTheSameSound() throws {
        var player = Self.player()
        #expect(player.soundCues().isEmpty)
        player.schedule(.start, at: 5)
        let queued = try #require(player.soundCues().first)
        #expect(player.soundCues().count == 1)
        #expect(queued.anchor.time == 5 && queued.anchor.offset == 0 && queued.end == nil)
        _ = player.advance(to: 5.2)
        // Once the start is applied the sound is the same one (same anchor): the stream's sound is left alone.
        #expect(player.soundCues() == [queued])
    }

    @Test func aQueuedStopEndsTheSoundAndAQueuedRestartAsksForAnother() throws {
        var player = Self.player()
        player.schedule(.start, at: 5)
        _ = player.advance(to: 5)
        player.schedule(.stop, at: 5.3)
        player.schedule(.start, at: 6)
        let cues = player.soundCues()
        #expect(cues.count == 1)
        #expect(cues.first?.end == 5.3)
        _ = player.advance(to: 5.4)
        let restart = try #require(player.soundCues().first)
        #expect(restart.anchor.time == 6 && restart.anchor.offset == 0)
    }

    @Test func seekingRateLoopAndControlsMakeANewSound() throws {
        var player = Self.player()
        player.schedule(.start, at: 5)
        _ = player.advance(to: 5)
        let first = try #require(player.soundCues().first).anchor
        player.seek(to: 0.3, now: 5.1)
        let sought = try #require(player.soundCues().first).anchor
        #expect(sought != first && sought.offset == 0.3 && sought.time == 5.1)
        player.setRate(2, now: 5.2)
        let faster = try #require(player.soundCues().first).anchor
        #expect(faster != sought && faster.rate == 2)
        #expect(abs(faster.offset(at: 5.3) - (0.3 + 0.1 + 0.1 * 2)) < 1e-9)
        player.setLoopEnabled(true, at: 5.25)
        let looping = try #require(player.soundCues().first).anchor
        #expect(looping != faster && looping.loopLength == player.loopLength)
        try player.send(
            [HapticDynamicParameter(parameterID: .audioVolumeControl, value: -0.5, relativeTime: 0)], at: 5.3, now: 5.3)
        let controlled = try #require(player.soundCues().first).anchor
        #expect(controlled != looping && controlled.revision == looping.revision + 1)
        // Each new sound is anchored where the player is when it changed, on the same time line.
        #expect(looping.time == 5.25 && abs(looping.offset - 0.5) < 1e-9)
        #expect(controlled.time == 5.3 && abs(controlled.offset - 0.6) < 1e-9)
        #expect(abs(controlled.offset(at: 5.35) - looping.offset(at: 5.35)) < 1e-9)
    }

    @Test func aLoopSetToWhatItWasMakesNoNewSound() throws {
        var player = Self.playing(since: 5)
        player.setLoopEnabled(true, at: 5.1)
        player.setLoopEnd(0.3, at: 5.1)
        let looping = try #require(player.soundCues().first)
        player.setLoopEnabled(true, at: 5.2)
        player.setLoopEnd(0.3, at: 5.2)
        #expect(player.soundCues() == [looping])
    }

    @Test func aResumeQueuedWhilePlayingDoesNotEndTheSound() throws {
        // A resume does nothing to a player that plays: its sound goes on through it, to the stop after it.
        var player = Self.playing(since: 5)
        player.schedule(.resume, at: 5.1)
        player.schedule(.stop, at: 5.3)
        let playing = try #require(player.soundCues().first)
        #expect(player.soundCues().count == 1)
        #expect(playing.anchor.time == 5 && playing.end == 5.3)
        _ = player.advance(to: 5.2)
        #expect(player.soundCues() == [playing])
        // Nor does a resume after a queued start end the sound that start makes.
        var later = Self.player()
        later.schedule(.start, at: 5)
        later.schedule(.resume, at: 5.1)
        #expect(later.soundCues().map(\.end) == [nil])
    }

    @Test func pausedThenResumedTheSoundGoesOnFromThePausedOffset() throws {
        var player = Self.player()
        player.schedule(.start, at: 5)
        _ = player.advance(to: 5)
        player.schedule(.pause, at: 5.2)
        #expect(player.soundCues().first?.end == 5.2)
        _ = player.advance(to: 5.2)
        #expect(player.soundCues().isEmpty)
        player.schedule(.resume, at: 7)
        let resumed = try #require(player.soundCues().first)
        #expect(resumed.anchor.time == 7 && abs(resumed.anchor.offset - 0.2) < 1e-9)
    }

    @Test func aLoopingAnchorWrapsItsOffset() {
        let anchor = SoundAnchor(time: 10, offset: 0.25, rate: 1, loopLength: 0.5, revision: 0)
        #expect(abs(anchor.offset(at: 10.5) - 0.25) < 1e-9)
        #expect(abs(anchor.offset(at: 10.3) - 0.05) < 1e-9)
        let once = SoundAnchor(time: 10, offset: 0.25, rate: 1, loopLength: nil, revision: 0)
        #expect(abs(once.offset(at: 10.5) - 0.75) < 1e-9)
    }

    @Test func mutedForHapticsTheMotorsRestWhilePlayersPlayOn() throws {
        let rig = try Rig()
        rig.engine.isMutedForHaptics = true
        let player = try rig.engine.makeAdvancedPlayer(timeline: timeline(pulse(0.8, 0.2, to: 0.3)))
        let finished = Inbox<Bool>()
        player.completionHandler = { error in finished.put(error == nil) }
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.recorder.appliedMixes().allSatisfy { $0.mix.isOff })
        #expect(finished.all == [true])
        rig.engine.isMutedForHaptics = false
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        #expect(rig.recorder.appliedMixes().contains { !$0.mix.isOff })
    }

    @Test func anAudioOnlyEngineNeedsNoGamepadAndDrivesNoMotor() throws {
        var options = HapticEngineOptions()
        options.playsAudioOnly = true
        options.playsHapticsOnly = false
        let engine = HapticEngine(
            output: .device(.node("/dev/input/no-such-pad")), options: options, clock: ManualClock(startingAt: 1),
            logger: quietLogger())
        try engine.start()
        #expect(engine.isMutedForHaptics && engine.playsAudioOnly)
        engine.isMutedForHaptics = false
        #expect(engine.isMutedForHaptics, "an audio-only engine stays muted for haptics")
        let player = try engine.makeAdvancedPlayer(timeline: timeline(pulse(1, 1, to: 0.2)))
        try player.start(atTime: 0)
        #expect(engine.outputLevels.isOff)
    }

    @Test func anEngineOnAManualClockWithNoSoundOutputGivenPlaysHapticsOnly() throws {
        let rig = try Rig()
        #expect(rig.engine.playsHapticsOnly)
        #expect(rig.engine.audioOutputName == nil)
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in NullAudioOutput() }
        let withSound = try Rig(options: options)
        #expect(!withSound.engine.playsHapticsOnly)
    }

    /// A player with sound resumed now goes on once its sound can be heard from where it paused: its haptics wait
    /// for the sound output's lead, as a start's (and a restart's) do. Until 6 December they went on at once and the
    /// sound skipped what the output's queue had passed (its first ~35 ms on a sound card). A player without sound
    /// goes on at once.
    @Test(arguments: [true, false])
    func aPlayerWithSoundResumedNowWaitsForItsSoundsLeadAsAStartDoes(withSound: Bool) throws {
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in NullAudioOutput() }
        let rig = try Rig(options: options)
        defer { rig.engine.stop() }
        let haptic = HapticEvent(
            type: .hapticContinuous, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
            relativeTime: 0, duration: 5)
        let tone = HapticEvent(type: .audioContinuous, parameters: [], relativeTime: 0, duration: 5)
        let pattern = HapticPattern(events: withSound ? [haptic, tone] : [haptic], parameters: [])
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        try player.start(atTime: 0)
        rig.clock.advance(by: 1)
        try player.pause(atTime: 0)
        rig.clock.advance(by: 0.5)
        let paused = player.currentOffset
        try player.resume(atTime: 0)
        #expect(player.phase == (withSound ? .paused : .playing))
        rig.clock.advance(by: 0.001)
        #expect(player.phase == (withSound ? .paused : .playing), "the lead is tens of milliseconds")
        rig.clock.advance(by: 0.5)
        #expect(player.phase == .playing)
        let went = player.currentOffset - paused
        if withSound {
            #expect(went < 0.5, "it went on later than the resume's call: \(went) s")
        } else {
            #expect(abs(went - 0.501) < 1e-9, "\(went) s")
        }
        // A restart of the playing player waits the same way: it plays on from where it is meanwhile.
        let before = player.currentOffset
        try player.start(atTime: 0)
        rig.clock.advance(by: 0.001)
        #expect(withSound ? player.currentOffset > before : player.currentOffset < 0.01, "\(player.currentOffset)")
        rig.clock.advance(by: 0.5)
        #expect(withSound ? player.currentOffset < 0.5 : abs(player.currentOffset - 0.501) < 1e-9)
    }

    /// The race it stands for: a start asks for its sound's lead (opening the stream) just after a `stop()` on
    /// another thread closed it. Here the ask comes after the stop outright.
    @Test func aStoppedEngineOpensNoSoundStreamUntilItStartsAgain() throws {
        let opened = Lock(0)
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in
            opened.withLock { $0 += 1 }
            return NullAudioOutput()
        }
        let rig = try Rig(options: options)
        let audio = try #require(rig.engine.core.audio)
        #expect(audio.lead() != nil && opened.withLock { $0 } == 1)
        rig.engine.stop()
        #expect(audio.lead() == nil, "a stopped engine opened its sound stream")
        #expect(opened.withLock { $0 } == 1)
        try rig.engine.start()
        #expect(audio.lead() != nil && opened.withLock { $0 } == 2)
        rig.engine.stop()
    }

    @Test(arguments: [Double.nan, .infinity, 0, -1, 11])
    func aSoundBufferThatIsNoBufferMakesStartThrowInvalidArgumentNamingTheOption(seconds: Double) throws {
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in NullAudioOutput() }
        options.audioBufferSeconds = seconds
        let rig = try Rig(options: options, start: false)
        let error = #expect(throws: HapticEngineError.self) { try rig.engine.start() }
        #expect(error?.kind == .invalidArgument)
        #expect(error?.message.hasPrefix("HapticEngineOptions.audioBufferSeconds: a buffer of ") == true)
        #expect(!rig.engine.isRunning, "nothing was started")
        options.playsHapticsOnly = true
        try Rig(options: options, start: false).engine.start()
    }
}
