// Feedback service: trigger-to-output of `playFeedback(.success | .pass | .warning)` through
// HapticFeedbackGenerator -> HapticManager -> engine, to the first upload or play a virtual pad records (kernel
// CLOCK_MONOTONIC timestamps), cold and with the generator's prepare() / prepare(feedback) called ahead, each way
// through a manager of its own (a manager keeps what was prepared on it). The baseline, interleaved in the same
// run: a raw EventDevice upload-then-play of one rumble effect on the same pad.
import HapticTestDevices
import Foundation
import LinuxHaptics
import AppHaptics
import LinuxInput
import Logging

let feedbackKernelBenchmarks = BenchmarkGroup(name: "Feedback service on a virtual pad", needsKernel: true) {
    guard FileManager.default.fileExists(atPath: "/dev/uinput") else {
        return [
            BenchmarkResult(
                measurement: Measurement(name: "playFeedback trigger-to-output", unit: "", samples: []),
                note: "skipped: no /dev/uinput here (scripts/bench runs this group in the VM bench)")
        ]
    }
    return try await FeedbackBench.triggerToOutput()
}

@MainActor
enum FeedbackBench {
    /// The target: trigger-to-output under 50 ms.
    static let targetMilliseconds = 50.0
    /// Rounds per path; HAPTICS_BENCH_FEEDBACK_ROUNDS overrides.
    static var rounds: Int {
        ProcessInfo.processInfo.environment["HAPTICS_BENCH_FEEDBACK_ROUNDS"].flatMap(Int.init) ?? 50
    }
    static let warmUpRounds = 2
    /// After a trigger is seen: longer than the longest feedback (warning: taps 150 ms apart plus the stretched
    /// second tap), so its later writes never land in the next trigger's window, and far over the standard
    /// limits' spacing (50 ms, 5 per 500 ms, 10 per second), so the limiter admits every call.
    static let settleAfterTrigger = Duration.milliseconds(350)
    /// Between a prepare and the trigger it prepares for: the upload is done before the clock starts.
    static let prepareLead = Duration.milliseconds(20)
    static let baselinePulseMilliseconds: UInt16 = 20
    /// How long a trigger may take to reach the pad before the bench gives up.
    static let seenTimeoutMicroseconds: Int64 = 5_000_000

    enum Preparation: CaseIterable {
        case none, device, feedback
        var label: String {
            switch self {
            case .none: "cold"
            case .device: "prepare() ahead"
            case .feedback: "prepare(feedback) ahead"
            }
        }
    }

    struct Path: Hashable {
        let feedback: AppFeedback
        let preparation: Preparation
    }

    /// Waits for the pad's first upload or play at or after `start` (µs); its kernel timestamp.
    static func firstWrite(_ pad: VirtualPad, after start: Int64, from index: Int) async throws -> (
        time: Int64, next: Int
    ) {
        let deadline = Clock.microseconds() + seenTimeoutMicroseconds
        while Clock.microseconds() < deadline {
            let records = pad.records()
            if let found = records[min(index, records.count)...].firstIndex(where: {
                ($0.event == .play || $0.event == .upload) && $0.time.microseconds >= start
            }) {
                return (records[found].time.microseconds, found + 1)
            }
            try await Task.sleep(for: .microseconds(200))
        }
        throw EngineBench.BenchFailure(reason: "the pad never saw the feedback")
    }

    /// Milliseconds from each trigger to the pad, per path, and of the baseline; warm-up rounds left out.
    struct Samples {
        /// To the pad's first upload or play.
        var firstWrite: [Path: [Double]] = [:]
        /// To the pad's play, where the output starts.
        var play: [Path: [Double]] = [:]
        var baseline: [Double] = []
    }

    static func triggerToOutput() async throws -> [BenchmarkResult] {
        let logger = EngineBench.logger()
        let pad = try VirtualPad(VirtualPadConfiguration(), logger: logger)
        defer { pad.destroy() }
        let settingsURL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "haptics-bench-feedback-\(getpid()).json")
        defer { try? FileManager.default.removeItem(at: settingsURL) }
        // One manager (with its engine on the pad) and generator per way of preparing: a manager keeps the
        // patterns prepared on it, so with one for all, a feedback prepared in the first round was prepared for
        // every "cold" call after it (until 6 December the bench measured that). The standard limits: the spacing
        // above keeps every call admitted, and the counts below prove it.
        var generators: [Preparation: HapticFeedbackGenerator] = [:]
        for preparation in Preparation.allCases {
            let provider = EngineOutputProvider(
                output: .device(.node(pad.eventNode)), options: EngineBench.padOptions(), logger: logger)
            let manager = HapticManager(
                resolver: DefaultHapticResourceResolver(), engineProvider: provider, logger: logger)
            guard manager.engineAvailable else {
                throw EngineBench.BenchFailure(reason: "the manager found no engine on the virtual pad")
            }
            generators[preparation] = HapticFeedbackGenerator(
                output: manager, settings: FeedbackSettingsStore(fileURL: settingsURL, logger: logger), logger: logger)
        }
        let client = try EventDevice(node: pad.eventNode, logger: logger)
        defer { client.close() }

