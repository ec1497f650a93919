/// Decoded sound: frames of one or two channels at a sample rate, interleaved, as `LinuxAudio` decodes a file
/// (and resamples it to the output's rate).
public struct AudioClip: Sendable {
    public let sampleRate: Double
    /// 1 (mono) or 2 (stereo: left, right).
    public let channelCount: Int
    /// `frameCount * channelCount` samples, -1 ... 1, interleaved.
    public let samples: [Float]

    /// The highest rate a clip may have: 10 MHz, ten times what any sound device takes. (Played against a mixer's
    /// rate, a rate near Double's largest made the clip's position infinite, and the mixer trapped, until 6
    /// December.)
    public static let maximumSampleRate = 10_000_000.0

    /// A clip of `samples`; `nil` unless `channelCount` is 1 or 2, `sampleRate` positive and at most
    /// `maximumSampleRate`, and the samples a whole number of frames.
    public init?(sampleRate: Double, channelCount: Int, samples: [Float]) {
        guard sampleRate > 0, sampleRate <= Self.maximumSampleRate, channelCount == 1 || channelCount == 2,
            samples.count % channelCount == 0
        else { return nil }
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.samples = samples
    }

    public var frameCount: Int { samples.count / channelCount }
    /// The clip's length in seconds.
    public var duration: Double { Double(frameCount) / sampleRate }
    public var isStereo: Bool { channelCount == 2 }

    /// The frame at a fractional `position` (0 ..< frameCount), linearly interpolated between the frames either
    /// side; after the last frame, towards the first when `wraps` (a loop) and towards silence otherwise.
    func frame(at position: Double, wraps: Bool) -> (left: Float, right: Float) {
        let index = Int(position)
        let fraction = Float(position - Double(index))
        let current = frame(index)
        guard fraction > 0 else { return current }
        let following = index + 1 < frameCount ? frame(index + 1) : (wraps ? frame(0) : (left: 0, right: 0))
        return (
            current.left + (following.left - current.left) * fraction,
            current.right + (following.right - current.right) * fraction
        )
    }

    /// Frame `index`; a mono frame is its one sample on both sides.
    private func frame(_ index: Int) -> (left: Float, right: Float) {
        let left = samples[index * channelCount]
        return (left, isStereo ? samples[index * channelCount + 1] : left)
    }
}

extension Float {
    /// The sample as an output takes it: within -1 ... 1, and silence for one that is not a number (a float file
    /// may hold NaN, which `min` and `max` pass through, and which a filter would spread to every later sample).
    public var clippedSample: Float { isNaN ? 0 : Swift.min(Swift.max(self, -1), 1) }

    /// The sample as a decoder keeps it: itself when it is a number, silence for NaN and full scale for an
    /// infinity. A float file's level beyond ±1 is kept, so that a volume below 1 still brings it back within
    /// range; only the mix clips.
    public var finiteSample: Float { isNaN ? 0 : isInfinite ? (self < 0 ? -1 : 1) : self }
}

/// Times as frames, for every place a time in seconds becomes a frame index.
public enum FrameCount {
    /// The most frames a time stands for: 2^53, about 6,000 years at 48 kHz, where `Double` still counts single
    /// frames; a larger or infinite time counts as this many, so that a time a caller may pass (a seek to 1e15
    /// seconds, a fade over an infinite time) never traps a conversion to `Int`.
    public static let maximum = 1 << 53

    /// `seconds` at `rate` frames per second, rounded to the nearest frame, within 0 ... `maximum`; 0 for a time
    /// that is not a number or not above 0.
    public static func of(_ seconds: Double, at rate: Double) -> Int {
        let frames = (seconds * rate).rounded()
        guard frames > 0 else { return 0 }
        return frames < Double(maximum) ? Int(frames) : maximum
    }
}
