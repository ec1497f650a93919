// A pattern's sound and its rumble, played by one engine through real drivers: the sound on snd-aloop's
// loopback card (its capture side hears it), the rumble on a uinput virtual pad (kernel CLOCK_MONOTONIC
// records). Per round: how far the sound's onset is from the pad's play (the two should start together), and
// the audio trigger latency, from `start(atTime: 0)` to the sound heard. The baseline, interleaved in the same
// run on another subdevice of the card: the same tone played at once on a bare MixingStream, the least any
// sound on that output can take. Then the feedback story with sound: `AudioService.playFeedback(.success)`
// through HapticManager's engine on the same pad, from the call to the sound heard and to the rumble (the
// target: both within 50 ms of the call). The capture's start is taken as its first frame's time, which the
// audio kernel tests found right to within a few milliseconds under emulation.
import AHAP
import AudioRendering
import Foundation
import HapticTestDevices
import LinuxAudio
import LinuxHaptics
import AppHaptics
import LinuxInput
import Logging
@_spi(Internals) import LinuxSystem

let engineAudioKernelBenchmarks = BenchmarkGroup(
    name: "A pattern's sound and rumble (loopback card, virtual pad)", needsKernel: true
) {
    for path in ["/dev/uinput", "/proc/asound/Loopback"] where !FileManager.default.fileExists(atPath: path) {
        return [
            BenchmarkResult(
                measurement: Measurement(name: "sound onset against rumble", unit: "", samples: []),
                note: "skipped: no \(path) here (scripts/bench runs this group in the VM bench)")
        ]
    }
    return try EngineAudioBench.run() + (await EngineAudioBench.feedback())
}

enum EngineAudioBench {
    /// Rounds per path; HAPTICS_BENCH_AUDIO_ROUNDS overrides.
    static var rounds: Int {
        ProcessInfo.processInfo.environment["HAPTICS_BENCH_AUDIO_ROUNDS"].flatMap(Int.init) ?? 30
    }
    static let warmUpRounds = 2
    static let rate = AudioOutputs.defaultSampleRate
    /// The baseline's subdevice of the card, and the capture side that hears it.
    static let baselinePlayback = "hw:Loopback,0,1"
    static let baselineCapture = "hw:Loopback,1,1"

