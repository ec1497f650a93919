internal import AHAP
@_spi(Internals) public import LinuxSystem

/// A sound output's call that failed: which device, which call (an alsa-lib call, or the write of a
/// controller's haptics stream), and the error it returned.
public struct AudioDeviceError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The ALSA device name ("default", "hw:Loopback,0,0"), or the node a controller's stream is written to.
    public let device: String
    /// The alsa-lib call that failed (`snd_pcm_open`, `snd_pcm_writei`...).
    public let call: String
    /// The negated return value of the call: alsa-lib returns -errno.
    public let errno: Errno
    /// alsa-lib's text for the error (`snd_strerror`), which also names its own codes beyond errno's.
    public let message: String

    public init(device: String, call: String, errno: Errno, message: String) {
        self.device = device
        self.call = call
        self.errno = errno
        self.message = message
    }

    public var description: String {
        let kind = device.hasPrefix("/dev/") ? "output" : "ALSA device"
        return "\(call) on \(kind) '\(device)': \(message) (error \(errno.rawValue))"
    }

    /// The device is not there: it never was (at open, `ENOENT` for a card number without a card, `ENODEV` for a
    /// card name that names none) or no longer is (unplugged or its driver unbound while open: `ENODEV`, or
    /// `ENXIO` from some drivers).
    public var isDeviceMissing: Bool {
        errno == .noDevice || errno == .noSuchAddressOrDevice || errno == .noSuchFileOrDirectory
    }
    /// Another program holds the device exclusively (`EBUSY`): a `hw:` device is exclusive, "default" is not.
    public var isBusy: Bool { errno == .resourceBusy }
}

/// An audio file that could not be read or converted: the file and why.
public struct AudioFileError: Error, Equatable, Sendable, CustomStringConvertible {
    public let path: String
    /// libsndfile's or libsamplerate's explanation, or ours for a limit.
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `path: reason`; a path holding a hidden character (a newline, an escape) is shown quoted and escaped, since
    /// it may come from a pattern file.
    public var description: String { "\(path.shownInMessage): \(reason)" }
}
