// A sound output that records instead of playing: for testing code that plays sound (an AudioManager, a
// MixingStream) without a sound card, for making its device go away on demand, and for holding its writer at a
// frame while a test posts what must reach the stream together.
public import LinuxAudio
import LinuxInput
@_spi(Internals) public import LinuxSystem

/// An output that keeps what is written and says each frame is heard at `origin` plus its place in the stream:
/// a device with no latency whose clock starts at `origin`. It waits 0.2 ms per write so that a stream's
/// thread does not spin.
///
/// Time on this output is frames, not the wall clock: a stream feeds it as fast as it can, so a test that must
/// act before the stream reaches a frame holds the writer there (`hold(after:)`) instead of racing it.
public final class RecordingAudioOutput: AudioOutput {
    public let deviceName = "recording"
    public let sampleRate: Int
    public let latency: AudioLatency
    public let origin: UInt64

    private struct State {
        var samples: [Float] = []
        var failAfter: Int?
        var failErrno = Errno.noDevice
        var holdAfter: Int?
        var waitingAtHold = false
        var gap: (after: Int, frames: Int)?
    }

    private let state = Lock(State())
    /// Wakes a write waiting at the hold when the hold moves.
    private let holdMoved = DeadlineWaiter()

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
    public func fail(after frames: Int?) { fail(after: frames, with: .noDevice) }

    /// The same with another error: `.ioError` (`EIO`) is a failure that ends a stream, not an interruption.
    public func fail(after frames: Int?, with errno: Errno) {
        state.withLock {
            $0.failAfter = frames
            $0.failErrno = errno
        }
    }

    /// Makes a write wait, before it records anything, once `frames` frames have been written, until the hold is
    /// moved past it or lifted (nil). While a writer waits there (`isWaitingAtHold`), what a test posts to the
    /// stream that feeds this output is taken by the stream all together, for the period after the one held. A
    /// stream cannot be closed while its writer waits: lift the hold first.
    public func hold(after frames: Int?) {
        state.withLock { $0.holdAfter = frames }
        holdMoved.signal()
    }

    /// Makes the first write once `frames` frames have been written come `gapFrames` frames late, as a device whose
    /// writer fell behind hears silence meanwhile: the silence is recorded, and the write is heard after it.
    public func fallBehind(after frames: Int, by gapFrames: Int) {
        state.withLock { $0.gap = (frames, gapFrames) }
    }

    /// Whether a write waits at the hold.
    public var isWaitingAtHold: Bool { state.withLock { $0.waitingAtHold } }

    public func write(_ samples: [Float]) throws(AudioDeviceError) -> UInt64 {
        Sys.sleep(nanoseconds: 200_000)
        while state.withLock({ state in
            state.waitingAtHold = state.holdAfter.map { state.samples.count / 2 >= $0 } ?? false
            return state.waitingAtHold
        }) {
            holdMoved.wait(untilNanoseconds: nil)
        }
        return try state.withLock { (state) throws(AudioDeviceError) -> UInt64 in
            if let limit = state.failAfter, state.samples.count / 2 >= limit {
                throw AudioDeviceError(
                    device: deviceName, call: "write", errno: state.failErrno,
                    message: state.failErrno == .noDevice ? "gone" : "failed")
            }
            if let gap = state.gap, state.samples.count / 2 >= gap.after {
                state.samples += [Float](repeating: 0, count: 2 * gap.frames)
                state.gap = nil
            }
            let first = state.samples.count / 2
            state.samples += samples
            return origin + UInt64(first) * 1_000_000_000 / UInt64(sampleRate)
        }
    }

    public func delay() throws(AudioDeviceError) -> Double { 0 }
    public func drain() throws(AudioDeviceError) {}
    public func close() {}
}
