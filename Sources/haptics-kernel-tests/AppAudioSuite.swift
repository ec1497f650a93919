// The app's sound through a real driver: AudioManager on snd-aloop's loopback card. Its music cross-fade must
// keep the power constant with no gap and last the half second it is meant to, as heard on the capture side;
// the card unbound (a USB sound card unplugged) must interrupt it, and bound again resume the music. A feedback
// with sound, played through HapticManager's engine, must schedule its sound and its haptic for one instant.
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
import Synchronization

enum AppAudioSuite {
    static let suite: KernelTestSuite = KernelTestSuite(
        name: "app-audio", requires: [.sndAloop, .uinput],
        tests: [
            KernelTest(name: "app-audio/music-cross-fades-at-constant-power") {
                try await StallWitness.againAfterAGuestStall(crossFade)
            },
            KernelTest(name: "app-audio/feedback-sound-and-haptic-start-together") {
                try await AudioSuite.againAfterAGuestStall(feedbackWithSound)
            },
            // Last: it unbinds the card and binds it again.
            KernelTest(name: "app-audio/card-gone-interrupts-and-its-return-resumes", body: cardComesBack),
        ])

    static let rate = AudioOutputs.defaultSampleRate

    /// A folder with `left.wav` (0.5 on the left) and `right.wav` (0.5 on the right), 2 s each at 48 kHz.
    static func sounds() throws -> URL {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("app-audio-\(getpid())")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        for (name, left, right) in [("left", Float(0.5), Float(0)), ("right", 0, 0.5)] {
            let clip = AudioClip(
                sampleRate: Double(rate), channelCount: 2,
                samples: Array(repeating: [left, right], count: 2 * rate).flatMap { $0 })!
            try AudioFile.write(clip, to: folder.appendingPathComponent("\(name).wav").path, format: .wavFloat)
        }
        return folder
    }

    /// The outputs a manager opened, kept for their underruns.
    final class OpenedOutputs: Sendable {
        private let outputs = Mutex<[ALSAOutput]>([])
        func append(_ output: ALSAOutput) { outputs.withLock { $0.append(output) } }
        /// Underruns the outputs recovered from, all told.
        var underruns: Int { outputs.withLock { $0.map(\.xrunCount).reduce(0, +) } }
    }

    /// A manager whose sound plays on the loopback; each output it opens is kept in `opened` when given.
    @MainActor
    static func manager(folder: URL, opened: OpenedOutputs? = nil) -> AudioManager {
        let logger = AudioSuite.logger()
        return AudioManager(
            resolver: HapticResourceDirectory(directory: folder),
            openOutput: { () throws(AudioDeviceError) -> any AudioOutput in
                let output = try ALSAOutput(
                    device: LoopbackCapture.playbackDevice, sampleRate: rate,
                    bufferSeconds: AudioSuite.captureSafeBuffer,
                    logger: logger)
                opened?.append(output)
                return output
            }, logger: logger)
    }

