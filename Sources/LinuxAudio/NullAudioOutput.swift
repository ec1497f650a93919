@_spi(Internals) internal import LinuxSystem

/// An output with no device behind it that keeps a device's time: frames are "heard" in order at `sampleRate`
/// on `CLOCK_MONOTONIC`, a write waits while more than `bufferSeconds` is queued, and a queue that runs dry
/// starts again at the next write, as a device's stream does after an underrun. For machines without sound
/// (containers, CI), so that everything timed against the output runs the same.
public final class NullAudioOutput: AudioOutput {
    public let deviceName = "null"
    public let sampleRate: Int
    public let latency: AudioLatency
    /// When the last frame queued will have been heard (`CLOCK_MONOTONIC` nanoseconds); nil when closed.
    private let queueEnd: Lock<UInt64?> = Lock(0)
    /// Now, in nanoseconds: `CLOCK_MONOTONIC`.
    private let clock: @Sendable () -> UInt64

    public convenience init(sampleRate: Int = AudioOutputs.defaultSampleRate, bufferSeconds: Double = 0.04) {
        self.init(sampleRate: sampleRate, bufferSeconds: bufferSeconds, clock: { MonotonicTime.nanoseconds() })
    }

    /// An output whose time is `clock` (nanoseconds) instead of `CLOCK_MONOTONIC`, so that a test sets when a
    /// write is made. A write that finds the buffer full still sleeps, for as long as `clock` says is left.
    /// A buffer length outside `AudioOutputs.bufferSecondsRange` is taken as the nearest end of it, and one that
    /// is not a number as 0.04 s, and a rate outside 1 ... 1,000,000 Hz (what ALSA's devices take) as the nearest
    /// end of that: an output with no device behind it has no device to refuse them. (A rate of 0 divided by
    /// zero on the first write, until 6 December.)
    package init(sampleRate: Int, bufferSeconds: Double, clock: @escaping @Sendable () -> UInt64) {
        let sampleRate = min(max(sampleRate, 1), 1_000_000)
        self.sampleRate = sampleRate
        self.clock = clock
        let range = AudioOutputs.bufferSecondsRange
        let seconds = bufferSeconds.isNaN ? 0.04 : min(max(bufferSeconds, range.lowerBound), range.upperBound)
        let buffer = max(1, Int((seconds * Double(sampleRate)).rounded()))
        latency = AudioLatency(bufferFrames: buffer, periodFrames: max(1, buffer / 4), sampleRate: sampleRate)
    }

    @discardableResult
    public func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        let frames = UInt64(samples.count / 2)
        let (heard, end) = try queueEnd.withLock { (end) throws(AudioDeviceError) -> (UInt64, UInt64) in
            guard let queued = end else { throw closedError("write") }
            let heard = max(queued, clock())
            end = heard + frames * 1_000_000_000 / UInt64(sampleRate)
            return (heard, heard + frames * 1_000_000_000 / UInt64(sampleRate))
        }
        // Wait, as a full ring buffer makes a writer wait, until no more than the buffer is left to hear.
        let buffer = UInt64(latency.bufferFrames) * 1_000_000_000 / UInt64(sampleRate)
        let now = clock()
        if end > now + buffer { Sys.sleep(nanoseconds: end - buffer - now) }
        return heard
    }

    public func delay() throws(AudioDeviceError) -> Double {
        let end = try queueEnd.withLock { (end) throws(AudioDeviceError) -> UInt64 in
            guard let end else { throw closedError("delay") }
            return end
        }
        let now = clock()
        return end > now ? Double(end - now) / 1e9 : 0
    }

    public func drain() throws(AudioDeviceError) {
        let left = try delay()
        if left > 0 { Sys.sleep(nanoseconds: UInt64(left * 1e9)) }
    }

    public func close() {
        queueEnd.withLock { $0 = nil }
    }

    private func closedError(_ call: String) -> AudioDeviceError {
        AudioDeviceError(device: deviceName, call: call, errno: .badFileDescriptor, message: "the output is closed")
    }
}
