// `lh_engine`: a HapticEngine on a gamepad, driven as HapticManager drives its engine (fire-and-forget plays,
// one reused transient), with the program's C handlers called from the engine's threads.
public import CLinuxHaptics
package import LinuxHaptics
import AHAP
import AppHaptics
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HapticRendering
import LinuxInput

/// The `lh_engine` object.
final class EngineObject: Sendable {
    let engine: ManagedEngineAdapter
    /// The threads in a replacement of a handler, a stop or a destroy of any engine.
    let waiting = WaitingCalls.everyEngine
    let stopped: CallbackSlot<lh_stopped_handler>
    let reset: CallbackSlot<lh_reset_handler>

    /// Wraps `engine` (not started) and routes its handlers to the slots. The engine's handlers hold the slots,
    /// not this object, so releasing the handle releases the engine.
    init(_ engine: HapticEngine) {
        self.engine = ManagedEngineAdapter(engine: engine)
        stopped = CallbackSlot(waiting: waiting)
        reset = CallbackSlot(waiting: waiting)
        engine.stoppedHandler = { [stopped] reason in
            stopped.call { $0.function(reason.cValue, $0.user) }
        }
        engine.resetHandler = { [reset] in
            reset.call { $0.function($0.user) }
        }
    }

    /// The engine behind a C caller's `lh_engine *`.
    static func from(_ handle: OpaquePointer?) throws(CFailure) -> EngineObject {
        guard let handle else { throw CFailure.missing("engine") }
        return Handle.object(handle, as: EngineObject.self)
    }

    /// Whether the engine plays on the pad's voice coils now.
    var usesVoiceCoils: Bool { engine.engine.capabilities?.hdKind == .voiceCoils }

    /// Runs an engine call, its error turned into the C caller's.
    func perform(_ body: (ManagedEngineAdapter) throws -> Void) throws(CFailure) {
        do { try body(engine) } catch { throw CFailure(error) }
    }
}

extension HapticEngineStoppedReason {
    /// The header's value for this reason.
    package var cValue: lh_stopped_reason {
        switch self {
        case .gameControllerDisconnect: LH_STOPPED_DISCONNECTED
        case .deviceError: LH_STOPPED_DEVICE_ERROR
        case .systemError: LH_STOPPED_SYSTEM_ERROR
        case .idleTimeout: LH_STOPPED_IDLE_TIMEOUT
        case .engineDestroyed: LH_STOPPED_ENGINE_DESTROYED
        case .notifyWhenFinished: LH_STOPPED_NOTIFY_WHEN_FINISHED
        case .audioSessionInterrupt: LH_STOPPED_AUDIO_INTERRUPTED
        }
    }
}

/// Starts `engine` and gives it to C as an `lh_engine *`; when it does not start, it is released and the
/// failure says why. `lh_engine_create` makes its engines on a device; tests pass one on another output.
package func startedEngineHandle(_ engine: HapticEngine) throws(CFailure) -> OpaquePointer {
    let object = EngineObject(engine)
    try object.perform { try $0.start() }
    return Handle.retain(object)
}

@_cdecl("lh_engine_create")
public func lhEngineCreate(
    _ device: UnsafePointer<CChar>?, _ engine: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    lhEngineCreateWithActuators(device, LH_ACTUATORS_RUMBLE, engine, error)
}

@_cdecl("lh_engine_create_with_actuators")
public func lhEngineCreateWithActuators(
    _ device: UnsafePointer<CChar>?, _ actuators: lh_actuators, _ engine: UnsafeMutablePointer<OpaquePointer?>?,
    _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    lhEngineCreateWithLocality(device, actuators, nil, engine, error)
}