        let paths = AppFeedback.allCases.flatMap { feedback in
            Preparation.allCases.map { Path(feedback: feedback, preparation: $0) }
        }
        let samples = try await measure(paths, generators, client, pad)
        let expectedPlays = (warmUpRounds + rounds) * paths.count
        let (played, dropped) = generators.values.reduce((0, 0)) { ($0.0 + $1.playedCount, $0.1 + $1.droppedCount) }
        guard dropped == 0, played == expectedPlays else {
            throw EngineBench.BenchFailure(
                reason: "the rate limiters dropped \(dropped) and admitted \(played) of \(expectedPlays)")
        }
        return results(paths, samples, played: played, dropped: dropped)
    }

    /// Every path once per round, with the baseline, so a slow stretch of the machine hits them alike.
    static func measure(
        _ paths: [Path], _ generators: [Preparation: HapticFeedbackGenerator], _ client: EventDevice,
        _ pad: VirtualPad
    ) async throws -> Samples {
        var samples = Samples()
        var index = 0
        for round in 0..<(warmUpRounds + rounds) {
            let counted = round >= warmUpRounds
            for path in paths {
                guard let generator = generators[path.preparation] else { continue }
                let triggered = try await trigger(path, generator, pad, from: index)
                index = triggered.next
                if counted {
                    samples.firstWrite[path, default: []].append(triggered.seen)
                    samples.play[path, default: []].append(triggered.played)
                }
                try await Task.sleep(for: settleAfterTrigger)
            }
            let baseline = try await baselinePulse(client, pad, from: index)
            index = baseline.next
            if counted { samples.baseline.append(baseline.milliseconds) }
        }
        return samples
    }

    /// One playFeedback on `path`, prepared as the path says: milliseconds to the pad's first upload or play
    /// and to its play, and the index of the pad record after that play.
    static func trigger(
        _ path: Path, _ generator: HapticFeedbackGenerator, _ pad: VirtualPad, from index: Int
    ) async throws -> (seen: Double, played: Double, next: Int) {
        switch path.preparation {
        case .none: break
        case .device: generator.prepare()
        case .feedback: generator.prepare(path.feedback.feedback)
        }
        if path.preparation != .none { try await Task.sleep(for: prepareLead) }
        let start = Clock.microseconds()
        generator.playFeedback(path.feedback)
        let seen = try await firstWrite(pad, after: start, from: index)
        // The output starts at the play; on a cold path an upload comes before it.
        let played = try await EngineBench.padPlay(pad, after: start, from: seen.next - 1)
        return (Double(seen.time - start) / 1000, Double(played.time - start) / 1000, played.next)
    }

    /// The baseline: a raw upload then play of one rumble effect, milliseconds to the pad's play, and the index
    /// of the pad record after it. Waits for the pulse to settle and erases the effect.
    static func baselinePulse(
        _ client: EventDevice, _ pad: VirtualPad, from index: Int
    ) async throws -> (milliseconds: Double, next: Int) {
        let start = Clock.microseconds()
        let effect = try client.uploadEffect(
            .rumble(strong: 1, weak: 1, lengthMilliseconds: baselinePulseMilliseconds))
        try effect.play()
        let seen = try await firstWrite(pad, after: start, from: index)
        // Upload then play: the pad records the upload first; the output starts with the play.
        let played = try await EngineBench.padPlay(pad, after: start, from: seen.next - 1)
        try await Task.sleep(for: settleAfterTrigger)
        try effect.erase()
        return (Double(played.time - start) / 1000, played.next)
    }

    /// The baseline's figures, then each path's with its ratio to the baseline and its verdict on the target,
    /// then the rate limiter's counts.
    static func results(_ paths: [Path], _ samples: Samples, played: Int, dropped: Int) -> [BenchmarkResult] {
        let baseline = Measurement(
            name: "raw EventDevice upload then play, call -> pad sees play", unit: "ms", samples: samples.baseline)
        var results = [BenchmarkResult(measurement: baseline, note: "baseline, same pad, interleaved")]
        for path in paths {
            let ours = Measurement(
                name: "playFeedback(.\(path.feedback.rawValue)), \(path.preparation.label) -> pad's first upload/play",
                unit: "ms",
                samples: samples.firstWrite[path, default: []])
            let toPlay = Measurement(name: "", unit: "ms", samples: samples.play[path, default: []])
            let verdict =
                toPlay.maximum < targetMilliseconds
                ? "pass" : (toPlay.percentile(99) < targetMilliseconds ? "pass at p99, max over" : "FAIL")
            results.append(
                BenchmarkResult(
                    measurement: ours, baseline: "the baseline", ratio: ours.percentile(50) / baseline.percentile(50),
                    note: String(
                        format: "p99 ratio %.2f; to the play: p50 %.3f, p99 %.3f, max %.3f ms",
                        ours.percentile(99) / baseline.percentile(99),
                        toPlay.percentile(50), toPlay.percentile(99), toPlay.maximum)
                        + "; play under \(Int(targetMilliseconds)) ms: \(verdict)"))
        }
        results.append(
            BenchmarkResult(
                measurement: Measurement(
                    name: "calls admitted / dropped by the standard rate limits", unit: "",
                    samples: [Double(played)]),
                note: "\(dropped) dropped"))
        return results
    }
}
