// What a failed call tells its C caller: an `lh_status`, and, when the caller asks for it, an `lh_error` object
// that owns its message and, for an AHAP that does not load, the JSON path of its first error.
public import CLinuxHaptics
import AHAP
import Glibc
import LinuxHaptics

/// A failure on its way to the C caller.
package struct CFailure: Error, Equatable {
    package var status: lh_status
    package var message: String
    /// The JSON path of the first error of an AHAP that does not load; empty otherwise.
    package var jsonPath = ""

    init(_ status: lh_status, _ message: String, jsonPath: String = "") {
        self.status = status
        self.message = message
        self.jsonPath = jsonPath
    }

    /// An engine's failure, sorted by what the caller does about it.
    init(_ error: any Error) {
        guard let error = error as? HapticEngineError else {
            self.init(LH_ERROR_SYSTEM, "\(error)")
            return
        }
        let status: lh_status =
            switch error.kind {
            case .noDevice: LH_ERROR_NO_DEVICE
            case .permissionDenied: LH_ERROR_PERMISSION
            case .notRunning: LH_ERROR_NOT_RUNNING
            case .invalidArgument, .invalidAudioResource: LH_ERROR_INVALID_ARGUMENT
            case .systemError: LH_ERROR_SYSTEM
            // A play's player invalidated or cancelled before it started: the device was reset meanwhile.
            case .deviceError, .playerInvalidated, .cancelled: LH_ERROR_DEVICE
            }
        // A message that names the Swift call to make names the C one.
        let message =
            switch error.kind {
            case .notRunning: error.message.replacing("start()", with: "lh_engine_start")
            case .invalidAudioResource:
                error.message.replacing("(registerAudioResource)", with: "(lh_engine_register_audio_resource)")
            default: error.message
            }
        self.init(status, message)
    }

    /// A NULL where the call needs a pointer.
    static func missing(_ parameter: String) -> CFailure {
        CFailure(LH_ERROR_INVALID_ARGUMENT, "\(parameter) is NULL")
    }
}

/// The `lh_error` object: immutable, its two C strings made once and freed with it.
final class ErrorObject {
    let status: lh_status
    let message: UnsafeMutablePointer<CChar>
    let jsonPath: UnsafeMutablePointer<CChar>

    init(_ failure: CFailure) {
        status = failure.status
        // A name from anywhere in it (a device, a path) cannot act on the caller's terminal or hide in its log:
        // every hidden character but the line break between lines is escaped (`\u001b`).
        message = CString.copy(failure.message.escapingHiddenButLineBreaks)
        jsonPath = CString.copy(failure.jsonPath)
    }

    deinit {
        free(message)
        free(jsonPath)
    }
}

/// Runs a call's `body`: `LH_OK`, or its failure's status, stored as an `lh_error` in `*error` when the caller
/// passed a place for one.
func reporting(_ place: UnsafeMutablePointer<OpaquePointer?>?, _ body: () throws(CFailure) -> Void) -> lh_status {
    do {
        try body()
        return LH_OK
    } catch {
        place?.pointee = Handle.retain(ErrorObject(error))
        return error.status
    }
}

@_cdecl("lh_error_code")
public func lhErrorCode(_ error: OpaquePointer?) -> lh_status {
    error.map { Handle.object($0, as: ErrorObject.self).status } ?? LH_ERROR_INVALID_ARGUMENT
}

@_cdecl("lh_error_message")
public func lhErrorMessage(_ error: OpaquePointer?) -> UnsafePointer<CChar>? {
    error.map { UnsafePointer(Handle.object($0, as: ErrorObject.self).message) } ?? CString.empty.pointer
}

@_cdecl("lh_error_json_path")
public func lhErrorJSONPath(_ error: OpaquePointer?) -> UnsafePointer<CChar>? {
    error.map { UnsafePointer(Handle.object($0, as: ErrorObject.self).jsonPath) } ?? CString.empty.pointer
}

@_cdecl("lh_error_free")
public func lhErrorFree(_ error: OpaquePointer?) {
    if let error { Handle.release(error, as: ErrorObject.self) }
}
