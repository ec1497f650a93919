public import Logging
@_spi(Internals) internal import LinuxSystem

/// Sound on an ALSA PCM device. "default" reaches the sound server (PipeWire, PulseAudio) or dmix through
/// alsa-lib's plugins and so mixes with other programs; a `hw:` name opens the hardware itself, exclusively.
///
/// Underruns and suspends are recovered (`snd_pcm_recover`) and logged; `xrunCount` counts them. A write whose
/// wait for room timed out on a running stream (the machine stood still past it) is made again and logged. A
/// device that goes away makes every later call throw an `AudioDeviceError` whose `isDeviceMissing` is true.
public final class ALSAOutput: AudioOutput {
    public let deviceName: String
    public let sampleRate: Int
    public let latency: AudioLatency
    /// The device's channels, and the first of the two the stereo frames written go to.
    public let channels: Int
    public let stereoChannel: Int
    private let state: Lock<State>
    private let logger: Logger

    private struct State: ~Copyable {
        var pcm: PCM
        var xruns = 0
    }

    /// Opens `device` for float playback at `sampleRate` with a ring buffer of about `bufferSeconds` (the device
    /// may round it: `latency` says what it chose). The device runs `channels` channels (stereo by default); the
    /// stereo frames written go to channels `stereoChannel` and `stereoChannel + 1` (counted from 0), and the
    /// others stay silent: a DualSense's sound card plays its voice coils on its third and fourth channels.
    public init(
        device: String = "default", sampleRate: Int = AudioOutputs.defaultSampleRate, bufferSeconds: Double = 0.04,
        channels: Int = 2, stereoChannel: Int = 0, logger: Logger
    ) throws(AudioDeviceError) {
        guard channels >= 2, (0...(channels - 2)).contains(stereoChannel) else {
            throw AudioDeviceError(
                device: device, call: "open", errno: .invalidArgument,
                message: "channels \(stereoChannel) and \(stereoChannel + 1) of \(channels) do not exist")
        }
        let pcm = try PCM(
            device: device, direction: .playback, sampleRate: sampleRate, bufferSeconds: bufferSeconds,
            channels: channels)
        self.channels = channels
        self.stereoChannel = stereoChannel
        deviceName = device
        self.sampleRate = sampleRate
        latency = AudioLatency(bufferFrames: pcm.bufferFrames, periodFrames: pcm.periodFrames, sampleRate: sampleRate)
        state = Lock(State(pcm: pcm))
        self.logger = logger
        logger.debug("audio output open", metadata: ["device": "\(device)", "latency": "\(latency)"])
    }

    /// Underruns, overruns and suspends recovered so far.
    public var xrunCount: Int { state.withLock { $0.xruns } }

    @discardableResult
    public func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        try state.withLock { (state) throws(AudioDeviceError) -> UInt64 in
            let now = MonotonicTime.nanoseconds()
            let queued = try state.pcm.delayFrames {
                state.xruns += 1; log($0)
            }
            let heard = now + UInt64(queued) * 1_000_000_000 / UInt64(sampleRate)
            let frames = channels == 2 ? samples : placed(samples)
            try frames.withUnsafeBufferPointer { (buffer) throws(AudioDeviceError) in
                try state.pcm.write(buffer) {
                    // A wait that timed out is no underrun; the write that follows it tells.
                    if $0.errno != .ioError { state.xruns += 1 }
                    log($0)
                }
            }
            return heard
        }
    }

    /// Stereo frames spread over the device's channels: each pair at `stereoChannel`, silence elsewhere.
    private func placed(_ samples: [Float]) -> [Float] {
        let frames = samples.count / 2
        var wide = [Float](repeating: 0, count: frames * channels)
        for frame in 0..<frames {
            wide[frame * channels + stereoChannel] = samples[2 * frame]
            wide[frame * channels + stereoChannel + 1] = samples[2 * frame + 1]
        }
        return wide
    }

    public func delay() throws(AudioDeviceError) -> Double {
        let frames = try state.withLock { (state) throws(AudioDeviceError) -> Int in
            try state.pcm.delayFrames {
                state.xruns += 1; log($0)
            }
        }
        return Double(frames) / Double(sampleRate)
    }

    public func drain() throws(AudioDeviceError) {
        try state.withLock { (state) throws(AudioDeviceError) in try state.pcm.drain() }
    }

    public func close() {
        state.withLock { $0.pcm.close() }
    }

    private func log(_ recovered: AudioDeviceError) {
        logger.warning("audio stream recovered", metadata: ["device": "\(deviceName)", "error": "\(recovered)"])
    }
}
