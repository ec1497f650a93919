import HapticRendering

/// Keeps a stereo mix within full scale without clipping it: while the mix stays within -1...1 every sample passes
/// untouched. A frame that goes past full scale brings the gain down at once, to what puts its louder channel at full
/// scale; the gain holds for `holdSeconds` after the last frame that loud (longer than a cycle of any audible
/// frequency, so that a steady loud sound is scaled whole, not reshaped cycle by cycle), then comes back towards 1
/// over `releaseSeconds` (63 % of the way in that time). Both channels take the same gain, so a sound stays where it
/// was panned. Two loud sounds over each other are heard a little quieter for a moment, with their waveform, where
/// a clip cut every peak off flat (a harsh, buzzing distortion). Without look-ahead nothing is delayed; only the
/// rising edge of the first peak past full scale (and of one louder still) is flattened at full scale.
public struct PeakLimiter: Sendable {
    /// How long the gain holds after a peak: a cycle of 20 Hz.
    public static let holdSeconds = 0.05
    /// How quickly the gain comes back once the hold is over.
    public static let releaseSeconds = 0.05

    /// The loudest frame the gain is set for (at least full scale): it holds, then falls back towards full scale.
    private var envelope: Float = 1
    private var holdLeft = 0
    private let holdFrames: Int
    /// The fraction of the way back to full scale the envelope goes each frame after the hold.
    private let recovery: Float

    /// A limiter for a stream of `sampleRate` frames a second (a rate that is not a positive number holds and
    /// releases at once).
    public init(
        sampleRate: Double, holdSeconds: Double = PeakLimiter.holdSeconds,
        releaseSeconds: Double = PeakLimiter.releaseSeconds
    ) {
        // A hold of more frames than a frame count goes holds that many (`FrameCount.maximum`); an infinite one none.
        holdFrames = (holdSeconds * sampleRate).isFinite ? FrameCount.of(holdSeconds, at: sampleRate) : 0
        let release = releaseSeconds * sampleRate
        recovery = release > 0 && release.isFinite ? Float(1 - PureMath.exp(-1 / release)) : 1
    }

    /// The gain applied to the last frame: 1 while nothing went past full scale lately.
    public var gain: Float { 1 / envelope }

    /// Limits the interleaved stereo `samples` (left, right, frame after frame) in place. A sample that is not a
    /// number, or infinite, moves no gain: it is left for the output's clip.
    public mutating func limit(_ samples: inout [Float]) {
        var index = 0
        while index + 1 < samples.count {
            var peak = Swift.max(abs(samples[index]), abs(samples[index + 1]))
            if !peak.isFinite { peak = 0 }
            if peak >= envelope {
                envelope = peak
                holdLeft = holdFrames
            } else if holdLeft > 0 {
                holdLeft -= 1
            } else if envelope > 1 {
                envelope += (Swift.max(peak, 1) - envelope) * recovery
            }
            if envelope > 1 {
                let gain = 1 / envelope
                samples[index] *= gain
                samples[index + 1] *= gain
            }
            index += 2
        }
    }
}
