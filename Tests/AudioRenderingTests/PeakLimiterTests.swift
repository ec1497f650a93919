import AHAP
import AudioRendering
import HapticRendering
import Testing

@Suite struct PeakLimiterTests {
    @Test func aMixWithinFullScalePassesUntouched() {
        var generator = SeededGenerator(seed: 7)
        let samples = (0..<4_800).map { _ in Float.random(in: -1...1, using: &generator) } + [1, -1, -1, 1]
        var limited = samples
        var limiter = PeakLimiter(sampleRate: 48_000)
        limiter.limit(&limited)
        #expect(limited == samples)
        #expect(limiter.gain == 1)
    }

    /// At 1000 frames a second the hold and the release are 50 frames each: a frame at twice full scale halves the
    /// gain at once (its louder channel lands on full scale), the gain holds 50 frames, then comes back towards 1
    /// (63 % of the way back to full scale in 50 frames), both channels alike.
    @Test func aFramePastFullScaleBringsTheGainDownAtOnceHoldsItAndReleasesIt() {
        var samples: [Float] = [0.5, 0.25, 2, -1]
        for _ in 0..<100 { samples += [0.5, 0.25] }
        var limiter = PeakLimiter(sampleRate: 1000)
        limiter.limit(&samples)
        #expect(samples[0...3] == [0.5, 0.25, 1, -0.5])
        let gains = stride(from: 4, to: samples.count, by: 2).map { samples[$0] / 0.5 }
        #expect(gains[..<50].allSatisfy { $0 == 0.5 }, "held")
        #expect(zip(gains[49...], gains[50...]).allSatisfy { $0 < $1 }, "released")
        #expect(stride(from: 4, to: samples.count, by: 2).allSatisfy { samples[$0] == 2 * samples[$0 + 1] })
        // 50 frames into the release: the envelope at 1 + 1/e of full scale.
        #expect(abs(gains[99] - 1 / (1 + Float(PureMath.exp(-1)))) < 0.002, "\(gains[99])")
        #expect(samples.allSatisfy { abs($0) <= 1 })
    }

    /// A hold of more frames than `Int` counts (1e300 s at 48 kHz) holds the gain for as long as a frame count goes
    /// (`FrameCount.maximum`), and never traps: it trapped converting the frames to `Int`. An infinite one, as one
    /// at an infinite rate, holds none.
    @Test func aHoldLongerThanIntCountsHoldsTheGainAndNeverTraps() {
        var samples: [Float] = [2, 2]
        for _ in 0..<1_000 { samples += [0.5, 0.5] }
        var limiter = PeakLimiter(sampleRate: 48_000, holdSeconds: 1e300)
        limiter.limit(&samples)
        #expect(limiter.gain == 0.5)
        #expect(samples[2...].allSatisfy { $0 == 0.25 })
        var endless = [Float](repeating: 0.5, count: 100)
        endless[0] = 2
        endless[1] = 2
        var released = PeakLimiter(sampleRate: 48_000, holdSeconds: .infinity, releaseSeconds: 0)
        released.limit(&endless)
        #expect(released.gain == 1)
    }

    @Test func samplesThatAreNotNumbersMoveNoGain() {
        var samples: [Float] = [.nan, 0.5, .infinity, -0.5, 0.5, 0.5]
        var limiter = PeakLimiter(sampleRate: 48_000)
        limiter.limit(&samples)
        #expect(limiter.gain == 1)
        #expect(samples[1] == 0.5 && samples[2] == .infinity && samples[4...] == [0.5, 0.5])
    }

    /// Two sine clips at 0.9 of full scale, played together at the centre, sum to 1.27 of full scale: the mixer's
    /// output keeps their waveform at a lower gain, where a clip held 42 % of the samples flat at full scale (until
    /// 6 December).
    @Test func twoLoudSoundsOverEachOtherKeepTheirWaveformWithinFullScale() throws {
        let rate = 8_000.0
        let sine = (0..<8_000).map { Float(0.9 * PureMath.sin(2 * PureMath.pi * 200 * Double($0) / rate)) }
        let clip = try #require(AudioClip(sampleRate: rate, channelCount: 1, samples: sine))
        let events = [Sound.custom("a.wav", at: 0), Sound.custom("b.wav", at: 0)]
        let mixed = Sound.render(
            Sound.pattern(events), clips: ["a.wav": clip, "b.wav": clip], rate: rate, frames: 4_000)
        #expect(mixed.allSatisfy { abs($0) <= 1 })
        // After the rising edge of the first peak the sum is scaled whole: one gain over every frame, each cycle's
        // peak at full scale.
        let left = stride(from: 0, to: mixed.count, by: 2).map { mixed[$0] }
        let alone = Sound.render(Sound.pattern([events[0]]), clips: ["a.wav": clip], rate: rate, frames: 4_000)
        let ratios = (40..<left.count).filter { abs(alone[2 * $0]) > 0.1 }.map { left[$0] / (2 * alone[2 * $0]) }
        #expect((ratios.max() ?? 0) - (ratios.min() ?? 1) < 0.001, "gains \(ratios.min() ?? 0)...\(ratios.max() ?? 0)")
        let peaks = stride(from: 40, to: left.count, by: 40).map { left[$0..<($0 + 40)].map(abs).max() ?? 0 }
        #expect(peaks.allSatisfy { abs($0 - 1) < 0.001 }, "\(peaks.prefix(5))")
    }
}