@_cdecl("lh_engine_create_with_locality")
public func lhEngineCreateWithLocality(
    _ device: UnsafePointer<CChar>?, _ actuators: lh_actuators, _ locality: UnsafePointer<CChar>?,
    _ engine: UnsafeMutablePointer<OpaquePointer?>?, _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        guard let engine else { throw CFailure.missing("engine") }
        var selection = DeviceSelection.firstRumbleDevice
        if let device {
            // A name that is not UTF-8 would be read with its odd bytes replaced, naming another device: say so.
            guard let name = String(validatingCString: device) else {
                throw CFailure(
                    LH_ERROR_INVALID_ARGUMENT,
                    "device is not UTF-8 text, which this call needs: pass NULL, a node, an event name or an id")
            }
            guard let named = DeviceSelection(naming: name) else {
                throw CFailure(
                    LH_ERROR_INVALID_ARGUMENT,
                    "device is empty: pass NULL for the first rumble-capable device, or a node, event name or id")
            }
            // An index of `haptics devices` names a device of the tool's list at one moment; the library keeps none.
            guard DeviceSelection.index(naming: name) == nil else {
                throw CFailure(
                    LH_ERROR_INVALID_ARGUMENT,
                    "device \"\(name)\" is an index of `haptics devices`, which only the haptics tool reads: pass a "
                        + "node (/dev/input/event5, event5) or a stable id as `haptics devices` prints it, which stays "
                        + "the same after a replug, or NULL for the first rumble-capable device")
            }
            // The haptics tool's name for its built-in virtual output, which this library does not have.
            guard name != "virtual" else {
                throw CFailure(
                    LH_ERROR_INVALID_ARGUMENT,
                    "device \"virtual\" is the haptics tool's built-in virtual output, which the C library does not "
                        + "have: it plays on gamepads only. To try a program without one, run `haptics virtual-pad` "
                        + "(a uinput gamepad) or `haptics emulate` beside it and pass NULL")
            }
            selection = named
        }
        // A pattern's audio files are looked for in the Haptics/ folder, as HapticManager's engines look for them.
        var options = HapticEngineOptions()
        options.audioResourceDirectories = HapticResourceDirectory.locate().map { [$0.directory.path] } ?? []
        switch actuators {
        case LH_ACTUATORS_RUMBLE: options.actuators = .rumble
        case LH_ACTUATORS_AUTO: options.actuators = .automatic
        case LH_ACTUATORS_HD: options.actuators = .hd
        default:
            throw CFailure(
                LH_ERROR_INVALID_ARGUMENT,
                "actuators \(Int32(bitPattern: UInt32(truncatingIfNeeded: actuators.rawValue))) is not one of "
                    + "LH_ACTUATORS_RUMBLE, LH_ACTUATORS_AUTO, LH_ACTUATORS_HD")
        }
        if let locality {
            guard let name = String(validatingCString: locality) else {
                throw CFailure(LH_ERROR_INVALID_ARGUMENT, "locality is not UTF-8 text: pass NULL or a locality's name")
            }
            guard let chosen = HapticLocality(named: name) else {
                throw CFailure(
                    LH_ERROR_INVALID_ARGUMENT,
                    "locality \(name.quotedForMessage) is not one of "
                        + HapticLocality.allCases.map { $0.rawValue }.joined(separator: ", ")
                        + " (or Core Haptics' names: default, leftHandle, rightHandle, leftTrigger, rightTrigger, "
                        + "triggers)")
            }
            // Refused whatever is plugged in: a caller's mistake, not a pad's lack.
            if let refusal = selection.refusal(at: chosen) {
                throw CFailure(
                    LH_ERROR_INVALID_ARGUMENT, refusal + " (\"all\"): name the pad, or pass NULL for the first")
            }
            options.locality = chosen
        }
        engine.pointee = try startedEngineHandle(
            HapticEngine(output: .device(selection), options: options, logger: CLibrary.logger))
    }
}

@_cdecl("lh_engine_actuators")
public func lhEngineActuators(_ engine: OpaquePointer?) -> UnsafePointer<CChar> {
    let kind = (try? EngineObject.from(engine))?.engine.engine.capabilities?.hdKind
    return ActuatorNames.name(kind)
}

@_cdecl("lh_engine_uses_voice_coils")
public func lhEngineUsesVoiceCoils(_ engine: OpaquePointer?) -> Int32 {
    guard let object = try? EngineObject.from(engine) else { return 0 }
    return object.usesVoiceCoils ? 1 : 0
}

@_cdecl("lh_engine_start")
public func lhEngineStart(_ engine: OpaquePointer?, _ error: UnsafeMutablePointer<OpaquePointer?>?) -> lh_status {
    reporting(error) { () throws(CFailure) in try EngineObject.from(engine).perform { try $0.start() } }
}

@_cdecl("lh_engine_play")
public func lhEnginePlay(
    _ engine: OpaquePointer?, _ pattern: OpaquePointer?, _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        let object = try EngineObject.from(engine)
        let pattern = try PatternObject.from(pattern).pattern
        try object.perform { try $0.play(pattern) }
    }
}

@_cdecl("lh_engine_play_transient")
public func lhEnginePlayTransient(
    _ engine: OpaquePointer?, _ intensity: Double, _ sharpness: Double, _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        let object = try EngineObject.from(engine)
        for (name, value) in [("intensity", intensity), ("sharpness", sharpness)] where !(0...1).contains(value) {
            throw CFailure(LH_ERROR_INVALID_ARGUMENT, "\(name) must be within 0...1, not \(value)")
        }
        try object.perform { try $0.playTransient(intensity: intensity, sharpness: sharpness) }
    }
}

