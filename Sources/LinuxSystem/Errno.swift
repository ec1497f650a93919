// An errno value as a type, the way swift-system's `Errno` carries one: named constants for the codes this
// package sorts on, and the C library's text for any code.
internal import Glibc

/// A C `errno` value.
public struct Errno: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: Int32

    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// `ENOENT`.
    public static let noSuchFileOrDirectory = Errno(rawValue: ENOENT)
    /// `EINTR`.
    public static let interrupted = Errno(rawValue: EINTR)
    /// `EIO`.
    public static let ioError = Errno(rawValue: EIO)
    /// `ENXIO`.
    public static let noSuchAddressOrDevice = Errno(rawValue: ENXIO)
    /// `EBADF`.
    public static let badFileDescriptor = Errno(rawValue: EBADF)
    /// `EAGAIN`: a non-blocking call has nothing to do now.
    public static let wouldBlock = Errno(rawValue: EAGAIN)
    /// `ENOMEM`.
    public static let noMemory = Errno(rawValue: ENOMEM)
    /// `EACCES`.
    public static let permissionDenied = Errno(rawValue: EACCES)
    /// `EPERM`.
    public static let notPermitted = Errno(rawValue: EPERM)
    /// `EBUSY`.
    public static let resourceBusy = Errno(rawValue: EBUSY)
    /// `ENODEV`: how an unplugged device answers on a node that is still open.
    public static let noDevice = Errno(rawValue: ENODEV)
    /// `EINVAL`.
    public static let invalidArgument = Errno(rawValue: EINVAL)
    /// `EMFILE`.
    public static let tooManyOpenFiles = Errno(rawValue: EMFILE)
    /// `ENOSPC`: for force feedback, every effect slot is taken.
    public static let noSpace = Errno(rawValue: ENOSPC)
    /// `ENOTTY`: an ioctl the file does not know (an evdev request made on a file that is not an event node).
    public static let inappropriateIOControl = Errno(rawValue: ENOTTY)
    /// `ENOBUFS`: for a netlink socket, its receive buffer overflowed and the kernel dropped messages.
    public static let noBufferSpace = Errno(rawValue: ENOBUFS)
    /// `ELOOP`: too many symbolic links on the way (one that leads to itself).
    public static let tooManySymbolicLinks = Errno(rawValue: ELOOP)
    /// `EISDIR`.
    public static let isDirectory = Errno(rawValue: EISDIR)
    /// `ENOSYS`: for force feedback, the device has none.
    public static let notImplemented = Errno(rawValue: ENOSYS)
    /// `EPIPE`: for an ALSA stream, an underrun (playback) or overrun (capture).
    public static let brokenPipe = Errno(rawValue: EPIPE)
    /// `ESTRPIPE`: for an ALSA stream, the device was suspended.
    public static let streamSuspended = Errno(rawValue: ESTRPIPE)
    /// `EBADFD`: for an ALSA stream, not in a state that allows the call; a stream whose card was disconnected
    /// answers every call so until its file operations are swapped for ones that answer `ENODEV`.
    public static let badState = Errno(rawValue: EBADFD)

    /// The C library's text for the code (`strerror`).
    public var message: String { String(cString: strerror(rawValue)) }

    public var description: String { "\(message) (errno \(rawValue))" }
}
