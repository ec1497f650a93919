// Measures of a played waveform, for checking that what reached the voice coils follows what was rendered:
// the level (RMS) and the dominant frequency, over a stretch or per window. Pure.
import HapticRendering

package enum WaveformAnalysis {
    /// The band searched for a dominant frequency: what the voice coils are driven with, well inside the
    /// 1500 Hz a 3000 Hz stream can carry.
    package static let band: ClosedRange<Double> = 20...1500

    /// The measures of one window.
    package struct Window: Sendable, Hashable {
        /// When the window starts (in the waveform's time).
        package var start: Double
        package var duration: Double
        package var rms: Double
        /// Nil for a silent window.
        package var dominantFrequency: Double?
    }

    /// The root mean square of `samples` (0 for none).
    package static func rms(_ samples: some Collection<Float>) -> Double {
        guard !samples.isEmpty else { return 0 }
        let sum = samples.reduce(0.0) { $0 + Double($1) * Double($1) }
        return (sum / Double(samples.count)).squareRoot()
    }

    /// The frequency in `band` (clipped to below half the sample rate) where the samples' spectrum peaks, or nil
    /// when they are constant (silence, or only an offset). The samples lose their mean and are shaped by a Hann
    /// window, then a Goertzel filter measures the power at frequencies a quarter of the window's resolution
    /// apart (at least 1 Hz), and again around the best of those at a tenth of that step: a single tone is found
    /// within about a fortieth of the resolution (a 50 ms window resolves 20 Hz, so within 0.5 Hz). The window
    /// must hold a few cycles (three: 60 Hz in 50 ms) for its tone to stand out of the window's own shape.
    package static func dominantFrequency(
        _ samples: [Float], sampleRate: Double, band: ClosedRange<Double> = band
    ) -> Double? {
        guard samples.count > 1 else { return nil }
        let mean = samples.reduce(0.0) { $0 + Double($1) } / Double(samples.count)
        let count = Double(samples.count)
        let shaped = samples.enumerated().map { index, sample in
            (Double(sample) - mean) * 0.5 * (1 - PureMath.cos(2 * PureMath.pi * Double(index) / (count - 1)))
        }
        guard shaped.contains(where: { $0 != 0 }) else { return nil }
        let upper = min(band.upperBound, sampleRate / 2 * 0.999)
        guard band.lowerBound < upper else { return nil }
        let step = max(1, sampleRate / count / 4)
        let coarse = peak(of: shaped, sampleRate: sampleRate, in: band.lowerBound...upper, step: step)
        let fine = max(band.lowerBound, coarse - step)...min(upper, coarse + step)
        return peak(of: shaped, sampleRate: sampleRate, in: fine, step: step / 10)
    }

    /// RMS and dominant frequency per window of `length` seconds; the windows' starts count from `start`.
    package static func windows(_ samples: [Float], sampleRate: Double, start: Double = 0, length: Double) -> [Window] {
        let frames = max(1, Int((length * sampleRate).rounded()))
        return stride(from: 0, through: samples.count - frames, by: frames).map { first in
            let window = Array(samples[first..<(first + frames)])
            return Window(
                start: start + Double(first) / sampleRate, duration: Double(frames) / sampleRate, rms: rms(window),
                dominantFrequency: dominantFrequency(window, sampleRate: sampleRate))
        }
    }

    /// The frequency in `range`, `step` apart, of the most power.
    private static func peak(of samples: [Double], sampleRate: Double, in range: ClosedRange<Double>, step: Double)
        -> Double
    {
        var best = range.lowerBound
        var bestPower = -1.0
        for frequency in stride(from: range.lowerBound, through: range.upperBound, by: step) {
            let power = goertzelPower(samples, frequency: frequency, sampleRate: sampleRate)
            if power > bestPower {
                best = frequency
                bestPower = power
            }
        }
        return best
    }

    /// The squared magnitude of the samples' discrete-time Fourier transform at `frequency` (Goertzel's
    /// recurrence).
    static func goertzelPower(_ samples: [Double], frequency: Double, sampleRate: Double) -> Double {
        let coefficient = 2 * PureMath.cos(2 * PureMath.pi * frequency / sampleRate)
        var previous = 0.0
        var beforePrevious = 0.0
        for sample in samples {
            let current = sample + coefficient * previous - beforePrevious
            beforePrevious = previous
            previous = current
        }
        return previous * previous + beforePrevious * beforePrevious - coefficient * previous * beforePrevious
    }
}