    /// Music on the left, then a cross-fade into music on the right: from the left's full level to the right's,
    /// left² + right² stays at 0.25 (no gap, no dip) and the fade lasts `AudioManager.crossFadeSeconds`; either
    /// off is a `TimingFailure`, explained by the stall that makes snd-aloop's capture differ from what was played
    /// (`AudioSuite.requireFadeLength`).
    static func crossFade() async throws {
        let folder = try sounds()
        defer { try? FileManager.default.removeItem(at: folder) }
        let opened = OpenedOutputs()
        let manager = await manager(folder: folder, opened: opened)
        // The output opens on a thread of its own and is taken on the main actor, which the capture's closure
        // holds: it is opened before.
        try await waitOnMainActor("the sound output to open") { manager.leadNanoseconds != nil }
        let captured = try await MainActor.run {
            defer { manager.stopMusic(fadeOut: 0) }
            return try LoopbackCapture.capture(frames: rate * 3 / 2, rate: rate) {
                manager.playMusic("left")
                Thread.sleep(forTimeInterval: 0.4)
                manager.playMusic("right")
                Thread.sleep(forTimeInterval: 0.9)
            }
        }
        let frames = stride(from: 0, to: captured.samples.count - 1, by: 2).map {
            (left: captured.samples[$0], right: captured.samples[$0 + 1])
        }
        // The first track's own fade-in (20 ms) is over once the left side is at its level.
        guard let full = frames.firstIndex(where: { $0.left >= 0.5 - 1e-6 }),
            let fadeStart = frames[full...].firstIndex(where: { $0.right > 0 }),
            let fadeEnd = frames[fadeStart...].firstIndex(where: { $0.right >= 0.4999 && $0.left == 0 })
        else { throw TestFailure(reason: "no cross-fade from left to right in the capture") }
        var worst = 0.0
        for frame in frames[full..<fadeEnd] {
            worst = max(worst, abs(Double(frame.left * frame.left + frame.right * frame.right) - 0.25))
        }
        let seconds = Double(fadeEnd - fadeStart) / Double(rate)
        print("  cross-fade \(AudioSuite.tenths(seconds * 1000)) ms; left² + right² off 0.25 by at most \(worst)")
        let reason = "the power left 0.25 by \(worst) during the cross-fade (a gap or a dip)"
        // A gap, silence in the middle, is what an underrun the output recovered from leaves: the whole guest
        // standing still for half the buffer explains it. Any other gap or dip is the ring's stale frames heard
        // after a stall longer than the writer's queue (the silence before the music, the first track's fade-in:
        // `AudioSuite.requireFadeLength`).
        if worst >= 1e-4 {
            let gap = frames[full..<fadeEnd].contains { Double($0.left * $0.left + $0.right * $0.right) < 1e-4 }
            throw TimingFailure(
                reason: reason,
                explainingStall: gap && opened.underruns > 0
                    ? AudioSuite.stallExcusingAnUnderrun : AudioSuite.stallExcusingADifference)
        }
        let fadeFrames = Int((AudioManager.crossFadeSeconds * Double(rate)).rounded())
        // The output recovered from an underrun: ALSA dropped what was queued in its ring, and snd-aloop's capture
        // heard stale ring frames of the fade instead (docs/audio.md), so the fade's length on the capture is off
        // by up to the buffer, with no gap. The whole guest standing still for half the buffer explains it.
        let underruns = opened.underruns
        if underruns > 0, abs(fadeEnd - fadeStart - fadeFrames) >= fadeFrames / 50 {
            throw TimingFailure(
                reason: "the fade lasted \(fadeEnd - fadeStart) frames, not \(fadeFrames), across \(underruns) "
                    + "underruns of the output",
                explainingStall: AudioSuite.stallExcusingAnUnderrun)
        }
        try AudioSuite.requireFadeLength(
            fadeEnd - fadeStart, asked: fadeFrames,
            ringFrames: Int((AudioSuite.captureSafeBuffer * Double(rate)).rounded()))
    }

