// lh_engine_* on an engine whose output is the recording output and whose clock is manual: what a play sends,
// what bad arguments change (nothing), and when the C handlers are called, with which user pointer.
import CLinuxHaptics
import HapticRendering
import LinuxHaptics
import LinuxHapticsC
import LinuxHapticsTesting
import LinuxInput
import Logging
import Testing
@_spi(Internals) import LinuxSystem

/// What the C handlers saw; C callbacks reach it through their `user` pointer.
final class HandlerLog: Sendable {
    private let entries = Lock<[String]>([])
    /// An engine a handler destroys when it runs (0: none), as an address.
    let engineToDestroy = Lock<UInt>(0)

    var all: [String] { entries.withLock { $0 } }
    func add(_ entry: String) { entries.withLock { $0.append(entry) } }

    var user: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
    static func from(_ user: UnsafeMutableRawPointer?) -> HandlerLog {
        Unmanaged<HandlerLog>.fromOpaque(user!).takeUnretainedValue()
    }
}

/// An `lh_engine` on a recording output, started, on a manual clock.
struct CEngineRig {
    let clock = ManualClock(startingAt: 10)
    let recorder = RecordingOutput()
    let engine: OpaquePointer

    init() throws {
        var logger = Logger(label: "linux-haptics-c-tests")
        logger.logLevel = .critical
        engine = try startedEngineHandle(HapticEngine(output: .recording(recorder), clock: clock, logger: logger))
    }

    /// The mixes applied so far, neutral as off.
    var applied: [MotorMagnitudes] { recorder.appliedMixes().map(\.mix) }
}

@Suite struct EngineHandleTests {
    static let stopped: lh_stopped_handler = { reason, user in
        let log = HandlerLog.from(user)
        log.add("stopped " + String(cString: lh_stopped_reason_name(reason)))
        let doomed = log.engineToDestroy.withLock { $0 }
        if doomed != 0 { lh_engine_destroy(OpaquePointer(bitPattern: doomed)) }
    }
    static let reset: lh_reset_handler = { user in HandlerLog.from(user).add("reset") }

    @Test func aPlayAndATapReachTheOutput() throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        let (pattern, _) = loadData(document(#"{"Time": 0, "EventType": "HapticTransient", "EventParameters": []}"#))
        defer { lh_pattern_free(pattern) }
        #expect(calling { lh_engine_play(rig.engine, pattern, $0) }.0 == LH_OK)
        rig.clock.advance(by: 1)
        let afterPlay = rig.applied.filter { !$0.isOff }.count
        #expect(afterPlay > 0, "the pattern drove the motors: \(rig.applied)")
        #expect(calling { lh_engine_play_transient(rig.engine, 1, 0.5, $0) }.0 == LH_OK)
        rig.clock.advance(by: 1)
        #expect(rig.applied.filter { !$0.isOff }.count > afterPlay, "the tap drove them again")
    }

    /// A pattern naming an audio resource by a number the engine was never given loads, and its play is refused
    /// as an invalid argument, naming the event (registered resources: `AudioResourceHandleTests`).
    @Test func aPatternNamingAnUnregisteredAudioResourceIsRefusedAsAnInvalidArgument() throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        let (pattern, _) = loadData(document(#"{"Time": 0, "EventType": "AudioCustom", "EventWaveformPath": 1}"#))
        defer { lh_pattern_free(pattern) }
        let (status, error) = calling { lh_engine_play(rig.engine, pattern, $0) }
        #expect(status == LH_ERROR_INVALID_ARGUMENT)
        #expect(error?.message.contains("events[0] plays audio resource 1, which this engine has not") == true)
        #expect(error?.message.contains("(lh_engine_register_audio_resource)") == true, "the C call named")
    }

    @Test(arguments: [(-0.1, 0.5), (0.5, 1.5), (.nan, 0.5), (0.5, .infinity)])
    func aTapOutOfRangeIsRefusedAndSendsNothing(_ intensity: Double, _ sharpness: Double) throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        rig.recorder.clearRecords()
        let (status, error) = calling { lh_engine_play_transient(rig.engine, intensity, sharpness, $0) }
        rig.clock.advance(by: 1)
        #expect(status == LH_ERROR_INVALID_ARGUMENT)
        #expect(error?.message.contains("must be within 0...1") == true, "\(error?.message ?? "")")
        #expect(rig.recorder.records().isEmpty)
    }

    /// A stopped engine refuses plays, saying which call starts it again (the C one: it said `start()`, the Swift
    /// engine's name), until started again.
    @Test func aStoppedEngineRefusesPlaysUntilStartedAgain() throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        #expect(lh_engine_stop(rig.engine) == LH_OK)
        let (refused, error) = calling { lh_engine_play_transient(rig.engine, 1, 1, $0) }
        #expect(refused == LH_ERROR_NOT_RUNNING && error?.status == LH_ERROR_NOT_RUNNING)
        #expect(error?.message == "the engine is stopped: call lh_engine_start first", "\(error?.message ?? "")")
        #expect(calling { lh_engine_start(rig.engine, $0) }.0 == LH_OK)
        #expect(calling { lh_engine_play_transient(rig.engine, 1, 1, $0) }.0 == LH_OK)
    }

    @Test func unplugAndReplugCallTheHandlersWithTheirUserPointer() throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        let log = HandlerLog()
        #expect(lh_engine_set_stopped_handler(rig.engine, Self.stopped, log.user) == LH_OK)
        #expect(lh_engine_set_reset_handler(rig.engine, Self.reset, log.user) == LH_OK)
        rig.recorder.unplug()
        let (gone, error) = calling { lh_engine_play_transient(rig.engine, 1, 1, $0) }
        #expect(gone == LH_ERROR_NO_DEVICE, "\(error?.message ?? "")")
        rig.recorder.replug()
        #expect(log.all == ["stopped gameControllerDisconnect", "reset"])
        #expect(calling { lh_engine_play_transient(rig.engine, 1, 1, $0) }.0 == LH_OK)
    }

    @Test func aRemovedHandlerIsNotCalled() throws {
        let rig = try CEngineRig()
        defer { lh_engine_destroy(rig.engine) }
        let log = HandlerLog()
        lh_engine_set_stopped_handler(rig.engine, Self.stopped, log.user)
        lh_engine_set_stopped_handler(rig.engine, nil, nil)
        rig.recorder.unplug()
        #expect(log.all.isEmpty)
    }

    @Test func destroyingCallsNoHandler() throws {
        let rig = try CEngineRig()
        let log = HandlerLog()
        lh_engine_set_stopped_handler(rig.engine, Self.stopped, log.user)
        lh_engine_destroy(rig.engine)
        #expect(log.all.isEmpty, "not even the Swift engine's engineDestroyed")
        #expect(rig.recorder.records().last?.action == .close, "the device was released")
    }

    @Test func aHandlerMayDestroyItsEngine() throws {
        let rig = try CEngineRig()
        let log = HandlerLog()
        log.engineToDestroy.withLock { $0 = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(rig.engine))) }
        lh_engine_set_stopped_handler(rig.engine, Self.stopped, log.user)
        rig.recorder.unplug()
        #expect(log.all == ["stopped gameControllerDisconnect"])
        rig.recorder.replug()
        #expect(log.all == ["stopped gameControllerDisconnect"], "a destroyed engine does not come back")
    }
}
