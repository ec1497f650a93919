// The error every failed system call throws.

/// An `errno` value from a failed system call, with the name of the call that failed.
public struct SystemCallError: Error, Equatable, Sendable, CustomStringConvertible {
    public let errno: Errno
    /// The C call that failed (`open`, `ioctl(EVIOCSFF)`...).
    public let call: String

    public init(_ errno: Errno, call: String) {
        self.errno = errno
        self.call = call
    }

    public var description: String { "\(call): \(errno)" }

    /// The device went away (`ENODEV`), the way hot-unplug shows up on an open node.
    public var isDeviceGone: Bool { errno == .noDevice || errno == .noSuchAddressOrDevice }
    public var isPermissionDenied: Bool { errno == .permissionDenied || errno == .notPermitted }
}