    /// `AudioService.playFeedback(.success)` through HapticManager's engine on a virtual pad: the engine must
    /// schedule the success sound and the heavy impact for one instant (`EngineAudioSuite.requireOneInstant`),
    /// the sound must come back from the card sample for sample as the engine renders it with no underrun on the
    /// ALSA output (heard whole, so started on time, not skipped into), and the pad's motors must run. How
    /// far the sound's onset was heard from the motors' start is printed; the benchmark group "A pattern's sound
    /// and rumble" (haptics-bench) measures it.
    static func feedbackWithSound() async throws {
        let pad = try VirtualPadSuite.makePad()
        defer { pad.destroy() }
        let haptics = URL(fileURLWithPath: "Haptics")
        let observed = EngineAudioSuite.Observed()
        var options = HapticEngineOptions()
        options.renderProfile = .virtualPad
        options.monitorSource = DeviceDiscovery.udevDaemonIsRunning ? .udev : .kernel
        options.audioDevice = LoopbackCapture.playbackDevice
        options.audioBufferSeconds = AudioSuite.captureSafeBuffer
        observed.observe(&options, bufferSeconds: AudioSuite.captureSafeBuffer)
        options.audioResourceDirectories = [haptics.path]
        let provider = EngineOutputProvider(
            output: .device(.node(pad.eventNode)), options: options, logger: VirtualPadSuite.logger())
        // What the engine plays for the success feedback: its pattern's sound, rendered from the same file.
        let pattern = AppFeedback.success.feedback.pattern(withSound: .success)
        let clip = try AudioFile.load(haptics.appendingPathComponent("success.wav").path, sampleRate: rate)
        let schedule = AudioSchedule(pattern: pattern, clipDurations: ["success.wav": clip.duration])
        var mixer = AudioMixer(schedule: schedule, clips: ["success.wav": clip], sampleRate: Double(rate))
        var rendered = [Float](repeating: 0, count: 2 * (clip.frameCount + rate / 10))
        mixer.render(into: &rendered)
        let before = pad.records().count
        let called = Lock<UInt64>(0)
        let captured = try await MainActor.run {
            let hapticManager = HapticManager(
                resolver: HapticResourceDirectory(directory: haptics), engineProvider: provider,
                logger: VirtualPadSuite.logger())
            let settings = FeedbackSettingsStore(
                fileURL: URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("feedback-\(getpid())"),
                logger: VirtualPadSuite.logger())
            let generator = HapticFeedbackGenerator(
                output: hapticManager, settings: settings, logger: VirtualPadSuite.logger())
            // The sound rides in the haptic's pattern; the manager that would play it alone stays off the card.
            let alone = AudioManager(
                resolver: HapticResourceDirectory(directory: haptics),
                openOutput: { () throws(AudioDeviceError) -> any AudioOutput in NullAudioOutput() },
                logger: AudioSuite.logger())
            let service = AudioService(haptics: generator, audio: alone)
            try require(hapticManager.engineAvailable, "the manager did not find the pad")
            service.preloadSounds()
            return try LoopbackCapture.capture(frames: rendered.count / 2 + rate / 2, rate: rate) {
                called.withLock { $0 = MonotonicTime.nanoseconds() }
                service.playFeedback(.success)
                Thread.sleep(forTimeInterval: Double(rendered.count / 2) / Double(rate) + 0.3)
            }
        }
        let planned = try observed.requireOneInstant(pattern, "the success feedback")
        let onset = try observed.explainingUnderruns(since: called.withLock { $0 }) {
            try AudioSuite.check(captured.samples, against: rendered, xruns: observed.xruns)
        }
        guard let felt = EngineAudioSuite.firstRumble(on: pad, after: before) else {
            throw TestFailure(reason: "the pad's motors never ran for the success feedback's impact")
        }
        let offset = (captured.seconds(ofFrame: onset) - felt.seconds) * 1000
        print(
            "  sound and impact scheduled from one instant (impact at +\(planned * 1000) ms); success sound onset heard "
                + "\(AudioSuite.tenths(offset)) ms after the pad's motors started")
    }

    /// Music plays; the card is unbound: the manager is interrupted, the music still counted as playing;
    /// bound again: it resumes, and the music is heard.
    static func cardComesBack() async throws {
        try LoopbackCard.requireUnbindable()
        let folder = try sounds()
        defer { try? FileManager.default.removeItem(at: folder) }
        let manager = await manager(folder: folder)
        await manager.playMusic("left")
        try await Task.sleep(for: .milliseconds(200))
        try LoopbackCard.unbind()
        do {
            try await waitOnMainActor("the manager to be interrupted") { manager.isInterrupted }
            try await require(manager.isPlaying, "interrupted, the music is paused, not stopped")
        } catch {
            try? LoopbackCard.bind()
            throw error
        }
        try LoopbackCard.bind()
        try await waitOnMainActor("the manager to resume") { !manager.isInterrupted }
        let captured = try LoopbackCapture.capture(frames: rate / 4, rate: rate) { Thread.sleep(forTimeInterval: 0.3) }
        await manager.stopMusic(fadeOut: 0)
        try require(captured.samples.contains(0.5), "the music is not in the capture after the card came back")
    }

    /// Polls `condition` on the main actor every 10 ms, so its tasks run in between; fails after 20 s (a hang
    /// guard, not a timing requirement).
    static func waitOnMainActor(_ what: String, _ condition: @MainActor () -> Bool) async throws {
        let deadline = MonotonicTime.nanoseconds() + 20_000_000_000
        while await !condition() {
            try require(MonotonicTime.nanoseconds() < deadline, "gave up waiting for \(what) after 20 s")
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}