@_cdecl("lh_engine_stop")
public func lhEngineStop(_ engine: OpaquePointer?) -> lh_status {
    reporting(nil) { () throws(CFailure) in
        let object = try EngineObject.from(engine)
        // A handler stopping its engine joins the engine's threads: one of them may be replacing a handler,
        // waiting for this one.
        object.waiting.waiting { object.engine.stop() }
    }
}

@_cdecl("lh_engine_set_stopped_handler")
public func lhEngineSetStoppedHandler(
    _ engine: OpaquePointer?, _ handler: lh_stopped_handler?, _ user: UnsafeMutableRawPointer?
) -> lh_status {
    reporting(nil) { () throws(CFailure) in
        try EngineObject.from(engine).stopped.replace(with: handler.map { CCallback(function: $0, user: user) })
    }
}

@_cdecl("lh_engine_set_reset_handler")
public func lhEngineSetResetHandler(
    _ engine: OpaquePointer?, _ handler: lh_reset_handler?, _ user: UnsafeMutableRawPointer?
) -> lh_status {
    reporting(nil) { () throws(CFailure) in
        try EngineObject.from(engine).reset.replace(with: handler.map { CCallback(function: $0, user: user) })
    }
}

@_cdecl("lh_engine_destroy")
public func lhEngineDestroy(_ engine: OpaquePointer?) {
    guard let engine else { return }
    let object = Handle.object(engine, as: EngineObject.self)
    object.waiting.waiting {
        // Handlers first, so that none runs for the stop below or after this call.
        object.stopped.replace(with: nil)
        object.reset.replace(with: nil)
        object.engine.stop()
    }
    Handle.release(engine, as: EngineObject.self)
}

/// The static strings `lh_engine_actuators` returns: made once, never freed.
enum ActuatorNames {
    static let rumble = CString.Static("rumble")
    static let hd = Dictionary(
        uniqueKeysWithValues: HDActuators.Kind.allCases.map { ($0, CString.Static($0.rawValue)) })

    static func name(_ kind: HDActuators.Kind?) -> UnsafePointer<CChar> {
        kind.flatMap { hd[$0]?.pointer } ?? rumble.pointer
    }
}

@_cdecl("lh_engine_register_audio_resource")
public func lhEngineRegisterAudioResource(
    _ engine: OpaquePointer?, _ path: UnsafePointer<CChar>?, _ options: CUnsignedInt,
    _ resource: UnsafeMutablePointer<UInt64>?, _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        let object = try EngineObject.from(engine)
        guard let path else { throw CFailure.missing("path") }
        guard let resource else { throw CFailure.missing("resource") }
        guard let name = String(validatingCString: path) else {
            throw CFailure(LH_ERROR_INVALID_ARGUMENT, "path is not UTF-8 text, which this call needs")
        }
        guard !name.isEmpty else { throw CFailure(LH_ERROR_INVALID_ARGUMENT, "path is empty") }
        let resourceOptions = try AudioResourceOptions(cOptions: options)
        var id: AudioResourceID?
        try object.perform {
            id = try $0.engine.registerAudioResource(URL(fileURLWithPath: name), options: resourceOptions)
        }
        if let id { resource.pointee = UInt64(id.rawValue) }
    }
}

@_cdecl("lh_engine_unregister_audio_resource")
public func lhEngineUnregisterAudioResource(
    _ engine: OpaquePointer?, _ resource: UInt64, _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        let object = try EngineObject.from(engine)
        try object.perform { try $0.engine.unregisterAudioResource(AudioResourceID(rawValue: UInt(resource))) }
    }
}

extension AudioResourceOptions {
    /// The options an `lh_audio_resource_options` mask names; a bit none names is an invalid argument.
    init(cOptions: CUnsignedInt) throws(CFailure) {
        let noEnvelope = LH_AUDIO_RESOURCE_NO_VOLUME_ENVELOPE.rawValue
        let loop = LH_AUDIO_RESOURCE_LOOP_ENABLED.rawValue
        guard cOptions & ~(noEnvelope | loop) == 0 else {
            throw CFailure(
                LH_ERROR_INVALID_ARGUMENT,
                "options \(cOptions) has bits no LH_AUDIO_RESOURCE_* value names (known: \(noEnvelope | loop))")
        }
        self.init(usesVolumeEnvelope: cOptions & noEnvelope == 0, loopEnabled: cOptions & loop != 0)
    }
}
