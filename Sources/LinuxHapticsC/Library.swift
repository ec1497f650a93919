// The library as a whole: its version, its logger, the device listing, and the strings it gives out.
public import CLinuxHaptics
import Glibc
import LinuxHaptics
import LinuxInput
@_spi(Internals) import LinuxSystem
import Logging

enum CLibrary {
    static let version = CString.Static(LH_VERSION_STRING)

    /// Silent unless the environment variable `LINUXHAPTICS_LOG` names a swift-log level (`debug`, `info`,
    /// `warning`...): then that level and above go to standard error. A library must not write to a program's
    /// output on its own, and swift-log's default handler would print to standard output.
    static let logger: Logger = {
        let level = Sys.environment(logLevelVariable).flatMap { Logger.Level(rawValue: $0) }
        var logger = Logger(label: "linuxhaptics") { label -> any LogHandler in
            level == nil ? SwiftLogNoOpLogHandler() : StreamLogHandler.standardError(label: label)
        }
        logger.logLevel = level ?? .critical
        return logger
    }()

    static let logLevelVariable = "LINUXHAPTICS_LOG"

    /// The stopped reasons' names, as the Swift engine spells them.
    static let stoppedReasonNames = HapticEngineStoppedReason.allCases.map { ($0.cValue, CString.Static($0.rawValue)) }
    static let unknownName = CString.Static("unknown")
}

@_cdecl("lh_version")
public func lhVersion() -> UnsafePointer<CChar>? { CLibrary.version.pointer }

@_cdecl("lh_devices_json")
public func lhDevicesJSON(
    _ json: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, _ error: UnsafeMutablePointer<OpaquePointer?>?
) -> lh_status {
    reporting(error) { () throws(CFailure) in
        guard let json else { throw CFailure.missing("json") }
        do {
            // Rumble devices only: the other nodes need not be opened to be left out.
            let devices = try DeviceDiscovery(logger: CLibrary.logger).devices(probing: .forceFeedbackNodes)
            json.pointee = CString.copy(try DeviceReportJSON.listing(devices.filter(\.forceFeedback.isRumbleCapable)))
        } catch {
            throw CFailure(LH_ERROR_SYSTEM, "cannot list the input devices: \(error)")
        }
    }
}

@_cdecl("lh_string_free")
public func lhStringFree(_ string: UnsafeMutablePointer<CChar>?) { free(string) }

@_cdecl("lh_stopped_reason_name")
public func lhStoppedReasonName(_ reason: lh_stopped_reason) -> UnsafePointer<CChar>? {
    (CLibrary.stoppedReasonNames.first { $0.0 == reason }?.1 ?? CLibrary.unknownName).pointer
}
