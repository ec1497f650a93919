// Audio rendering: the cost of one second of sound at 48 kHz, for a plain tone (the baseline) and for a busy
// pattern (eight overlapping tones with pan, pitch and brightness, volume and pitch curves, and a looped clip
// read at a raised pitch), and for a hostile one (10,000 tones at once, of which the mixer sounds its most, 32).
// A real-time factor below 1 means rendering keeps up with playing.
import AHAP
import AudioRendering

let audioBenchmarks = BenchmarkGroup(name: "Audio") {
    let rate = 48_000.0
    let clip = AudioBenchmarkPatterns.clip(rate: rate)
    let plain = HapticPattern(
        events: [HapticEvent(type: .audioContinuous, relativeTime: 0, duration: 1)], parameters: [], parameterCurves: []
    )
    let busy = AudioBenchmarkPatterns.busy()
    let crowded = HapticPattern(
        events: (0..<10_000).map { HapticEvent(type: .audioContinuous, relativeTime: Double($0) * 1e-5, duration: 1) },
        parameters: [], parameterCurves: [])
    let plainSeconds = measure("1 s at 48 kHz, one tone", iterations: 10) {
        AudioBenchmarkPatterns.render(plain, clips: [:], rate: rate)
    }
    let busySeconds = measure("1 s at 48 kHz, 8 tones + looped clip, curves", iterations: 10) {
        AudioBenchmarkPatterns.render(busy, clips: clip.map { ["loop.wav": $0] } ?? [:], rate: rate)
    }
    let crowdedSeconds = measure("1 s at 48 kHz, 10,000 tones at once", iterations: 3) {
        AudioBenchmarkPatterns.render(crowded, clips: [:], rate: rate)
    }
    return [
        BenchmarkResult(
            measurement: plainSeconds, note: "real-time factor \(format(plainSeconds.percentile(50) / 1000))"),
        BenchmarkResult(
            measurement: busySeconds, baseline: plainSeconds.name,
            ratio: busySeconds.percentile(50) / plainSeconds.percentile(50),
            note: "real-time factor \(format(busySeconds.percentile(50) / 1000))"),
        BenchmarkResult(
            measurement: crowdedSeconds, baseline: plainSeconds.name,
            ratio: crowdedSeconds.percentile(50) / plainSeconds.percentile(50),
            note: "real-time factor \(format(crowdedSeconds.percentile(50) / 1000))"),
    ]
}

enum AudioBenchmarkPatterns {
    /// 0.2 s of stereo sawteeth at two periods.
    static func clip(rate: Double) -> AudioClip? {
        var samples: [Float] = []
        for frame in 0..<Int(rate / 5) {
            samples.append(Float(frame % 97) / 97)
            samples.append(Float(frame % 89) / 89)
        }
        return AudioClip(sampleRate: rate, channelCount: 2, samples: samples)
    }

    static func busy() -> HapticPattern {
        var events: [HapticEvent] = (0..<8).map { (index: Int) -> HapticEvent in
            HapticEvent(
                type: .audioContinuous,
                parameters: [
                    HapticEventParameter(parameterID: .audioPan, value: Double(index) / 4 - 1),
                    HapticEventParameter(parameterID: .audioPitch, value: Double(index) / 8 - 0.5),
                    HapticEventParameter(parameterID: .audioBrightness, value: Double(index) / 8),
                    HapticEventParameter(parameterID: .attackTime, value: 0.3),
                ],
                relativeTime: Double(index) * 0.01, duration: 0.9)
        }
        events.append(
            HapticEvent(
                audioWaveformPath: "loop.wav", parameters: [HapticEventParameter(parameterID: .audioPitch, value: 0.3)],
                relativeTime: 0, duration: 1, loopEnabled: true))
        let curves = [HapticDynamicParameter.ID.audioVolumeControl, .audioPitchControl].map { id in
            HapticParameterCurve(
                parameterID: id,
                controlPoints: (0...10).map { .init(relativeTime: Double($0) / 10, value: Double($0 % 2) * 0.5) },
                relativeTime: 0)
        }
        return HapticPattern(events: events, parameters: [], parameterCurves: curves)
    }

    /// Renders the whole pattern (at most 1 s) in 480-frame periods, as an output is fed.
    static func render(_ pattern: HapticPattern, clips: [AudioWaveform: AudioClip], rate: Double) {
        let schedule = AudioSchedule(pattern: pattern, clipDurations: clips.mapValues(\.duration))
        var mixer = AudioMixer(schedule: schedule, clips: clips, sampleRate: rate)
        var buffer = [Float](repeating: 0, count: 2 * 480)
        for _ in 0..<Int(rate) / 480 { mixer.render(into: &buffer) }
    }
}