    /// A 0.1 s tone with a full-strength transient, both at the pattern's start, then 0.15 s of silence.
    static let tone = HapticEvent(
        type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0.8)],
        relativeTime: 0, duration: 0.1)
    static let silence = HapticEvent(
        type: .audioContinuous, parameters: [HapticEventParameter(parameterID: .audioVolume, value: 0)],
        relativeTime: 0.1, duration: 0.15)
    static let pattern = HapticPattern(
        events: [
            tone, silence,
            HapticEvent(
                type: .hapticTransient, parameters: [HapticEventParameter(parameterID: .hapticIntensity, value: 1)],
                relativeTime: 0),
        ], parameters: [])

    struct BenchFailure: Error, CustomStringConvertible {
        let description: String
    }

    /// `AudioService.playFeedback(.success)` on the pad, `rounds` times: call to sound heard, call to rumble.
    @MainActor
    static func feedback() async throws -> [BenchmarkResult] {
        let pad = try VirtualPad(.init(), logger: logger())
        defer { pad.destroy() }
        var options = engineOptions()
        options.audioResourceDirectories = HapticResourceDirectory.locate().map { [$0.directory.path] } ?? []
        let haptics = HapticManager(
            resolver: DefaultHapticResourceResolver(),
            engineProvider: EngineOutputProvider(
                output: .device(.node(pad.eventNode)), options: options, logger: logger()),
            logger: logger())
        guard haptics.engineAvailable else { throw BenchFailure(description: "HapticManager found no engine") }
        let scratch = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("bench-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let generator = HapticFeedbackGenerator(
            output: haptics, settings: FeedbackSettingsStore(fileURL: scratch, logger: logger()), logger: logger())
        // The manager that would play the sound alone (no gamepad): not used here, but quiet like the rest.
        let quiet = logger()
        let audio = AudioManager(
            resolver: DefaultHapticResourceResolver(),
            openOutput: { () throws(AudioDeviceError) -> any AudioOutput in NullAudioOutput() }, logger: quiet)
        let service = AudioService(haptics: generator, audio: audio)
        service.preloadSounds()
        var sound: [Double] = []
        var rumble: [Double] = []
        for round in 0..<(warmUpRounds + rounds) {
            let before = pad.records().count
            var called: UInt64 = 0
            let captured = try LoopbackCapture.capture(frames: rate / 2, rate: rate) {
                called = MonotonicTime.nanoseconds()
                service.playFeedback(.success)
                Thread.sleep(forTimeInterval: 0.45)
            }
            guard let onset = LoopbackCapture.onset(captured.samples, threshold: 0.01) else {
                throw BenchFailure(description: "round \(round): the success sound never reached the card")
            }
            guard let play = pad.records().dropFirst(before).first(where: { $0.event == .play }) else {
                throw BenchFailure(description: "round \(round): the pad never played the success feedback")
            }
            guard round >= warmUpRounds else { continue }
            sound.append(captured.seconds(ofFrame: onset) * 1000 - Double(called) / 1e6)
            rumble.append(play.time.seconds * 1000 - Double(called) / 1e6)
        }
        let heard = Measurement(name: "AudioService.playFeedback(.success) to sound heard", unit: "ms", samples: sound)
        let felt = Measurement(name: "AudioService.playFeedback(.success) to rumble", unit: "ms", samples: rumble)
        let target = 50.0
        return [
            BenchmarkResult(
                measurement: heard,
                note: "target: under \(Int(target)) ms (p99 \(heard.percentile(99) < target ? "meets" : "misses") it)"),
            BenchmarkResult(
                measurement: felt,
                note: "target: under \(Int(target)) ms (p99 \(felt.percentile(99) < target ? "meets" : "misses") it)"),
        ]
    }

    /// An engine on the virtual pad (its own profile), its sound on the loopback card.
    static func engineOptions() -> HapticEngineOptions {
        var options = HapticEngineOptions()
        options.renderProfile = .virtualPad
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        options.audioDevice = LoopbackCapture.playbackDevice
        return options
    }

    static func logger() -> Logger {
        var logger = Logger(label: "haptics-bench.engine-audio")
        logger.logLevel = .error
        return logger
    }

    static func run() throws -> [BenchmarkResult] {
        let pad = try VirtualPad(.init(), logger: logger())
        defer { pad.destroy() }
        let options = engineOptions()
        let engine = HapticEngine(output: .device(.node(pad.eventNode)), options: options, logger: logger())
        try engine.start()
        defer { engine.stop() }
        let bare = try ALSAOutput(
            device: baselinePlayback, sampleRate: rate, bufferSeconds: options.audioBufferSeconds, logger: logger())
        let stream = try MixingStream(output: bare, logger: logger())
        defer {
            stream.close()
            bare.close()
        }
        var offsets: [Double] = []
        var soundLatency: [Double] = []
        var rumbleLatency: [Double] = []
        var baseline: [Double] = []
        for round in 0..<(warmUpRounds + rounds) {
            let measured = round >= warmUpRounds
            // Ours: the engine plays the pattern, sound and rumble.
            let before = pad.records().count
            var called: UInt64 = 0
            let ours = try LoopbackCapture.capture(frames: rate / 2, rate: rate) {
                let player = try engine.makePlayer(with: pattern)
                called = MonotonicTime.nanoseconds()
                try player.start(atTime: 0)
                Thread.sleep(forTimeInterval: 0.4)
            }
            guard let onset = LoopbackCapture.onset(ours.samples) else {
                throw BenchFailure(description: "round \(round): the engine's sound never reached the card")
            }
            guard let play = pad.records().dropFirst(before).first(where: { $0.event == .play }) else {
                throw BenchFailure(description: "round \(round): the pad never played the transient")
            }
            let heard = ours.seconds(ofFrame: onset) * 1000
            // The bare stream: the tone at once.
            var bareCalled: UInt64 = 0
            let raw = try LoopbackCapture.capture(frames: rate * 3 / 10, rate: rate, device: baselineCapture) {
                let mixer = AudioMixer(schedule: AudioSchedule(pattern: pattern), clips: [:], sampleRate: Double(rate))
                bareCalled = MonotonicTime.nanoseconds()
                stream.play(mixer)
                Thread.sleep(forTimeInterval: 0.25)
            }
            guard let bareOnset = LoopbackCapture.onset(raw.samples) else {
                throw BenchFailure(description: "round \(round): the bare stream's tone never reached the card")
            }
            guard measured else { continue }
            offsets.append(heard - play.time.seconds * 1000)
            soundLatency.append(heard - Double(called) / 1e6)
            rumbleLatency.append(play.time.seconds * 1000 - Double(called) / 1e6)
            baseline.append(
                raw.seconds(ofFrame: bareOnset) * 1000 - Double(bareCalled) / 1e6)
        }
        let base = Measurement(name: "bare MixingStream: play() to heard", unit: "ms", samples: baseline)
        let ours = Measurement(name: "engine: start(atTime: 0) to sound heard", unit: "ms", samples: soundLatency)
        let offset = Measurement(name: "sound onset minus rumble (pad's play)", unit: "ms", samples: offsets)
        let spread = Measurement(
            name: "|sound onset minus rumble|", unit: "ms", samples: offsets.map { abs($0) })
        let rumble = Measurement(name: "engine: start(atTime: 0) to rumble", unit: "ms", samples: rumbleLatency)
        return [
            BenchmarkResult(measurement: base, note: "baseline, same card, interleaved"),
            BenchmarkResult(
                measurement: ours, baseline: base.name, ratio: ours.percentile(50) / base.percentile(50),
                note: "the start waits for the output's latency so that sound and rumble begin together"),
            BenchmarkResult(measurement: rumble, note: "the rumble waits for the sound"),
            BenchmarkResult(measurement: offset, note: "signed: negative means the sound came first"),
            BenchmarkResult(
                measurement: spread,
                note: "capture start taken as its first frame's time; \(engine.audioOutputName ?? "no output")"),
        ]
    }
}
