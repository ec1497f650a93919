// lh_engine_register_audio_resource and lh_engine_unregister_audio_resource: a sound file registered from C is
// named by its number in a pattern, with the options the C mask gives; what cannot be registered is refused
// with the reason and registers nothing. The sound itself, through a real card, is the kernel tests'
// (engine-audio/, on the Swift engine these calls drive).
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import AHAP
import CLinuxHaptics
import LinuxHapticsC
import LinuxHapticsTesting
import Logging
import Testing

@testable import LinuxHaptics

@Suite struct AudioResourceHandleTests {
    /// An `lh_engine` on a recording output, with the Swift engine behind it kept to look into.
    struct Rig {
        let engine: HapticEngine
        let handle: OpaquePointer

        init() throws {
            var logger = Logger(label: "linux-haptics-c-tests")
            logger.logLevel = .critical
            engine = HapticEngine(
                output: .recording(RecordingOutput()), clock: ManualClock(startingAt: 10), logger: logger)
            handle = try startedEngineHandle(engine)
        }

        /// Registers `path` with `options` through the C call: its status, the number it wrote (`untouched`
        /// when it wrote none) and its error.
        func register(_ path: String, _ options: CUnsignedInt = 0, untouched: UInt64 = 99) -> (
            lh_status, UInt64, ReportedError?
        ) {
            var resource = untouched
            let (status, error) = calling { lh_engine_register_audio_resource(handle, path, options, &resource, $0) }
            return (status, resource, error)
        }

        /// `lh_engine_play` of a pattern with one `AudioCustom` event per number, naming it and nothing else.
        func play(_ resources: [UInt64]) -> (lh_status, ReportedError?) {
            let events = resources.enumerated().map { index, resource in
                #"{"Event": {"Time": \#(Double(index) / 10), "EventType": "AudioCustom", "EventWaveformPath": \#(resource)}}"#
            }
            let (pattern, _) = loadData(#"{"Version": 1, "Pattern": [\#(events.joined(separator: ", "))]}"#)
            defer { lh_pattern_free(pattern) }
            return calling { lh_engine_play(handle, pattern, $0) }
        }
    }

    /// The repository's `Haptics/` sound.
    static let sound = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Haptics/success.wav").path

    @Test func aRegisteredSoundIsPlayedByTheNumberItWasGivenWithTheOptionsOfTheMask() throws {
        let rig = try Rig()
        defer { lh_engine_destroy(rig.handle) }
        let (plainStatus, plain, _) = rig.register(Self.sound)
        let mask = LH_AUDIO_RESOURCE_NO_VOLUME_ENVELOPE.rawValue | LH_AUDIO_RESOURCE_LOOP_ENABLED.rawValue
        let (loopingStatus, looping, _) = rig.register(Self.sound, mask)
        let (envelopeOnlyStatus, envelopeOnly, _) = rig.register(Self.sound, LH_AUDIO_RESOURCE_LOOP_ENABLED.rawValue)
        #expect([plainStatus, loopingStatus, envelopeOnlyStatus] == [LH_OK, LH_OK, LH_OK])
        #expect([plain, looping, envelopeOnly] == [1, 2, 3], "numbered from 1, each registration its own")
        #expect(rig.play([plain, looping, envelopeOnly]).0 == LH_OK)
        // What the engine makes of a pattern naming them: each event takes its resource's options.
        let pattern = HapticPattern(
            events: [plain, looping, envelopeOnly].map {
                HapticEvent(audioResourceID: AudioResourceID(rawValue: UInt($0)), relativeTime: 0)
            }, parameters: [])
        let resolved = try rig.engine.core.audioResources.resolve(pattern).pattern
        #expect(resolved.events.map(\.waveformUsesVolumeEnvelope) == [true, false, true])
        #expect(resolved.events.map(\.waveformLoopEnabled) == [false, true, true])
    }

    @Test func whatCannotBeRegisteredIsRefusedWithWhyAndRegistersNothing() throws {
        let rig = try Rig()
        defer { lh_engine_destroy(rig.handle) }
        let cases: [(path: String, options: CUnsignedInt, says: String)] = [
            (#filePath, 0, "the audio resource cannot be registered: "),
            ("/nonexistent/sound.wav", 0, "/nonexistent/sound.wav"),
            ("", 0, "path is empty"),
            (Self.sound, 4, "options 4 has bits no LH_AUDIO_RESOURCE_* value names"),
        ]
        for (path, options, says) in cases {
            let (status, resource, error) = rig.register(path, options)
            #expect(status == LH_ERROR_INVALID_ARGUMENT, "\(path)")
            #expect(resource == 99, "\(path): no number written")
            #expect(error?.message.contains(says) == true, "\(error?.message ?? "")")
        }
        var resource: UInt64 = 99
        let nullPath = calling { lh_engine_register_audio_resource(rig.handle, nil, 0, &resource, $0) }
        let nullResource = calling { lh_engine_register_audio_resource(rig.handle, Self.sound, 0, nil, $0) }
        let nullEngine = calling { lh_engine_register_audio_resource(nil, Self.sound, 0, &resource, $0) }
        #expect(
            [nullPath, nullResource, nullEngine].map { $0.1?.message }
                == ["path is NULL", "resource is NULL", "engine is NULL"])
        #expect(resource == 99)
        let (status, first, _) = rig.register(Self.sound)
        #expect(status == LH_OK && first == 1, "the refusals took no number")
    }

    @Test func anUnregisteredSoundIsRefusedToLaterPlaysAndToASecondUnregistering() throws {
        let rig = try Rig()
        defer { lh_engine_destroy(rig.handle) }
        let (_, resource, _) = rig.register(Self.sound)
        #expect(rig.play([resource]).0 == LH_OK)
        #expect(calling { lh_engine_unregister_audio_resource(rig.handle, resource, $0) }.0 == LH_OK)
        let (played, playError) = rig.play([resource])
        #expect(played == LH_ERROR_INVALID_ARGUMENT)
        #expect(playError?.message.contains("events[0] plays audio resource 1, which this engine has not") == true)
        for number in [resource, 42] {
            let (status, error) = calling { lh_engine_unregister_audio_resource(rig.handle, number, $0) }
            #expect(status == LH_ERROR_INVALID_ARGUMENT)
            #expect(
                error?.message
                    == "audio resource \(number) is not registered with this engine (never, or unregistered since)")
        }
        let (_, next, _) = rig.register(Self.sound)
        #expect(next == 2, "a number is never given twice")
        #expect(calling { lh_engine_unregister_audio_resource(nil, 1, $0) }.1?.message == "engine is NULL")
    }
}
