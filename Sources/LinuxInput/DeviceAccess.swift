// Whether this process may open an event node, found out by opening it the way probing does.
internal import CLinuxInput
internal import Glibc
@_spi(Internals) import LinuxSystem

/// What this process may do with an event node.
public enum DeviceAccess: Hashable, Sendable, CustomStringConvertible {
    /// Opened read-write: force feedback can be uploaded and played.
    case readWrite
    /// Opened read-only because write access was refused (`reason`): capabilities can be read, force
    /// feedback cannot be played.
    case readOnly(reason: String)
    /// Could not be opened at all (`reason`); what is known comes from sysfs.
    case denied(reason: String)

    /// `read-write`, `read-only` or `denied`, as in the JSON output.
    public var name: String {
        switch self {
        case .readWrite: "read-write"
        case .readOnly: "read-only"
        case .denied: "denied"
        }
    }

    /// Why access is limited; nil for read-write.
    public var reason: String? {
        switch self {
        case .readWrite: nil
        case .readOnly(let reason), .denied(let reason): reason
        }
    }

    /// Force feedback needs write access.
    public var allowsForceFeedback: Bool { self == .readWrite }

    /// The limitation comes from file permissions (fixable with the udev rule or the `input` group),
    /// not from the device having gone away.
    public var isPermissionProblem: Bool {
        switch self {
        case .readWrite: false
        case .readOnly: true
        case .denied(let reason): reason.hasPrefix(Self.permissionMarker)
        }
    }

    /// Prefix of the reason of a permission failure, so that callers can tell it apart without parsing
    /// `strerror` text.
    static let permissionMarker = "permission denied: "

    public var description: String { reason.map { "\(name) (\($0))" } ?? name }

    /// Whether `other` is the same state of access, whatever the words of its reason: the same `name`, and for a
    /// denial the same cause (permissions or not). `access(2)` (a listing that opens no node) and an open word the
    /// reasons of one state differently.
    func isSameState(as other: DeviceAccess) -> Bool {
        name == other.name && isPermissionProblem == other.isPermissionProblem
    }
}

extension DeviceAccess {
    /// What `access(2)` says this process may open `node` for, in the terms of an open, without opening it:
    /// read-write, read-only, or neither (for want of permission, or the node is missing).
    static func permitted(for node: String) -> DeviceAccess {
        if Sys.access(node, R_OK | W_OK) { return .readWrite }
        if Sys.access(node, R_OK) { return .readOnly(reason: "write not permitted (access(2))") }
        guard Sys.exists(node) else { return .denied(reason: "\(node) does not exist") }
        return .denied(reason: permissionMarker + "read not permitted (access(2))")
    }
}

/// An event node opened for probing: never grabbed, never read from, closed when this is released.
final class ProbeHandle {
    let fileDescriptor: Int32
    let access: DeviceAccess

    private init(fileDescriptor: Int32, access: DeviceAccess) {
        self.fileDescriptor = fileDescriptor
        self.access = access
    }

    deinit { Sys.close(fileDescriptor) }

    /// Opens `node` read-write, or read-only when write is refused (`EACCES`/`EPERM`); fails with the
    /// reason when neither works. `O_NONBLOCK` so that no later call on the descriptor can block.
    static func open(_ node: String) -> Result<ProbeHandle, DeviceAccessFailure> {
        do throws(SystemCallError) {
            let fd = try Sys.open(node, flags: O_RDWR | O_NONBLOCK)
            return .success(ProbeHandle(fileDescriptor: fd, access: .readWrite))
        } catch let writeError where writeError.isPermissionDenied {
            do throws(SystemCallError) {
                let fd = try Sys.open(node, flags: O_RDONLY | O_NONBLOCK)
                return .success(
                    ProbeHandle(fileDescriptor: fd, access: .readOnly(reason: "write refused: \(writeError)")))
            } catch {
                return .failure(DeviceAccessFailure(error))
            }
        } catch {
            return .failure(DeviceAccessFailure(error))
        }
    }

    /// The number of effects the device can hold at once (`EVIOCGEFFECTS`).
    func maxEffects() throws(SystemCallError) -> Int {
        var count: Int32 = 0
        _ = try Sys.ioctl(fileDescriptor, cli_EVIOCGEFFECTS(), "EVIOCGEFFECTS", &count)
        return Int(count)
    }
}

/// Why an event node could not be opened.
struct DeviceAccessFailure: Error {
    let error: SystemCallError

    init(_ error: SystemCallError) { self.error = error }

    var access: DeviceAccess {
        .denied(reason: (error.isPermissionDenied ? DeviceAccess.permissionMarker : "") + error.description)
    }
}
