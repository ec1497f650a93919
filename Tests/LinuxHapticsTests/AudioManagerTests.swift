// AudioManager and AudioService on a recording sound output: the music's cross-fade frame by frame, a new
// cross-fade cutting one short, effects over the music, preloading, mute, the device going away and coming
// back, failures absorbed; feedback sound and haptic in one pattern from one start, sound off, no gamepad.
import AHAP
import AudioRendering
import Foundation
import LinuxAudio
import LinuxHaptics
@testable import AppHaptics
import LinuxHapticsTesting
import LinuxInput
import Logging
import Synchronization
import Testing
@_spi(Internals) import LinuxSystem

@MainActor
@Suite(.serialized) struct AudioManagerTests {
    /// The feedback generator's clock: its rate limits see the time the test sets, not how fast the test runs.
    let clock = ManualClock()

    /// A folder of sounds, each a constant stereo level: `left` (0.5, 0), `right` (0, 0.5), `both` (0.25, 0.25),
    /// 1 s at the recording's 8 kHz, and `tick` (0.1, 0.1) for 50 ms.
    struct Sounds {
        let folder: ScratchFolder
        let resolver: CountingResolver

        init() throws {
            folder = try ScratchFolder()
            for (name, left, right, frames) in [
                ("left", Float(0.5), Float(0), 8000), ("right", 0, 0.5, 8000), ("both", 0.25, 0.25, 8000),
                ("tick", 0.1, 0.1, 400),
            ] {
                let clip = AudioClip(
                    sampleRate: 8000, channelCount: 2,
                    samples: Array(repeating: [left, right], count: frames).flatMap { $0 })!
                try AudioFile.write(clip, to: folder.url.appendingPathComponent("\(name).wav").path, format: .wavFloat)
            }
            resolver = CountingResolver(directory: folder.url)
        }
    }

    @MainActor struct Rig {
        let sounds: Sounds
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let manager: AudioManager

        init() throws {
            sounds = try Sounds()
            let output = self.output
            manager = AudioManager(
                resolver: sounds.resolver, openOutput: { () throws(AudioDeviceError) -> any AudioOutput in output },
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        }

        /// Waits (a hang guard, not a timing check) until the output has `frames` more frames, counted from when
        /// it is open and what waited for it is done.
        func advance(frames: Int) async throws {
            await manager.settled()
            let target = output.frames + frames
            try await waitUntil("\(frames) frames more") { output.frames >= target }
        }
    }

    static func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
        while !condition() {
            try #require(MonotonicTime.nanoseconds() < deadline, "timed out waiting until \(what)")
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    func waitUntil(_ what: String, _ condition: () -> Bool) async throws {
        try await Self.waitUntil(what, condition)
    }

    /// The frames of `samples` as (left, right) pairs from frame `from`.
    static func frames(_ samples: [Float], from start: Int = 0) -> [(left: Float, right: Float)] {
        stride(from: 2 * start, to: samples.count - 1, by: 2).map { (samples[$0], samples[$0 + 1]) }
    }

    @Test func musicCrossFadesAtConstantPowerOverHalfASecond() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        defer { rig.output.hold(after: nil) }
        rig.manager.playMusic("left")
        await rig.manager.settled()
        #expect(rig.manager.isPlaying && rig.manager.currentTrack == "left")
        try await rig.advance(frames: 2000)
        // The cross-fade's commands reach the stream together, while its writer waits: the stream cannot take
        // the fade-out a period before the fade-in, whatever runs when.
        rig.output.hold(after: rig.output.frames)
        try await waitUntil("the stream waits") { rig.output.isWaitingAtHold }
        rig.manager.playMusic("right")
        rig.output.hold(after: nil)
        #expect(rig.manager.currentTrack == "right")
        try await rig.advance(frames: 8000)
        let heard = Self.frames(rig.output.samples)
        let firstLeft = try #require(heard.firstIndex { $0.left > 0.49 })
        let fadeStart = try #require(heard[firstLeft...].firstIndex { $0.right > 0 })
        let fadeEnd = try #require(heard[fadeStart...].firstIndex { $0.right > 0.4999 && $0.left == 0 })
        // 0.5 s at 8 kHz, give or take the glide's first and last frame.
        #expect(abs(fadeEnd - fadeStart - 4000) <= 2, "the cross-fade lasted \(fadeEnd - fadeStart) frames")
        for frame in heard[fadeStart..<fadeEnd] {
            let power = Double(frame.left * frame.left + frame.right * frame.right)
            #expect(abs(power - 0.25) < 1e-4, "left \(frame.left) right \(frame.right): power \(power), not 0.25")
        }
        #expect(heard[fadeEnd...].allSatisfy { $0.left == 0 && abs($0.right - 0.5) < 1e-6 })
    }

    @Test func aNewCrossFadeCutsTheOneInProgressShort() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.playMusic("left")
        try await rig.advance(frames: 1000)
        rig.manager.playMusic("right")
        try await rig.advance(frames: 800)
        rig.manager.playMusic("both")
        try await rig.advance(frames: 8000)
        // Two players at most: once the last fade is over, only the last track is heard, at its level.
        let end = Self.frames(rig.output.samples).suffix(1000)
        #expect(end.allSatisfy { abs($0.left - 0.25) < 1e-6 && abs($0.right - 0.25) < 1e-6 })
        #expect(rig.manager.currentTrack == "both")
    }

