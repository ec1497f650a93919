// snd-aloop's loopback card as a microphone: what is played on its playback side (device 0) comes back on its
// capture side (device 1), sample for sample when both run the same format. The kernel tests and the
// benchmarks hear the engine's sound through it.
import LinuxAudio
import LinuxInput
@_spi(Internals) import LinuxSystem

package enum LoopbackCapture {
    package static let playbackDevice = "hw:Loopback,0,0"
    package static let captureDevice = "hw:Loopback,1,0"

    /// What a capture heard.
    package struct Recording: Sendable {
        /// Interleaved samples, `channels` per frame (stereo unless the capture asked for more).
        package let samples: [Float]
        package var channels = 2
        /// The `CLOCK_MONOTONIC` nanoseconds the capture was started at, taken as its first frame's time.
        package let start: UInt64
        package let rate: Int

        /// When frame `frame` was heard, in `CLOCK_MONOTONIC` seconds.
        package func seconds(ofFrame frame: Int) -> Double { Double(start) / 1e9 + Double(frame) / Double(rate) }
    }

    /// Captures `frames` frames of `channels` channels at `rate` from the loopback while `play` plays on its other side; returns
    /// the samples and the `CLOCK_MONOTONIC` time the capture was started, taken as its first frame's time.
    /// `device` is the capture side of the playback subdevice listened to (`hw:Loopback,1,N` hears
    /// `hw:Loopback,0,N`). With `throughPlay`, `frames` is the least: the capture goes on, 20 ms at a time, until
    /// `play` has returned, and ends with the 20 ms after that (for a `play` that waits until its sound is out,
    /// however long its own start took).
    package static func capture(
        frames: Int, rate: Int, device: String = captureDevice, channels: Int = 2, throughPlay: Bool = false,
        while play: () throws -> Void
    ) throws -> Recording {
        let capture = try PCM(
            device: device, direction: .capture, sampleRate: rate, bufferSeconds: 0.5, channels: channels)
        defer { capture.close() }
        let captured = Lock<Result<[Float], AudioDeviceError>?>(nil)
        let played = Lock(false)
        let start = MonotonicTime.nanoseconds()
        try capture.start()
        let reader = try ServiceThread.start {
            let result = Result { () throws(AudioDeviceError) in
                var samples = [Float](repeating: 0, count: channels * frames)
                try read(into: &samples, from: capture)
                var chunk = [Float](repeating: 0, count: channels * max(1, rate / 50))
                while throughPlay {
                    let ended = played.withLock { $0 }
                    try read(into: &chunk, from: capture)
                    samples += chunk
                    if ended { break }
                }
                return samples
            }
            captured.withLock { $0 = result }
        }
        defer { reader.join() }
        defer { played.withLock { $0 = true } }
        try play()
        played.withLock { $0 = true }
        reader.join()
        return Recording(
            samples: try (captured.withLock { $0 })?.get() ?? [], channels: channels, start: start, rate: rate)
    }

    private static func read(into samples: inout [Float], from capture: PCM) throws(AudioDeviceError) {
        try samples.withUnsafeMutableBufferPointer { (pointer) throws(AudioDeviceError) in
            try capture.read(into: pointer) { _ in }
        }
    }

    /// The first frame from `start` on whose left sample stands out of silence (above `threshold`).
    package static func onset(_ samples: [Float], from start: Int = 0, threshold: Float = 0.02) -> Int? {
        stride(from: 2 * start, to: samples.count, by: 2).first { abs(samples[$0]) > threshold }.map { $0 / 2 }
    }
}
