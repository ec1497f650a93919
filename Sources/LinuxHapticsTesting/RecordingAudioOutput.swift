// A sound output that records instead of playing: for testing code that plays sound (an AudioManager, a
// MixingStream) without a sound card, and for making its device go away on demand.
public import LinuxAudio
import LinuxInput

/// An output that keeps what is written and says each frame is heard at `origin` plus its place in the stream:
/// a device with no latency whose clock starts at `origin`. It waits 0.2 ms per write so that a stream's
/// thread does not spin.
public final class RecordingAudioOutput: AudioOutput {
    public let deviceName = "recording"
    public let sampleRate: Int
    public let latency: AudioLatency
    public let origin: UInt64
    private let state = Lock<(samples: [Float], failAfter: Int?)>(([], nil))

    /// A recording at `sampleRate` (8 kHz keeps tests small) whose clock starts at `origin`
    /// (`CLOCK_MONOTONIC` nanoseconds).
    public init(origin: UInt64, sampleRate: Int = 8000) {
        self.origin = origin
        self.sampleRate = sampleRate
        // 32 ms of buffer in periods of 8 ms.
        latency = AudioLatency(
            bufferFrames: sampleRate * 32 / 1000, periodFrames: sampleRate * 8 / 1000, sampleRate: sampleRate)
    }

    /// Every sample written, interleaved left and right.
    public var samples: [Float] { state.withLock { $0.samples } }
    /// How many frames were written.
    public var frames: Int { state.withLock { $0.samples.count / 2 } }

    /// Makes writes fail as a device that went away does (`ENODEV`) once `frames` frames have been written; nil
    /// brings it back.
    public func fail(after frames: Int?) { state.withLock { $0.failAfter = frames } }

    public func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        Sys.sleep(nanoseconds: 200_000)
        return try state.withLock { (state) throws(AudioDeviceError) -> UInt64 in
            let first = state.samples.count / 2
            if let limit = state.failAfter, first >= limit {
                throw AudioDeviceError(device: deviceName, call: "write", errno: .noDevice, message: "gone")
            }
            state.samples += samples
            return origin + UInt64(first) * 1_000_000_000 / UInt64(sampleRate)
        }
    }

    public func delay() throws(AudioDeviceError) -> Double { 0 }
    public func drain() throws(AudioDeviceError) {}
    public func close() {}
}