    @Test func effectsPlayOverTheMusicAndLeaveItAlone() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.preloadAllAssets(["tick"])
        rig.manager.playMusic("left")
        try await rig.advance(frames: 1000)
        let before = rig.output.frames
        rig.manager.playEffect("tick")
        try await rig.advance(frames: 2000)
        let after = Self.frames(rig.output.samples, from: before)
        let tick = after.filter { abs($0.left - 0.6) < 1e-6 && abs($0.right - 0.1) < 1e-6 }
        #expect(tick.count == 400, "the tick, over the music, lasts its 400 frames")
        #expect(after.suffix(500).allSatisfy { abs($0.left - 0.5) < 1e-6 && $0.right == 0 }, "the music plays on")
        #expect(rig.manager.isPlaying)
    }

    @Test func preloadedSoundsAreNotLookedUpAgain() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.preloadAllAssets(["tick", "both"])
        await rig.manager.settled()
        let lookups = rig.sounds.resolver.lookups.load(ordering: .relaxed)
        rig.manager.playEffect("tick")
        rig.manager.playEffect("both")
        #expect(rig.sounds.resolver.lookups.load(ordering: .relaxed) == lookups)
    }

    /// A scheduled effect not preloaded is looked for once: its decode reads the file the call found (it was
    /// looked for again by the decode).
    @Test func aScheduledEffectNotPreloadedIsLookedUpOnce() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.preloadAllAssets([])
        await rig.manager.settled()
        let lookups = rig.sounds.resolver.lookups.load(ordering: .relaxed)
        #expect(rig.manager.playEffect("tick", atNanoseconds: MonotonicTime.nanoseconds()))
        await rig.manager.settled()
        #expect(rig.sounds.resolver.lookups.load(ordering: .relaxed) == lookups + 1)
    }

    @Test func muteSilencesMusicAndEffectsAndUnmuteBringsTheMusicBack() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.playMusic("left")
        try await rig.advance(frames: 1000)
        rig.manager.mute()
        #expect(rig.manager.isMuted && rig.manager.isPlaying)
        rig.manager.playEffect("tick")
        try await rig.advance(frames: 2000)
        #expect(Self.frames(rig.output.samples).suffix(1500).allSatisfy { $0.left == 0 && $0.right == 0 })
        rig.manager.unmute()
        try await rig.advance(frames: 2000)
        #expect(Self.frames(rig.output.samples).suffix(500).allSatisfy { abs($0.left - 0.5) < 1e-6 })
    }

    /// An effect sounding when the sound is muted ends with the music's glide (a second-long effect played on at
    /// its level to its end, until 7 December), and none comes back at the unmute.
    @Test func muteEndsAnEffectThatSounds() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.preloadAllAssets(["both"])
        await rig.manager.settled()
        rig.manager.playEffect("both")
        try await rig.advance(frames: 1000)
        #expect(Self.frames(rig.output.samples).suffix(500).contains { $0.left != 0 }, "the effect sounds")
        rig.manager.mute()
        try await rig.advance(frames: 2000)
        #expect(Self.frames(rig.output.samples).suffix(1500).allSatisfy { $0.left == 0 && $0.right == 0 })
        rig.manager.unmute()
        try await rig.advance(frames: 1000)
        #expect(Self.frames(rig.output.samples).suffix(1000).allSatisfy { $0.left == 0 && $0.right == 0 })
    }

    /// A track left fading out by a stop (an infinite fade: `longestFadeOutSeconds`) is reached by a later stop:
    /// at once, it is silent. (Until 6 December it played on, and no call reached it.)
    @Test func aLaterStopReachesTheTrackAnEarlierOneLeftFadingOut() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.playMusic("left")
        try await rig.advance(frames: 1000)
        rig.manager.stopMusic(fadeOut: .infinity)
        #expect(!rig.manager.isPlaying)
        try await rig.advance(frames: 2000)
        #expect(Self.frames(rig.output.samples).suffix(500).allSatisfy { $0.left > 0.45 }, "fading over a minute")
        rig.manager.stopMusic(fadeOut: 0)
        try await rig.advance(frames: 2000)
        #expect(Self.frames(rig.output.samples).suffix(1500).allSatisfy { $0.left == 0 && $0.right == 0 })
    }

    @Test func theDeviceGoingAwayInterruptsAndItsReturnResumes() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.playMusic("left")
        try await rig.advance(frames: 1000)
        rig.output.fail(after: rig.output.frames + 64)
        try await waitUntil("interrupted") { rig.manager.isInterrupted }
        #expect(rig.manager.isPlaying, "interrupted, the music is paused, not stopped")
        rig.output.fail(after: nil)
        try await waitUntil("resumed") { !rig.manager.isInterrupted }
        try await rig.advance(frames: 1000)
        #expect(Self.frames(rig.output.samples).suffix(500).allSatisfy { abs($0.left - 0.5) < 1e-6 })
    }

    /// Effects asked for while the device is away belong to that moment: none of them plays when it is back
    /// (they all sounded at once, on top of each other, before).
    @Test func effectsAskedForWhileTheDeviceIsAwayAreNotPlayedWhenItIsBack() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        let frames = try writeSuccessSound(rig)
        rig.manager.preloadAllAssets(["success"])
        try await rig.advance(frames: 1000)
        rig.output.fail(after: rig.output.frames + 64)
        try await waitUntil("interrupted") { rig.manager.isInterrupted }
        // Nothing is written while the device is away: every frame from here on is heard after its return.
        let before = rig.output.frames
        for _ in 0..<5 { rig.manager.playEffect("success") }
        #expect(!rig.manager.playEffect("success", atNanoseconds: MonotonicTime.nanoseconds() + 50_000_000))
        rig.output.fail(after: nil)
        try await waitUntil("resumed") { !rig.manager.isInterrupted }
        try await rig.advance(frames: frames + 2000)
        #expect(Self.frames(rig.output.samples, from: before).allSatisfy { $0.left == 0 && $0.right == 0 })
    }

    /// A clip longer than 64 bits of nanoseconds hold (`AudioClip` takes any positive rate up to its most, and
    /// two frames at 1e-300 Hz last 2e300 s) plays, its end held at the last time they hold: the conversion of its
    /// length to nanoseconds trapped, ending the app.
    @Test func anEffectLongerThan64BitsOfNanosecondsPlaysWithoutTrapping() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let manager = AudioManager(
            resolver: sounds.resolver, openOutput: { () throws(AudioDeviceError) -> any AudioOutput in output },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            effectCacheSamples: AudioManager.effectCacheSampleLimit,
            decodeFile: { (_: String, _: Int) throws(AudioFileError) -> AudioClip in
                AudioClip(sampleRate: 1e-300, channelCount: 1, samples: [0.5, 0.5])!
            })
        manager.playEffect("tick")
        await manager.settled()
        try await waitUntil("the effect is heard") { output.samples.contains { $0 != 0 } }
    }

    /// A device that refuses to open (busy) is tried again a second later, not on every call: a game's effects
    /// would each start a try, and play none. On a clock the test moves.
    @Test func aDeviceThatWillNotOpenIsNotTriedAgainOnEveryCallButASecondLater() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let attempts = Atomic<Int>(0)
        let clock = Atomic<UInt64>(1_000_000_000)
        let manager = AudioManager(
            resolver: sounds.resolver,
            openOutput: { () throws(AudioDeviceError) -> any AudioOutput in
                attempts.add(1, ordering: .relaxed)
                throw AudioDeviceError(device: "busy", call: "snd_pcm_open", errno: .resourceBusy, message: "busy")
            },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            effectCacheSamples: AudioManager.effectCacheSampleLimit, now: { clock.load(ordering: .relaxed) })
        for _ in 0..<20 { manager.playEffect("tick") }
        manager.playMusic("left")
        await manager.settled()
        #expect(attempts.load(ordering: .relaxed) == 1, "the calls made while it opened waited for that one try")
        #expect(!manager.isPlaying)
        clock.add(990_000_000, ordering: .relaxed)
        manager.playEffect("tick")
        await manager.settled()
        #expect(attempts.load(ordering: .relaxed) == 1, "tried again before a second had passed")
        clock.add(10_000_000, ordering: .relaxed)
        manager.playEffect("tick")
        await manager.settled()
        #expect(attempts.load(ordering: .relaxed) == 2, "not tried again a second later")
        #expect(!manager.isPlaying)
    }

    /// An effect cached for one output and played on the next, at another rate (the stream ended, and the next
    /// call opened another device, or the null output), is decoded again at the new rate: played from the old
    /// clip it took half the time and sounded an octave up.
    @Test func anEffectCachedAtOneRateIsDecodedAgainForAnOutputAtAnother() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let origin = MonotonicTime.nanoseconds()
        let outputs = [RecordingAudioOutput(origin: origin), RecordingAudioOutput(origin: origin, sampleRate: 16000)]
        let opened = Atomic<Int>(0)
        let manager = AudioManager(
            resolver: sounds.resolver,
            openOutput: { () throws(AudioDeviceError) -> any AudioOutput in
                outputs[min(opened.add(1, ordering: .relaxed).newValue - 1, 1)]
            },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        manager.preloadAllAssets(["tick"])
        try await waitUntil("the first output runs") { outputs[0].frames > 100 }
        outputs[0].fail(after: outputs[0].frames, with: .ioError)
        // Each look plays the tick on the first stream while it lasts (that output writes nothing more), until
        // the manager hears it ended and the play opens the second output.
        // Each look waits for the open it may have begun, so that one tick at most waits for the second output.
        let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
        while opened.load(ordering: .relaxed) < 2 {
            try #require(MonotonicTime.nanoseconds() < deadline, "timed out waiting until the first stream ended")
            manager.playEffect("tick")
            await manager.settled()
            try await Task.sleep(for: .milliseconds(1))
        }
        // The second stream writes as fast as it can from the moment it opens, and the tick reaches it only after
        // the clip is decoded again for the new rate: wait for the tick itself and a thousand frames after it, not
        // for a count of frames (under the address sanitizer the stream wrote them all before the tick came).
        try await waitUntil("the tick played at 16 kHz, and 1,000 frames after it") {
            let frames = Self.frames(outputs[1].samples)
            guard let last = frames.lastIndex(where: { abs($0.left - 0.1) < 0.01 }) else { return false }
            return frames.count > last + 1000
        }
        let heard = Self.frames(outputs[1].samples).filter { abs($0.left - 0.1) < 0.01 }.count
        // 50 ms at 16 kHz is 800 frames; the 8 kHz clip would give 400.
        #expect(heard > 700 && heard < 900, "\(heard) frames of the tick")
    }

    /// The effect cache keeps at most its limit of samples: caching one more lets the effects cached first go
    /// (decoded again when next played), and an effect larger than the whole limit plays uncached, kept only while
    /// it sounds: a play of it meanwhile takes that copy (until 6 December each play decoded one of its own, and
    /// 32 plays of a long effect held 32), one after it decodes it again.
    @Test func theEffectCacheKeepsItsLimitLettingTheOldestGo() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let clock = Atomic<UInt64>(MonotonicTime.nanoseconds())
        // Room for two ticks (400 stereo frames each: 800 samples), not for `left` (8000 frames).
        let manager = AudioManager(
            resolver: sounds.resolver, openOutput: { () throws(AudioDeviceError) -> any AudioOutput in output },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }, effectCacheSamples: 1600,
            now: { clock.load(ordering: .relaxed) })
        try Data(contentsOf: sounds.folder.url.appendingPathComponent("tick.wav"))
            .write(to: sounds.folder.url.appendingPathComponent("tock.wav"))
        try Data(contentsOf: sounds.folder.url.appendingPathComponent("tick.wav"))
            .write(to: sounds.folder.url.appendingPathComponent("tack.wav"))
        manager.preloadAllAssets(["tick", "tock"])
        await manager.settled()
        let looked = sounds.resolver.lookups.load(ordering: .relaxed)
        manager.playEffect("tick")
        manager.playEffect("tock")
        #expect(sounds.resolver.lookups.load(ordering: .relaxed) == looked, "both cached")
        // Each effect not cached is decoded on a thread of its own and cached once taken: the test waits for it.
        manager.playEffect("tack")
        await manager.settled()
        manager.playEffect("tock")
        #expect(sounds.resolver.lookups.load(ordering: .relaxed) == looked + 1, "tack cached, tock kept")
        manager.playEffect("tick")
        await manager.settled()
        #expect(sounds.resolver.lookups.load(ordering: .relaxed) == looked + 2, "tick, cached first, was let go")
        manager.playEffect("left")
        await manager.settled()
        manager.playEffect("left")
        await manager.settled()
        #expect(sounds.resolver.lookups.load(ordering: .relaxed) == looked + 3, "too large to cache, but sounding")
        // An hour on: the recording output takes frames as fast as they come, so a sound's end, placed after
        // what it queued, may lie seconds ahead of the clock.
        clock.add(3_600_000_000_000, ordering: .relaxed)
        manager.playEffect("left")
        await manager.settled()
        #expect(sounds.resolver.lookups.load(ordering: .relaxed) == looked + 4, "over: read again")
    }

    /// A burst of effects keeps at most `maximumEffects` sounding: each one past them lets the one started first
    /// fade out. Forty quiet one-second hums at once sum to the level of 32 once the fades are done (before, all
    /// 40 played on, and a game firing an effect every frame piled them up without end).
    @Test func aBurstOfEffectsKeepsAtMostTheirLimitSounding() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        let hum = AudioClip(
            sampleRate: 8000, channelCount: 2, samples: [Float](repeating: 0.01, count: 2 * 8000))!
        try AudioFile.write(hum, to: rig.sounds.folder.url.appendingPathComponent("hum.wav").path, format: .wavFloat)
        rig.manager.preloadAllAssets(["hum"])
        // Decoded before the burst: forty plays asked for while it decodes are one play once it is.
        await rig.manager.settled()
        try await rig.advance(frames: 200)
        // Held while the forty are asked for, so that the stream takes them all together rather than racing
        // through the first ones' second while the rest are being asked for.
        rig.output.hold(after: rig.output.frames + 64)
        try await waitUntil("the writer held") { rig.output.isWaitingAtHold }
        for _ in 0..<40 { rig.manager.playEffect("hum") }
        let before = rig.output.frames
        rig.output.hold(after: nil)
        try await rig.advance(frames: 4000)
        let levels = Self.frames(rig.output.samples, from: before).map(\.left)
        let loudest = levels.max() ?? 0
        let limit = Float(AudioManager.maximumEffects) * 0.01
        #expect(loudest > 0, "the hums play")
        // Past the first 100 ms, the 8 extra have faded out (20 ms fades).
        let settled = levels.dropFirst(800).prefix(2000)
        #expect(
            settled.allSatisfy { abs($0 - limit) < 0.002 },
            "levels \(settled.min() ?? 0) ... \(settled.max() ?? 0), limit \(limit)")
    }

    /// Effects the device's going away paused count toward the limit until they have played out after its return:
    /// 32 one-second hums, paused while ten seconds pass on the manager's clock, then eight more: eight fade, and
    /// the level settles at the limit's. (Their ends were not moved: taken for over once the clock passed them,
    /// the 32 left the count, and all forty sounded.)
    @Test func effectsPausedByAnInterruptionStillCountTowardTheLimit() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let hum = AudioClip(
            sampleRate: 8000, channelCount: 2, samples: [Float](repeating: 0.01, count: 2 * 8000))!
        try AudioFile.write(hum, to: sounds.folder.url.appendingPathComponent("hum.wav").path, format: .wavFloat)
        let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
        let clock = Atomic<UInt64>(MonotonicTime.nanoseconds())
        let manager = AudioManager(
            resolver: sounds.resolver, openOutput: { () throws(AudioDeviceError) -> any AudioOutput in output },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            effectCacheSamples: AudioManager.effectCacheSampleLimit, now: { clock.load(ordering: .relaxed) })
        func advance(frames: Int) async throws {
            let target = output.frames + frames
            try await waitUntil("\(frames) frames more") { output.frames >= target }
        }
        manager.preloadAllAssets(["hum"])
        // Decoded before the 32: plays asked for while it decodes are one play once it is (a loaded machine then
        // played one hum and eight, 0.09 for 0.32).
        await manager.settled()
        try await advance(frames: 200)
        // The output's time is its frames, which the stream writes as fast as it can: the writer is held where the
        // test acts, so that the hums are under way, not over, when the device goes and when it is back.
        output.hold(after: output.frames + 64)
        try await waitUntil("the writer held") { output.isWaitingAtHold }
        for _ in 0..<AudioManager.maximumEffects { manager.playEffect("hum") }
        output.fail(after: output.frames + 400)
        output.hold(after: nil)
        try await waitUntil("interrupted") { manager.isInterrupted }
        clock.add(10_000_000_000, ordering: .relaxed)
        output.hold(after: output.frames + 64)
        output.fail(after: nil)
        try await waitUntil("resumed, the writer held") { !manager.isInterrupted && output.isWaitingAtHold }
        for _ in 0..<8 { manager.playEffect("hum") }
        let before = output.frames
        output.hold(after: nil)
        try await advance(frames: 4000)
        let levels = Self.frames(output.samples, from: before).map(\.left)
        let limit = Float(AudioManager.maximumEffects) * 0.01
        // Past the first 100 ms, the 8 oldest have faded out (20 ms fades).
        let settled = levels.dropFirst(800).prefix(2000)
        #expect(settled.count == 2000)
        #expect(
            settled.allSatisfy { abs($0 - limit) < 0.002 },
            "levels \(settled.min() ?? 0) ... \(settled.max() ?? 0), limit \(limit)")
    }

    /// An effect asked for at the last nanosecond 64 bits hold, or just before it, is counted as ending then: its
    /// end, and its end moved on by an interruption, overflowed and trapped the program (until 6 December).
    @Test func effectsAskedForAtTheLastNanosecondsTrapNothingThroughAnInterruption() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.preloadAllAssets(["tick"])
        await rig.manager.settled()
        try await rig.advance(frames: 200)
        let lead = try #require(rig.manager.leadNanoseconds)
        #expect(rig.manager.playEffect("tick", atNanoseconds: .max))
        #expect(rig.manager.playEffect("tick", atNanoseconds: .max - lead - 200_000_000))
        try await rig.advance(frames: 200)
        rig.output.fail(after: rig.output.frames + 10)
        try await waitUntil("interrupted") { rig.manager.isInterrupted }
        rig.output.fail(after: nil)
        try await waitUntil("resumed") { !rig.manager.isInterrupted }
        rig.manager.playEffect("tick")
        let before = rig.output.frames
        try await rig.advance(frames: 400)
        #expect(Self.frames(rig.output.samples, from: before).contains { $0.left > 0.05 }, "an effect now still plays")
    }

    @Test func missingAndUnreadableSoundsChangeNothing() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        _ = try rig.sounds.folder.write("not a sound", to: "broken.wav")
        rig.manager.playMusic("nowhere")
        rig.manager.playMusic("broken")
        rig.manager.playEffect("nowhere")
        rig.manager.preloadAllAssets(["broken", "nowhere"])
        await rig.manager.settled()
        #expect(!rig.manager.isPlaying && rig.manager.currentTrack == nil)
    }

    /// An output that opens only when the test lets it (a sound server slow to answer), on a clock the test moves;
    /// `openBegan` says that an open waits for the test.
    @MainActor final class SlowOutput {
        final class Shared: Sendable {
            let output = RecordingAudioOutput(origin: MonotonicTime.nanoseconds())
            let gate = Lock(false)
            let openBegan = Lock(false)
            let clock = Atomic<UInt64>(1_000_000_000)
        }

        let shared = Shared()
        let manager: AudioManager
        var output: RecordingAudioOutput { shared.output }

        init(sounds: Sounds) {
            let shared = self.shared
            manager = AudioManager(
                resolver: sounds.resolver,
                openOutput: { () throws(AudioDeviceError) -> any AudioOutput in
                    shared.openBegan.withLock { $0 = true }
                    // A hang guard: on the main actor, the test that opens the gate could not run until it gives up.
                    let deadline = MonotonicTime.nanoseconds() + 2_000_000_000
                    while !shared.gate.withLock({ $0 }) {
                        guard MonotonicTime.nanoseconds() < deadline else {
                            throw AudioDeviceError(
                                device: "slow", call: "snd_pcm_open", errno: .resourceBusy, message: "never let open")
                        }
                        Thread.sleep(forTimeInterval: 0.001)
                    }
                    return shared.output
                },
                logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
                effectCacheSamples: AudioManager.effectCacheSampleLimit,
                now: { shared.clock.load(ordering: .relaxed) })
        }

        func open() { shared.gate.withLock { $0 = true } }
    }

    /// The output opens on a thread of its own: the calls return at once, the main actor is free while it opens,
    /// and what the calls asked for is done, in order, once it is open. Until 6 December the first call opened it
    /// on the main actor, which a sound server slow to answer held up (here the open would wait for the test, on
    /// that actor, until its 2 s guard gave up; so it did with the open moved back onto the main actor).
    @Test func theOutputOpensOffTheMainActorAndTheCallsMadeMeanwhileAreDoneInOrder() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let slow = SlowOutput(sounds: sounds)
        let called = MonotonicTime.nanoseconds()
        slow.manager.playMusic("left")
        slow.manager.playMusic("right")
        slow.manager.preloadAllAssets(["tick"])
        let returned = MonotonicTime.nanoseconds() - called
        #expect(returned < 1_000_000_000, "the calls waited \(returned / 1_000_000) ms for the output")
        #expect(!slow.manager.isPlaying, "no track plays before the output is open")
        #expect(slow.manager.leadNanoseconds == nil)
        // The open waits for the test, which opens it from the main actor.
        try await waitUntil("the open began") { slow.shared.openBegan.withLock { $0 } }
        slow.open()
        await slow.manager.settled()
        #expect(slow.manager.isPlaying && slow.manager.currentTrack == "right", "the last track asked for plays")
        #expect(slow.manager.leadNanoseconds != nil)
        let lookups = sounds.resolver.lookups.load(ordering: .relaxed)
        slow.manager.playEffect("tick")
        #expect(sounds.resolver.lookups.load(ordering: .relaxed) == lookups, "preloaded once the output opened")
    }

    /// A program whose main thread never lets the main actor run (a loop of its own in `main.swift`) still gets
    /// its sound: the output the thread opened is taken by the next call, and what waited for it is done first.
    @Test func aProgramThatNeverLetsTheMainActorRunGetsItsSoundOnItsNextCall() throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.playMusic("left")
        // Held here, on the main actor, until the opening thread has left the stream it opened (which writes from
        // its start, before the thread leaves it: waiting for its first frames alone, the call below came before it
        // now and then, under ThreadSanitizer): the output is open, and nobody has taken it.
        let deadline = MonotonicTime.nanoseconds() + 10_000_000_000
        while rig.output.frames == 0 || !rig.manager.openedSlot.holdsAny {
            try #require(MonotonicTime.nanoseconds() < deadline, "the output never opened")
            Thread.sleep(forTimeInterval: 0.001)
        }
        #expect(!rig.manager.isPlaying, "nothing took the output yet")
        rig.manager.playMusic("right")
        #expect(rig.manager.isPlaying && rig.manager.currentTrack == "right")
        #expect(rig.manager.leadNanoseconds != nil)
    }

    /// A decode that says it began (`openBegan`), waits until the test lets it go (`gate`), then reads the file;
    /// one never let go fails after `guardNanoseconds`.
    static func decodeOnceLetGo(
        _ shared: SlowOutput.Shared, guardNanoseconds: UInt64
    ) -> @Sendable (String, Int) throws(AudioFileError) -> AudioClip {
        { (path: String, rate: Int) throws(AudioFileError) -> AudioClip in
            shared.openBegan.withLock { $0 = true }
            let deadline = MonotonicTime.nanoseconds() + guardNanoseconds
            while !shared.gate.withLock({ $0 }) {
                guard MonotonicTime.nanoseconds() < deadline else {
                    throw AudioFileError(path: path, reason: "never let decode")
                }
                Thread.sleep(forTimeInterval: 0.001)
            }
            return try AudioFile.load(path, sampleRate: rate)
        }
    }

    /// An effect not preloaded is decoded on a thread of its own, the main actor free meanwhile, and heard once it
    /// is (here the decode waits for the test, which lets it go from the main actor: moved back onto that actor,
    /// it waited until its 2 s guard gave up, and nothing was heard).
    @Test func anEffectNotPreloadedIsDecodedOffTheMainActorAndPlayedOnceItIs() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let shared = SlowOutput.Shared()
        let output = shared.output
        let manager = AudioManager(
            resolver: sounds.resolver, openOutput: { () throws(AudioDeviceError) -> any AudioOutput in output },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            effectCacheSamples: AudioManager.effectCacheSampleLimit,
            decodeFile: Self.decodeOnceLetGo(shared, guardNanoseconds: 2_000_000_000))
        manager.preloadAllAssets([])
        await manager.settled()
        manager.playEffect("tick")
        try await waitUntil("the decode began") { shared.openBegan.withLock { $0 } }
        shared.gate.withLock { $0 = true }
        await manager.settled()
        let settled = output.frames
        try await waitUntil("1,000 frames written") { output.frames > settled + 1000 }
        let loudest = Self.frames(output.samples).map(\.left).max() ?? 0
        #expect(abs(loudest - 0.1) < 1e-6, "the tick heard once decoded: \(loudest)")
    }

    /// Of the plays of an effect asked for while it decodes (not preloaded), one is played, the last, and only
    /// when it waited at most a second, on the manager's clock: a game firing it every frame while a large file
    /// decoded heard every play at once when it was ready (200 ticks at 200 times the level, until 6 December).
    @Test(arguments: [(UInt64(500_000_000), true), (1_500_000_000, false)])
    func effectsThatWaitedForTheirDecodePlayOnceAndNotAfterASecond(waited: UInt64, played: Bool) async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        let shared = SlowOutput.Shared()
        let output = shared.output
        let clock = Atomic<UInt64>(MonotonicTime.nanoseconds())
        let manager = AudioManager(
            resolver: sounds.resolver, openOutput: { () throws(AudioDeviceError) -> any AudioOutput in output },
            logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            effectCacheSamples: AudioManager.effectCacheSampleLimit, now: { clock.load(ordering: .relaxed) },
            decodeFile: Self.decodeOnceLetGo(shared, guardNanoseconds: 10_000_000_000))
        manager.preloadAllAssets([])
        await manager.settled()
        for _ in 0..<200 { manager.playEffect("tick") }
        try await waitUntil("the decode began") { shared.openBegan.withLock { $0 } }
        clock.add(waited, ordering: .relaxed)
        shared.gate.withLock { $0 = true }
        await manager.settled()
        let settled = output.frames
        try await waitUntil("1,000 frames written") { output.frames > settled + 1000 }
        let loudest = Self.frames(output.samples).map(\.left).max() ?? 0
        #expect(abs(loudest - (played ? 0.1 : 0)) < 1e-6, "one tick heard, or none: \(loudest)")
    }

    /// Of the effects asked for while the output opens, one play of each sound is played, the last, and only when
    /// it waited at most a second; a scheduled one plays at its own time. On the manager's clock.
    @Test func effectsThatWaitedForTheOutputPlayOncePerSoundAndNotAfterASecond() async throws {
        let sounds = try Sounds()
        defer { sounds.folder.remove() }
        for (waited, played) in [(UInt64(500_000_000), true), (1_500_000_000, false)] {
            let slow = SlowOutput(sounds: sounds)
            // Asked for now, on the manager's clock (in an app both are CLOCK_MONOTONIC).
            let now = slow.shared.clock.load(ordering: .relaxed)
            slow.manager.playEffect("tick")
            slow.manager.playEffect("tick")
            #expect(slow.manager.playEffect("tick", atNanoseconds: now))
            #expect(!slow.manager.playEffect("nowhere", atNanoseconds: now))
            slow.shared.clock.add(waited, ordering: .relaxed)
            slow.open()
            await slow.manager.settled()
            let settled = slow.output.frames
            try await waitUntil("1,000 frames written") { slow.output.frames > settled + 1000 }
            let loudest = Self.frames(slow.output.samples).map(\.left).max() ?? 0
            // One tick asked for now and the scheduled one, at once: 0.2 (the second tick asked for now would make
            // it 0.3).
            #expect(played ? abs(loudest - 0.2) < 1e-6 : loudest == 0, "waited \(waited / 1_000_000) ms: \(loudest)")
        }
    }

    /// The output is held before its first write until the track is seen playing: the recording output writes as
    /// fast as it can, and a host that stalled the test for the track's 100 ms saw it already ended.
    @Test func aTrackThatDoesNotLoopEndsAndSaysSo() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.output.hold(after: 0)
        rig.manager.playMusic("tick", loops: false)
        await rig.manager.settled()
        #expect(rig.manager.isPlaying)
        #expect(rig.manager.currentTrack == "tick")
        rig.output.hold(after: nil)
        try await waitUntil("the track ended") { !rig.manager.isPlaying }
        #expect(rig.manager.currentTrack == nil)
        #expect(Self.frames(rig.output.samples).contains { $0.left != 0 }, "the track was heard")
    }

    /// A track that does not loop, cross-faded in over one that does, ends before the other has faded out: music
    /// plays until that one has, then `isPlaying` turns false (it stayed true for good before 6 December, only the
    /// track fading in being watched, by a poll every 100 ms; the stream now says when each ends).
    @Test func musicStopsPlayingWhenTheTrackFadingOutEndsAfterTheLastTrack() async throws {
        let rig = try Rig()
        defer { rig.sounds.folder.remove() }
        rig.manager.playMusic("left")
        try await rig.advance(frames: 800)
        rig.manager.playMusic("tick", loops: false)
        // Held 2000 frames on: the tick (400) is over, the left track's fade (4000) is not.
        rig.output.hold(after: rig.output.frames + 2000)
        try await waitUntil("the tick's end is said") { rig.manager.currentTrack == nil }
        try await waitUntil("the writer held") { rig.output.isWaitingAtHold }
        #expect(rig.manager.isPlaying, "the left track still fades out")
        rig.output.hold(after: nil)
        try await waitUntil("the left track has faded out") { !rig.manager.isPlaying }
    }

    // MARK: AudioService

    func service(hardware: Bool) throws -> (AudioService, RecordingEngineProvider, Rig, FeedbackSettingsStore) {
        let rig = try Rig()
        let provider = RecordingEngineProvider(hardwarePresent: hardware)
        let quiet = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }
        let haptics = HapticManager(resolver: rig.sounds.resolver, engineProvider: provider, logger: quiet)
        let settings = FeedbackSettingsStore(
            fileURL: rig.sounds.folder.url.appendingPathComponent("settings.json"), logger: quiet)
        let generator = HapticFeedbackGenerator(output: haptics, settings: settings, clock: clock, logger: quiet)
        return (AudioService(haptics: generator, audio: rig.manager), provider, rig, settings)
    }

    @Test(arguments: AppFeedback.allCases)
    func feedbackPlaysItsSoundAndItsHapticFromOneStart(_ feedback: AppFeedback) throws {
        let (service, provider, rig, _) = try service(hardware: true)
        defer { rig.sounds.folder.remove() }
        service.playFeedback(feedback)
        let played = try #require(provider.latest?.state.withLock { $0.played }.last)
        let audio = played.events.filter { $0.type == .audioCustom }
        #expect(audio.count == 1 && audio.first?.waveformPath == "\(feedback.rawValue).wav")
        #expect(audio.first?.relativeTime == 0)
        let haptic = feedback.feedback.pattern
        #expect(played.events.filter { $0.type != .audioCustom } == haptic.events, "the haptic is the outcome's")
        #expect(haptic.events.first?.relativeTime == 0, "the haptic starts with the sound, at the pattern's 0")
    }

    @Test func soundOffOrMutedKeepsTheHaptic() async throws {
        let (service, provider, rig, _) = try service(hardware: true)
        defer { rig.sounds.folder.remove() }
        service.isSoundEnabled = false
        service.playFeedback(.success)
        #expect(provider.latest?.state.withLock { $0.played }.last == AppFeedback.success.feedback.pattern)
        service.isSoundEnabled = true
        rig.manager.mute()
        clock.advance(by: 0.06)  // past the rate limit's 50 ms spacing
        service.playFeedback(.warning)
        #expect(provider.latest?.state.withLock { $0.played }.last == AppFeedback.warning.feedback.pattern)
    }

    /// Writes the success sound where the manager looks for it.
    func writeSuccessSound(_ rig: Rig) throws -> Int {
        let clip = try #require(FeedbackSound.success.clip(sampleRate: 8000))
        try AudioFile.write(
            clip, to: rig.sounds.folder.url.appendingPathComponent("success.wav").path, format: .wavFloat)
        return clip.frameCount
    }

    @Test func withoutAGamepadOrWithHapticsOffTheSoundPlaysAlone() async throws {
        for hapticsOff in [false, true] {
            let (service, provider, rig, settings) = try service(hardware: hapticsOff)
            defer { rig.sounds.folder.remove() }
            let frames = try writeSuccessSound(rig)
            settings.hapticsEnabled = !hapticsOff
            service.preloadSounds()
            let before = rig.output.frames
            service.playFeedback(.success)
            try await rig.advance(frames: frames + 2000)
            let heard = Self.frames(rig.output.samples, from: before)
            #expect(
                heard.contains { $0.left != 0 }, "the success sound reached the output (haptics off: \(hapticsOff))")
            #expect(provider.latest?.state.withLock { $0.played }.isEmpty ?? true, "no haptic played")
        }
    }

    @Test func aCallTheRateLimitsDropPlaysNeither() async throws {
        let (service, provider, rig, _) = try service(hardware: true)
        defer { rig.sounds.folder.remove() }
        service.playFeedback(.pass)
        service.playFeedback(.pass)
        #expect(provider.latest?.state.withLock { $0.played }.count == 1, "the second call came 0 ms after the first")
    }

    /// With haptics off the sound plays alone, and the rate limits still hold for it: two calls 0 ms apart
    /// play the sound once, no louder than one play of it.
    @Test func withHapticsOffACallTheRateLimitsDropPlaysNoSound() async throws {
        let (service, _, rig, settings) = try service(hardware: true)
        defer { rig.sounds.folder.remove() }
        let frames = try writeSuccessSound(rig)
        let clip = try #require(FeedbackSound.success.clip(sampleRate: 8000))
        let loudest = clip.samples.map(abs).max() ?? 0
        settings.hapticsEnabled = false
        service.preloadSounds()
        let before = rig.output.frames
        service.playFeedback(.success)
        service.playFeedback(.success)
        try await rig.advance(frames: frames + 2000)
        let heard = Self.frames(rig.output.samples, from: before).map { max(abs($0.left), abs($0.right)) }.max() ?? 0
        #expect(heard > 0, "the first call's sound plays")
        #expect(heard <= loudest * 1.01, "peak \(heard) against one play's \(loudest): the dropped call played too")
    }

    /// With sound off, `preloadSounds()` readies the patterns `playFeedback` plays (without their sounds), and
    /// sound switched on after it readies them with: each play finds its pattern prepared. Until 7 December they
    /// were readied with their sounds whatever the setting, and with sound off no play found its own.
    @Test func preloadedPatternsAreTheOnesPlaysUseWithSoundOffAndAfterItIsSwitchedOn() throws {
        let (service, provider, rig, _) = try service(hardware: true)
        defer { rig.sounds.folder.remove() }
        service.isSoundEnabled = false
        service.preloadSounds()
        service.playFeedback(.pass)
        let engine = try #require(provider.latest)
        var played = try #require(engine.state.withLock { $0.played }.last)
        #expect(engine.state.withLock { $0.prepared }.contains(played))
        service.isSoundEnabled = true
        clock.advance(by: 1)
        service.playFeedback(.success)
        played = try #require(engine.state.withLock { $0.played }.last)
        #expect(played.events.contains { $0.type == .audioCustom })
        #expect(engine.state.withLock { $0.prepared }.contains(played))
    }

    /// The same when `AudioManager` is muted after `preloadSounds()`: the play after the mute readies the patterns
    /// it plays (without their sounds), and finds its own prepared.
    @Test func aMuteAfterPreloadingMakesThePlaysPatternTheOnePrepared() throws {
        let (service, provider, rig, _) = try service(hardware: true)
        defer { rig.sounds.folder.remove() }
        service.preloadSounds()
        rig.manager.mute()
        service.playFeedback(.pass)
        let engine = try #require(provider.latest)
        let played = try #require(engine.state.withLock { $0.played }.last)
        #expect(!played.events.contains { $0.type == .audioCustom })
        #expect(engine.state.withLock { $0.prepared }.contains(played))
    }
}
