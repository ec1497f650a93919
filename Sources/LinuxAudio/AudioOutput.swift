public import Logging

/// How much sound an output holds between a write and the ear: its ring buffer and the period in which the
/// buffer moves, at its rate. A frame written to a full buffer is heard about `bufferSeconds` later.
public struct AudioLatency: Sendable, Hashable, CustomStringConvertible {
    public let bufferFrames: Int
    public let periodFrames: Int
    public let sampleRate: Int

    public init(bufferFrames: Int, periodFrames: Int, sampleRate: Int) {
        self.bufferFrames = bufferFrames
        self.periodFrames = periodFrames
        self.sampleRate = sampleRate
    }

    public var bufferSeconds: Double { Double(bufferFrames) / Double(sampleRate) }
    public var periodSeconds: Double { Double(periodFrames) / Double(sampleRate) }

    public var description: String {
        "buffer \(bufferFrames) frames (\(milliseconds(bufferSeconds)) ms), period \(periodFrames) frames "
            + "(\(milliseconds(periodSeconds)) ms) at \(sampleRate) Hz"
    }

    private func milliseconds(_ seconds: Double) -> String { String(Double(Int(seconds * 10_000)) / 10) }
}

/// Where rendered sound goes: interleaved stereo float frames at `sampleRate`, played in order on the
/// `CLOCK_MONOTONIC` timeline. `ALSAOutput` plays them on a sound device; `NullAudioOutput` plays them on no
/// device, keeping the same time.
public protocol AudioOutput: AnyObject, Sendable {
    /// The device played on ("default", "hw:Loopback,0,0"), or "null".
    var deviceName: String { get }
    var sampleRate: Int { get }
    var latency: AudioLatency { get }

    /// Queues `samples` (2 per frame: left, right), waiting while the buffer is full. Returns when the first of
    /// them will be heard, in `CLOCK_MONOTONIC` nanoseconds: the time of the call plus what was queued before.
    @discardableResult
    func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64

    /// The seconds of sound queued and not yet heard.
    func delay() throws(AudioDeviceError) -> Double

    /// Waits until everything queued has been heard.
    func drain() throws(AudioDeviceError)

    /// Stops at once, dropping what is queued; later writes throw.
    func close()
}

/// Opening an output.
public enum AudioOutputs {
    /// The rate outputs run at unless asked otherwise: what sound servers and most hardware use natively.
    public static let defaultSampleRate = 48_000

    /// The buffer lengths an output is opened with, in seconds: from a millisecond (below it a device's period
    /// is no longer a time alsa-lib can set) to 10 s (beyond it, a start placed behind the buffer waits longer
    /// than any sound lasts). A length outside it, or one that is not a number, is refused
    /// (`bufferProblem(_:)`).
    public static let bufferSecondsRange: ClosedRange<Double> = 0.001...10

    /// Why `seconds` cannot be an output's buffer length; nil when it can.
    public static func bufferProblem(_ seconds: Double) -> String? {
        guard !bufferSecondsRange.contains(seconds) else { return nil }
        return "a buffer of \(seconds) s is not within \(bufferSecondsRange.lowerBound) ... "
            + "\(Int(bufferSecondsRange.upperBound)) s"
    }

    /// An ALSA output on `device`, or the null output when there is no sound device to open (no card, no such
    /// name, no ALSA configuration): logged at notice level, since sound then goes nowhere. Other failures (the
    /// device busy, refused parameters) are thrown: the caller asked for a device that exists.
    public static func open(
        device: String = "default", sampleRate: Int = defaultSampleRate, bufferSeconds: Double = 0.04,
        logger: Logger
    ) throws(AudioDeviceError) -> any AudioOutput {
        try open(sampleRate: sampleRate, bufferSeconds: bufferSeconds, logger: logger) {
            () throws(AudioDeviceError) -> any AudioOutput in
            try ALSAOutput(device: device, sampleRate: sampleRate, bufferSeconds: bufferSeconds, logger: logger)
        }
    }

    /// The output `opener` opens, or, when it finds no sound device (`isDeviceMissing`), the null output at
    /// `sampleRate` with `bufferSeconds`, logged at notice level. Other failures are thrown.
    public static func open(
        sampleRate: Int = defaultSampleRate, bufferSeconds: Double = 0.04, logger: Logger,
        _ opener: () throws(AudioDeviceError) -> any AudioOutput
    ) throws(AudioDeviceError) -> any AudioOutput {
        do {
            return try opener()
        } catch  where error.isDeviceMissing {
            logger.notice(
                "no sound device; audio plays on the null output",
                metadata: ["device": "\(error.device)", "error": "\(error)"])
            return NullAudioOutput(sampleRate: sampleRate, bufferSeconds: bufferSeconds)
        }
    }
}
