// Audio files registered with an engine (Core Haptics' registerAudioResource): an AudioCustom event made with
// the identifier plays the file decoded at registration, with the resource's options where the event sets none;
// a file that cannot be registered, and an identifier the engine does not hold, are refused with the reason. The
// sound itself, through a real card, is the kernel tests' (engine-audio/).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AHAP
import AudioRendering
import LinuxAudio
import Glibc
import HapticRendering
import LinuxHapticsTesting
@_spi(Internals) import LinuxSystem
import Testing

@testable import LinuxHaptics

@Suite struct AudioResourceTests {
    /// A folder with `tone.wav` (0.25 s of a 440 Hz sine at 48 kHz) and `text.wav` (no audio); removed by the
    /// caller.
    static func folder() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("resources-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let samples = (0..<12_000).map { (frame: Int) -> Float in
            Float(0.5 * sin(2 * Double.pi * 440 * Double(frame) / 48_000))
        }
        let clip = try #require(AudioClip(sampleRate: 48_000, channelCount: 1, samples: samples))
        try AudioFile.write(clip, to: folder.appendingPathComponent("tone.wav").path, format: .wav16)
        try Data("not a sound".utf8).write(to: folder.appendingPathComponent("text.wav"))
        return folder
    }

    static func soundRig() throws -> Rig {
        var options = HapticEngineOptions()
        options.audioOutputFactory = { _ in NullAudioOutput() }
        return try Rig(options: options)
    }

    /// The pattern the engine holds for the player it made last, as it plays it (its resources resolved).
    static func playedPattern(_ rig: Rig) -> HapticPattern? {
        rig.engine.core.state.withLock { state in
            state.scheduler.players.max { $0.key.rawValue < $1.key.rawValue }?.value.source?.pattern
        }
    }

    @Test func aRegisteredFilePlaysWhereAnEventNamesItsIDWithItsOptionsWhereTheEventSetsNone() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rig = try Self.soundRig()
        let url = folder.appendingPathComponent("tone.wav")
        let looping = try rig.engine.registerAudioResource(
            url, options: AudioResourceOptions(usesVolumeEnvelope: false, loopEnabled: true))
        let plain = try rig.engine.registerAudioResource(url)
        #expect(looping != plain, "each registration has its own identifier")
        let pattern = HapticPattern(
            events: [
                HapticEvent(audioResourceID: looping, relativeTime: 0, duration: 1),
                HapticEvent(audioResourceID: looping, relativeTime: 0.1, usesVolumeEnvelope: true, loopEnabled: false),
                HapticEvent(audioResourceID: plain, relativeTime: 0.2),
            ], parameters: [])
        let player = try rig.engine.makeAdvancedPlayer(with: pattern)
        // The looping event lasts its 1 s; the others their file's 0.25 s: the clips were found by identifier.
        #expect(abs(player.duration - 1) < 1e-9, "\(player.duration)")
        let played = try #require(Self.playedPattern(rig))
        #expect(played.events.map(\.waveformUsesVolumeEnvelope) == [false, true, true])
        #expect(played.events.map(\.waveformLoopEnabled) == [true, false, false])
        let source = try #require(rig.engine.core.state.withLock { $0.scheduler.players.values.first?.source })
        let voices = try #require(source.audioSchedule(.none)).voices
        #expect(voices.map(\.loops) == [true, false, false])
        let ends: [Double] = voices.map { voice in (voice.end * 1000).rounded() / 1000 }
        #expect(ends == [1, 0.35, 0.45])
        #expect(source.audio?.clips[.resource(plain)]?.frameCount == 12_000, "decoded at the engine's 48 kHz")
    }

    @Test func aFileThatCannotBeRegisteredIsRefusedWithWhyAndNothingIsRegistered() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rig = try Self.soundRig()
        for (name, why) in [("gone.wav", "gone.wav: "), ("text.wav", "text.wav: ")] {
            let error = #expect(throws: HapticEngineError.self) {
                try rig.engine.registerAudioResource(folder.appendingPathComponent(name))
            }
            #expect(error?.kind == .invalidAudioResource)
            #expect(error?.message.hasPrefix("the audio resource cannot be registered: \(folder.path)/\(why)") == true)
        }
        let web = #expect(throws: HapticEngineError.self) {
            try rig.engine.registerAudioResource(try #require(URL(string: "https://example.com/tone.wav")))
        }
        #expect(web?.kind == .invalidArgument)
        // The first identifier given is 1: none was used by the refusals.
        let id = try rig.engine.registerAudioResource(folder.appendingPathComponent("tone.wav"))
        #expect(id == AudioResourceID(rawValue: 1))
    }

    @Test func anUnregisteredIDFailsANewPlayerAndASecondUnregisterWhilePlayersMadeBeforePlayOn() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rig = try Self.soundRig()
        let id = try rig.engine.registerAudioResource(folder.appendingPathComponent("tone.wav"))
        let haptic = HapticEvent(
            type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
            relativeTime: 0)
        let pattern = HapticPattern(
            events: [haptic, HapticEvent(audioResourceID: id, relativeTime: 0)], parameters: [])
        let before = try rig.engine.makeAdvancedPlayer(with: pattern)
        try rig.engine.unregisterAudioResource(id)
        let again = #expect(throws: HapticEngineError.self) { try rig.engine.unregisterAudioResource(id) }
        #expect(again?.kind == .invalidAudioResource)
        #expect(again?.message == "audio resource 1 is not registered with this engine (never, or unregistered since)")
        let made = #expect(throws: HapticEngineError.self) { try rig.engine.makePlayer(with: pattern) }
        #expect(made?.kind == .invalidAudioResource)
        #expect(
            made?.message.contains("events[1] plays audio resource 1, which this engine has not registered") == true)
        // The player made before keeps its sound, decoded when the file was registered.
        #expect(abs(before.duration - 0.25) < 1e-9)
        try before.start(atTime: 0)
        rig.clock.advance(by: 0.1)
        #expect(before.phase == .playing)
        #expect(try rig.engine.registerAudioResource(folder.appendingPathComponent("tone.wav")).rawValue == 2)
    }

    @Test func anEngineWithoutSoundRegistersAFileItCanReadAndPlaysThePatternsHaptics() throws {
        let folder = try Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let rig = try Rig()
        #expect(rig.engine.playsHapticsOnly)
        let error = #expect(throws: HapticEngineError.self) {
            try rig.engine.registerAudioResource(folder.appendingPathComponent("text.wav"))
        }
        #expect(error?.kind == .invalidAudioResource)
        let id = try rig.engine.registerAudioResource(folder.appendingPathComponent("tone.wav"))
        let tap = HapticEvent(
            type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
            relativeTime: 0)
        let pattern = HapticPattern(
            events: [HapticEvent(audioResourceID: id, relativeTime: 0), tap], parameters: [])
        try rig.engine.makePlayer(with: pattern).start(atTime: 0)
        rig.clock.advance(by: 0.5)
        #expect(rig.applied().contains { $0.strong > 0 }, "the tap reached the motors: \(rig.applied())")
    }
}
