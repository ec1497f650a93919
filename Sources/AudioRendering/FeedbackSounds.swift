import AHAP
import HapticRendering

/// The feedback sounds the project makes itself, as recipes: `scripts/make-sounds` writes them to
/// Haptics/success.wav, pass.wav and warning.wav, and a unit test checks the committed files against them. Each
/// is mono, shorter than half a second, and peaks at `peak` (-3 dBFS).
public enum FeedbackSound: String, Sendable, CaseIterable {
    /// A short positive ping: two bell-like tones a fifth apart, the higher one 80 ms after the first.
    case success
    /// A whoosh: noise through a low-pass whose cut-off sweeps up and back down, swelling and fading.
    case pass
    /// An alert tick: two short, bright blips 120 ms apart.
    case warning

    /// The file name under Haptics/.
    public var fileName: String { "\(rawValue).wav" }

    /// The level every sound peaks at: 1/√2, -3 dBFS.
    public static let peak = 1 / 2.0.squareRoot()

    /// The sound at `sampleRate`, normalised to `peak`; nil for a rate that is not positive.
    public func clip(sampleRate: Double) -> AudioClip? {
        guard sampleRate > 0, sampleRate.isFinite else { return nil }
        var samples: [Double]
        switch self {
        case .success: samples = Self.ping(sampleRate: sampleRate)
        case .pass: samples = Self.whoosh(sampleRate: sampleRate)
        case .warning: samples = Self.tick(sampleRate: sampleRate)
        }
        let loudest = samples.map(abs).max() ?? 0
        if loudest > 0 { samples = samples.map { $0 * Self.peak / loudest } }
        return AudioClip(sampleRate: sampleRate, channelCount: 1, samples: samples.map { Float($0) })
    }

    /// A sine of `frequency` with its second partial, starting at `start` s with a 3 ms attack and decaying
    /// exponentially with time constant `decay` s.
    private static func bell(_ time: Double, frequency: Double, start: Double, decay: Double) -> Double {
        let t = time - start
        guard t >= 0 else { return 0 }
        let attack = min(t / 0.003, 1)
        let phase = 2 * PureMath.pi * frequency * t
        return attack * PureMath.exp(-t / decay) * (PureMath.sin(phase) + 0.3 * PureMath.sin(2 * phase))
    }

    private static func ping(sampleRate: Double) -> [Double] {
        (0..<Int(0.35 * sampleRate)).map { frame in
            let time = Double(frame) / sampleRate
            return bell(time, frequency: 880, start: 0, decay: 0.05)
                + bell(time, frequency: 1320, start: 0.08, decay: 0.07)
        }
    }

    private static func whoosh(sampleRate: Double) -> [Double] {
        var noise = SeededGenerator(seed: 0x5EED_0F_5A55)
        let length = 0.4
        var low = 0.0
        return (0..<Int(length * sampleRate)).map { frame in
            let progress = Double(frame) / (length * sampleRate)
            // The cut-off rises from 300 Hz to 4 kHz at a third of the way, then falls to 500 Hz.
            let cutoff =
                progress < 1.0 / 3
                ? 300 * PureMath.pow(4000.0 / 300, progress * 3)
                : 4000 * PureMath.pow(500.0 / 4000, (progress - 1.0 / 3) * 1.5)
            let white = Double(noise.next() >> 11) / Double(1 << 53) * 2 - 1
            low += AudioMapping.lowPassCoefficient(cutoff: cutoff, sampleRate: sampleRate) * (white - low)
            // A raised-cosine swell over the whole length.
            return low * (1 - PureMath.cos(2 * PureMath.pi * progress)) / 2
        }
    }

    private static func tick(sampleRate: Double) -> [Double] {
        (0..<Int(0.25 * sampleRate)).map { frame in
            let time = Double(frame) / sampleRate
            return [0.0, 0.12].reduce(0) { sum, start in
                let t = time - start
                guard t >= 0, t < 0.04 else { return sum }
                let phase = 2 * PureMath.pi * 1000 * t
                // Odd partials of a square wave, for an edge; a 1 ms attack and a fast decay.
                let square = PureMath.sin(phase) + PureMath.sin(3 * phase) / 3 + PureMath.sin(5 * phase) / 5
                return sum + square * min(t / 0.001, 1) * PureMath.exp(-t / 0.012)
            }
        }
    }
}
