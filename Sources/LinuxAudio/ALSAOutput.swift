public import Logging
internal import LinuxSystem

/// Sound on an ALSA PCM device. "default" reaches the sound server (PipeWire, PulseAudio) or dmix through
/// alsa-lib's plugins and so mixes with other programs; a `hw:` name opens the hardware itself, exclusively.
///
/// Underruns and suspends are recovered (`snd_pcm_recover`) and logged; `xrunCount` counts them. A device that
/// goes away makes every later call throw an `AudioDeviceError` whose `isDeviceMissing` is true.
public final class ALSAOutput: AudioOutput {
    public let deviceName: String
    public let sampleRate: Int
    public let latency: AudioLatency
    private let state: Lock<State>
    private let logger: Logger

    private struct State: ~Copyable {
        var pcm: PCM
        var xruns = 0
    }

    /// Opens `device` for stereo float playback at `sampleRate` with a ring buffer of about `bufferSeconds`
    /// (the device may round it: `latency` says what it chose).
    public init(
        device: String = "default", sampleRate: Int = AudioOutputs.defaultSampleRate, bufferSeconds: Double = 0.04,
        logger: Logger
    ) throws(AudioDeviceError) {
        let pcm = try PCM(device: device, direction: .playback, sampleRate: sampleRate, bufferSeconds: bufferSeconds)
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
            try samples.withUnsafeBufferPointer { (buffer) throws(AudioDeviceError) in
                try state.pcm.write(buffer) {
                    state.xruns += 1; log($0)
                }
            }
            return heard
        }
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
